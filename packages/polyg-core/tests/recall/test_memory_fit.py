"""Reading a memory sentence by sentence: the matched sentence, and a plan told from a deed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import anyio
import pytest
from polyg_core.memory import Memory
from polyg_core.recall.lexical import Tokenizer
from polyg_core.recall.memories import FusionWeights
from polyg_core.recall.memory_fit import (
    asked_words,
    asks_what_was_done,
    matched_sentence,
    sentences_of,
    tells_a_plan,
    tells_it_was_missed,
)

from ..conftest import add_said

pytestmark = pytest.mark.anyio

NOW = datetime(2026, 3, 20, 12, 0, tzinfo=UTC)


async def _add(memory: Memory, text: str, *, days_ago: float) -> str:
    return await add_said(memory, text, NOW - timedelta(days=days_ago))


def test_sentences_leave_the_speaker_out_and_keep_a_caption_apart() -> None:
    assert sentences_of("Ilse: Look at this! I glazed it myself. [shares a photo of a jug]") == [
        "Look at this!",
        "I glazed it myself.",
        "shares a photo of a jug",
    ]
    assert sentences_of("no speaker here") == ["no speaker here"]


def test_the_matched_sentence_holds_the_most_asked_weight_and_a_question_counts_half() -> None:
    tokens = Tokenizer()
    names = tokens("Ilse which did")
    asked = asked_words("Which kiln did Ilse fire?", tokens, lambda t: 1.0, leave_out=names)
    assert set(asked.weights) == {"kiln", "fire"}
    sentence, share = matched_sentence(
        "Ilse: Nice day. I fired the kiln at dawn. Did you see it?", asked, tokens
    )
    assert sentence == "I fired the kiln at dawn."
    assert share == pytest.approx(1.0)
    # The same words asked back hold only half: the question holds no answer.
    _, asked_back = matched_sentence("Bruno: Did you fire the kiln?", asked, tokens)
    assert asked_back == pytest.approx(0.5)


def test_a_question_about_a_deed_is_told_from_one_about_a_plan() -> None:
    assert asks_what_was_done("When did Ilse go to choir camp?")
    assert asks_what_was_done("Where has Bruno sailed?")
    assert asks_what_was_done("What tools has Noor borrowed?")
    assert not asks_what_was_done("What did Ilse plan to do over the summer?")
    assert not asks_what_was_done("When is Bruno going to sail?")
    assert not asks_what_was_done("What does Noor like?")


def test_a_plan_is_told_from_a_deed() -> None:
    assert tells_a_plan("We're thinking about going to choir camp next month.")
    assert tells_a_plan("I'm going to a ceramics fair this month.")
    assert tells_a_plan("Gonna sail to the island tomorrow!")
    assert not tells_a_plan("I went to choir camp last week.")
    # Told as a memory of what happened, a "will" does not make it a plan.
    assert not tells_a_plan("I'll always remember the regatta we sailed last year.")
    assert not tells_a_plan("The kiln is hot.")


def test_a_deed_that_did_not_happen_is_told() -> None:
    assert tells_it_was_missed("The fair was on Saturday. I missed it, sadly.")
    assert tells_it_was_missed("Ilse: We couldn't make it to the regatta this year.")
    assert tells_it_was_missed("I had to skip the choir camp.")
    assert not tells_it_was_missed("I went to the fair on Saturday and missed nobody.")
    assert not tells_it_was_missed("I miss the old choir.")


async def test_asked_what_was_done_a_memory_saying_it_was_missed_gives_way(
    memory: Memory,
) -> None:
    with anyio.fail_after(60):
        missed = await _add(
            memory,
            "Bruno: The harbour regatta was last Sunday, the harbour regatta is huge! "
            "I missed it though.",
            days_ago=12,
        )
        went = await _add(memory, "Bruno: I sailed in the regatta two weeks ago.", days_ago=30)
        await _add(memory, "Ilse: The library opens late on Thursdays.", days_ago=25)
        question = "When did Bruno go to the harbour regatta?"
        memory.pipeline.fusion_weights = FusionWeights(plan=1.0)
        plain = await memory.recall(question, reference_time=NOW, retrievers=["lexical", "dense"])
        memory.pipeline.fusion_weights = FusionWeights()
        ranked = await memory.recall(question, reference_time=NOW, retrievers=["lexical", "dense"])
    assert plain.memories[0].uuid == missed
    assert [m.uuid for m in ranked.memories[:2]] == [went, missed]


async def test_asked_what_was_done_the_deed_ranks_above_the_plan(memory: Memory) -> None:
    # Four memories: the plan shares more of the asked words, the deed says it happened.
    with anyio.fail_after(60):
        plan = await _add(
            memory,
            "Ilse: The kids love choir camp! We're thinking about going to choir camp "
            "at the lake next month.",
            days_ago=40,
        )
        deed = await _add(memory, "Ilse: I went to choir camp with the kids last week.", days_ago=9)
        await _add(memory, "Bruno: The allotment needs new fencing.", days_ago=20)
        await _add(memory, "Ilse: The library opens late on Thursdays.", days_ago=25)
        question = "When did Ilse go to choir camp?"
        memory.pipeline.fusion_weights = FusionWeights(plan=1.0)
        plain = await memory.recall(question, reference_time=NOW, retrievers=["lexical", "dense"])
        memory.pipeline.fusion_weights = FusionWeights()
        ranked = await memory.recall(question, reference_time=NOW, retrievers=["lexical", "dense"])
        about_the_plan = "What is Ilse planning to do at choir camp?"
        planned = await memory.recall(
            about_the_plan, reference_time=NOW, retrievers=["lexical", "dense"]
        )
        memory.pipeline.fusion_weights = FusionWeights(plan=1.0)
        planned_plain = await memory.recall(
            about_the_plan, reference_time=NOW, retrievers=["lexical", "dense"]
        )
    assert plain.memories[0].uuid == plan
    assert [m.uuid for m in ranked.memories[:2]] == [deed, plan]
    # Asked about the plan itself, the plan keeps its place.
    assert [m.uuid for m in planned.memories] == [m.uuid for m in planned_plain.memories]
    assert [m.score for m in planned.memories] == [m.score for m in planned_plain.memories]
