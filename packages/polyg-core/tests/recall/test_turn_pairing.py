"""Which turn of an exchange answers: names in a question, question words, replies."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import anyio
import pytest
from polyg_core.memory import Memory
from polyg_core.recall.memories import (
    FusionWeights,
    capitalised_names,
    only_asks,
    without_listeners,
)

from ..conftest import add_said

pytestmark = pytest.mark.anyio

NOW = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)


async def _add(memory: Memory, text: str, *, minutes_ago: float) -> str:
    return await add_said(memory, text, NOW - timedelta(minutes=minutes_ago))


async def _ranked(memory: Memory, question: str, *retrievers: str) -> list[str]:
    result = await memory.recall(question, reference_time=NOW, retrievers=list(retrievers))
    return [m.uuid for m in result.memories]


def test_a_word_that_opens_the_question_is_no_name() -> None:
    def tokens(word: str) -> list[str]:
        return [word.lower()]

    assert capitalised_names("How does Noor unwind?", tokens) == ["Noor"]
    assert capitalised_names("Did Kemal Droste eat meat?", tokens) == ["Kemal Droste"]
    assert capitalised_names("What did Noor tell Bram about Lisbon?", tokens) == [
        "Noor",
        "Bram",
        "Lisbon",
    ]
    assert capitalised_names("According to Ines, which tram is best?", tokens) == ["Ines"]


async def test_a_later_memory_sharing_only_a_question_word_is_no_update(memory: Memory) -> None:
    # "how" and "now" in Oren's later note made it an update of Noor's answer when "How"
    # (the question's first word) was taken for a name, and "how" for an asked word.
    with anyio.fail_after(60):
        answer = await _add(
            memory, "Noor: A long swim after work is how I unwind.", minutes_ago=9000
        )
        later = await _add(memory, "Oren: Now I know how to fix the bike chain.", minutes_ago=60)
        await _add(memory, "Oren: The allotment needs new fencing.", minutes_ago=5000)
        ranked = await _ranked(memory, "How does Noor unwind?", "lexical", "dense", "entity")
    assert ranked.index(answer) < ranked.index(later)


async def test_the_asked_speakers_answer_to_anothers_question_ranks_first(memory: Memory) -> None:
    # Oren's question repeats what is asked about; Talia's reply says it first-hand.
    with anyio.fail_after(60):
        await _add(memory, "Talia: Look what came out of the oven this morning!", minutes_ago=63)
        remark = await _add(
            memory,
            "Oren: That rye loaf looks amazing, the crust is so dark. Did you make it?",
            minutes_ago=62,
        )
        reply = await _add(
            memory, "Talia: Yes! Second try, the first one collapsed.", minutes_ago=61
        )
        await _add(memory, "Talia: The allotment needs new fencing.", minutes_ago=9000)
        await _add(memory, "Oren: My sister visits in June.", minutes_ago=8000)
        ranked = await _ranked(
            memory,
            "Did Talia bake the rye loaf?",
            "lexical",
            "dense",
            "entity",
            "neighbours",
        )
    assert ranked[0] == reply
    assert ranked.index(reply) < ranked.index(remark)


async def test_a_remark_that_asks_nothing_lifts_no_next_turn(memory: Memory) -> None:
    # Oren's praise reacts to what Talia said before it; her next turn says nothing of the
    # race, so her own account stays first.
    with anyio.fail_after(60):
        account = await _add(
            memory, "Talia: I paddled the harbour race on Saturday, ninth of forty.", minutes_ago=63
        )
        await _add(
            memory, "Oren: That harbour race sounds great, Talia, well done!", minutes_ago=62
        )
        nxt = await _add(memory, "Talia: Thanks! Now I need a long nap.", minutes_ago=61)
        await _add(memory, "Talia: The allotment needs new fencing.", minutes_ago=9000)
        ranked = await _ranked(
            memory, "Which race did Talia paddle?", "lexical", "dense", "entity", "neighbours"
        )
    assert ranked[0] == account
    assert nxt not in ranked[:2]


async def test_a_reply_that_asks_back_keeps_its_place_as_the_reply(memory: Memory) -> None:
    # Noor answers Oren's question and asks the same back: ranked as the reply to his
    # question, her answer's closing question does not push it down.
    with anyio.fail_after(60):
        asked = await _add(memory, "Oren: Congrats on the flat! Any pets, Noor?", minutes_ago=62)
        reply = await _add(
            memory,
            "Noor: Thanks! Yes, Pebble, an old tortoise, he sleeps all winter. And your pets?",
            minutes_ago=61,
        )
        await _add(memory, "Noor: My neighbour's pets bark all night.", minutes_ago=4000)
        await _add(memory, "Noor: The allotment needs new fencing.", minutes_ago=9000)
        result = await memory.recall(
            "What pets does Noor have?",
            reference_time=NOW,
            retrievers=["lexical", "dense", "entity", "neighbours"],
        )
    found = {m.uuid: m for m in result.memories}
    # Its score is the reply's share of the question it answers, not its own match cut down.
    assert "neighbours" in found[reply].retrievers
    assert found[reply].score > found[asked].score


def test_a_speaker_named_as_listener_or_owner_is_not_the_one_asked_about() -> None:
    speakers = ["ines", "bram"]
    assert without_listeners("What film did Ines suggest to Bram?", speakers) == ["ines"]
    assert without_listeners("What does Ines think of Bram's new job?", speakers) == ["ines"]
    assert without_listeners("What did Bram share with Ines in May?", speakers) == ["bram"]
    assert without_listeners("What did Ines and Bram cook?", speakers) == speakers
    assert without_listeners("What might Ines say Bram is like?", speakers) == speakers
    # Only listeners named: nobody is left out.
    assert without_listeners("Who talked to Ines and to Bram?", speakers) == speakers


async def test_what_one_speaker_recommended_to_another_is_in_the_recommenders_words(
    memory: Memory,
) -> None:
    # Bram, the listener, echoes the asked words; Ines's own turn holds her recommendation.
    with anyio.fail_after(60):
        told = await _add(
            memory,
            "Ines: Bram, watch The Salt Road, a film that changed how I cook.",
            minutes_ago=9000,
        )
        await _add(memory, "Bram: Thanks, I'll look for it.", minutes_ago=8999)
        echo = await _add(memory, "Bram: Ines, that film was great, thanks!", minutes_ago=3000)
        await _add(memory, "Ines: The allotment needs new fencing.", minutes_ago=5000)
        await _add(memory, "Bram: The train was late again.", minutes_ago=5500)
        question = "What film did Ines suggest to Bram?"
        retrievers = ("lexical", "dense", "entity", "neighbours")
        memory.pipeline.fusion_weights = FusionWeights(other_author=1.0)
        plain = await _ranked(memory, question, *retrievers)
        memory.pipeline.fusion_weights = FusionWeights()
        ranked = await _ranked(memory, question, *retrievers)
    # Bram's echo holds more of the asked words; as the listener's, it is second-hand.
    assert plain.index(echo) < plain.index(told)
    assert ranked.index(told) < ranked.index(echo)


def test_a_shared_photos_caption_is_not_something_said() -> None:
    assert only_asks(
        "Mina: Lovely! Got any bowls you treasure? [shares a photo of bowls on a shelf]"
    )
    assert not only_asks("Mina: I glazed six bowls this week. [shares a photo of bowls on a shelf]")


async def test_the_asked_speakers_closing_question_to_someone_else_is_not_about_them(
    memory: Memory,
) -> None:
    # Noor's matched words are in her question to Oren; what she does is in her own account.
    with anyio.fail_after(60):
        asks = await _add(
            memory,
            "Noor: Great news, Oren! Loving the sound of the new job. Any hobbies you're trying?",
            minutes_ago=3000,
        )
        own = await _add(
            memory, "Noor: I go bouldering twice a week, my favourite pastime.", minutes_ago=9000
        )
        await _add(memory, "Noor: The allotment needs new fencing.", minutes_ago=5000)
        await _add(memory, "Oren: My sister visits in June.", minutes_ago=6000)
        ranked = await _ranked(
            memory, "What hobbies does Noor have?", "lexical", "dense", "entity", "neighbours"
        )
    assert ranked.index(own) < ranked.index(asks)


async def test_a_when_question_with_a_window_lifts_what_is_dated_inside_it(
    memory: Memory,
) -> None:
    # Both were said in April and both say when; only one dates a camping trip in April.
    with anyio.fail_after(60):
        inside = await _add(
            memory,
            "Ilse: We went camping by the lake last weekend, so peaceful.",
            minutes_ago=14400,
        )
        other_year = await _add(
            memory,
            "Ilse: Our camping trip last year was the best one, by the lake in the hills.",
            minutes_ago=20000,
        )
        await _add(memory, "Ilse: The allotment needs new fencing.", minutes_ago=16000)
        await _add(memory, "Oren: My sister visits in June.", minutes_ago=6000)
        result = await memory.recall(
            "When did Ilse go camping in April?",
            reference_time=NOW,
            retrievers=["lexical", "dense", "entity", "time"],
        )
    ranked = [m.uuid for m in result.memories]
    assert ranked.index(inside) < ranked.index(other_year)
