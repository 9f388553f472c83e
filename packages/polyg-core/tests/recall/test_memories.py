"""Recall's memory retrievers, their fusion, and that recall writes nothing."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
import redis.asyncio as aredis
from polyg_bench.dataset import load_dataset
from polyg_bench.retrieval import run_retrieval
from polyg_core.errors import EmbeddingMismatch, InvalidInput
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.recall.catalogue import author_of, without_names
from polyg_core.recall.lexical import joined_pairs
from polyg_core.recall.memories import FusionWeights, check_retrievers, only_asks
from polyg_core.storage.embedded import EmbeddedFalkorDB
from polyg_core.storage.store import FalkorStore
from polyg_core.text.normalize import STOP_WORDS_EN

from ..conftest import add_said

pytestmark = pytest.mark.anyio

NOW = datetime(2026, 3, 20, 12, 0, tzinfo=UTC)
SYNTHETIC = Path(__file__).resolve().parents[4] / "scripts" / "retrieval_dataset.json"


async def _add(memory: Memory, text: str, *, days_ago: float = 1.0, **kw: object) -> str:
    return await add_said(memory, text, NOW - timedelta(days=days_ago), **kw)


async def _first(memory: Memory, question: str, *retrievers: str) -> list[str]:
    result = await memory.recall(question, reference_time=NOW, retrievers=list(retrievers))
    return [m.uuid for m in result.memories]


async def _target_and_found(
    memory: Memory, target: str, others: Sequence[str], question: str, *retrievers: str
) -> tuple[str, list[str]]:
    """Add the target memory, then the others, and ask: the target's id, and what was found."""
    with anyio.fail_after(60):
        target_id = await _add(memory, target)
        for text in others:
            await _add(memory, text)
        return target_id, await _first(memory, question, *retrievers)


def test_unknown_or_empty_retriever_lists_are_refused() -> None:
    assert check_retrievers(None) >= {"lexical", "dense"}
    assert check_retrievers(["Lexical", " dense "]) == {"lexical", "dense"}
    with pytest.raises(InvalidInput, match=r"unknown retriever.*bm25.*choose from"):
        check_retrievers(["bm25"])
    with pytest.raises(InvalidInput, match="no retriever"):
        check_retrievers([" "])


def test_author_and_name_removal() -> None:
    assert author_of("Dana: the kiln cracked", ()) == "Dana"
    assert author_of("the kiln cracked", ("who:Ravi",)) == "Ravi"
    assert author_of("note: buy milk", ()) is None  # lower-case prefix is not a name
    assert without_names("What did Dana's team bake?", ["Dana"]) == "What did team bake?"
    assert without_names("Dana?", ["Dana"]) == "Dana?"  # nothing else left: unchanged


async def test_lexical_finds_the_rare_word(memory: Memory) -> None:
    target, found = await _target_and_found(
        memory,
        "The glazing kiln in shed four reached cone six.",
        ["We talked about the weather and the garden.", "Lunch was soup and bread at the bakery."],
        "Which cone did the kiln reach?",
        "lexical",
    )
    assert found[0] == target
    assert len(found) == 1  # BM25 returns only texts sharing a word with the question


async def test_lexical_finds_a_compound_asked_as_two_words(memory: Memory) -> None:
    target, found = await _target_and_found(
        memory,
        "Noor: Our roadtrip to the coast was wild, the van broke.",
        ["Noor: The lake was calm this morning.", "Ravi: Lunch was soup and bread at the bakery."],
        "What happened on Noor's road trip?",
        "lexical",
    )
    # Neither "road" nor "trip" is in the memory; "roadtrip" is.
    assert found[0] == target


def test_only_pairs_the_index_holds_are_joined_and_never_stop_words() -> None:
    held = {"roadtrip", "bookshelf", "ofthe"}
    joined = joined_pairs(
        "Did the road trip pass the book shelf of the inn?", held.__contains__, STOP_WORDS_EN
    )
    assert joined == ["roadtrip", "bookshelf"]


async def test_dense_finds_a_paraphrase_without_shared_words(memory: Memory) -> None:
    target, found = await _target_and_found(
        memory,
        "My car broke down on the motorway last night.",
        ["The quarterly report is due on Friday.", "She planted tulips along the fence."],
        "vehicle failure while driving",
        "dense",
    )
    assert found[0] == target


async def test_entity_weighs_names_by_specificity_and_authorship(memory: Memory) -> None:
    with anyio.fail_after(60):
        # "Noor" is in every memory; "Tamsin" in one.
        tamsin = await _add(memory, "Noor: Tamsin lent me her sketchbook.")
        by_noor = [
            await _add(memory, f"Noor: note {i} about the allotment and the bees.")
            for i in range(3)
        ]
        result = await memory.recall(
            "What did Noor get from Tamsin?", reference_time=NOW, retrievers=["entity"]
        )
    scores = {m.uuid: m.retrievers["entity"] for m in result.memories}
    assert result.memories[0].uuid == tamsin
    assert all(scores[u] < scores[tamsin] for u in by_noor)


async def test_time_keeps_to_the_questions_window(memory: Memory) -> None:
    with anyio.fail_after(60):
        march = await _add(memory, "Sprint review notes.", days_ago=10)  # 2026-03-10
        await _add(memory, "Sprint review notes from planning.", days_ago=60)  # January
        result = await memory.recall(
            "What did we review in March 2026?", reference_time=NOW, retrievers=["time"]
        )
    assert [m.uuid for m in result.memories] == [march]
    assert result.memories[0].retrievers == {"time": 1.0}


async def test_an_inferential_question_leans_on_what_was_said_in_other_words(
    memory: Memory,
) -> None:
    with anyio.fail_after(60):
        fan = await _add(memory, "Dana: I love roller coasters and thrill rides.")
        park = await _add(memory, "Dana: The theme of the parking meeting was fees.")
        await _add(memory, "Dana: The quarterly report is due on Friday.")
        asked = await memory.recall(
            "Would Dana likely enjoy a theme park?", reference_time=NOW, memory_limit=3
        )
        stated = await memory.recall(
            "Does Dana enjoy a theme park?", reference_time=NOW, memory_limit=3
        )
    assert asked.intent["inferential"] is True
    assert [m.uuid for m in asked.memories][:2] == [fan, park]
    # Asked what was said, the words of the question count as much as their meaning.
    assert stated.intent["inferential"] is False
    assert [m.uuid for m in stated.memories][:2] == [park, fan]


async def test_neighbours_bring_the_reply_to_a_matching_question(memory: Memory) -> None:
    with anyio.fail_after(60):
        same_time = NOW - timedelta(days=2)
        asked = await _add(memory, "Ravi: Where did you hide the spare greenhouse key?", days_ago=2)
        reply, _ = await memory.semantic.add_memory(
            memory.namespace, "Mina: Under the blue flowerpot by the door.", created_at=same_time
        )
        await memory.semantic.add_memory(
            memory.namespace, "Ravi: Thanks, talk soon.", created_at=same_time
        )
        await _add(memory, "Mina: The tomatoes need water daily.", days_ago=30)
        lexical_only = await _first(memory, "Where is the spare greenhouse key?", "lexical")
        with_neighbours = await _first(
            memory, "Where is the spare greenhouse key?", "lexical", "neighbours"
        )
    assert reply.uuid not in lexical_only and asked in lexical_only
    # Same created_at: the reply was written after the question, so it follows it.
    assert with_neighbours[:2] == [reply.uuid, asked]


async def test_a_hit_that_asks_back_keeps_its_place_above_the_reply(memory: Memory) -> None:
    with anyio.fail_after(60):
        same_time = NOW - timedelta(days=2)
        told = await _add(
            memory,
            "Ravi: I hid the spare greenhouse key under the blue flowerpot. How was your week?",
            days_ago=2,
        )
        reply, _ = await memory.semantic.add_memory(
            memory.namespace, "Mina: Busy, lots of marking.", created_at=same_time
        )
        await _add(memory, "Mina: The tomatoes need water daily.", days_ago=30)
        ranked = await _first(memory, "Where is the spare greenhouse key?", "lexical", "neighbours")
    # The closing question asks about something else: the reply is only a neighbour.
    assert ranked[:2] == [told, reply.uuid]


async def test_a_memory_that_only_asks_the_question_ranks_below_the_one_that_answers(
    memory: Memory,
) -> None:
    # Ravi's question repeats every asked word; Mina's account, days later, answers it in
    # other words. A question holds no answer: it gives way to the statement.
    with anyio.fail_after(60):
        await _add(memory, "Ravi: Which trail did you hike with the scouts?", days_ago=9)
        answer = await _add(
            memory, "Mina: The scouts and I hiked the ridge path up to the lighthouse.", days_ago=3
        )
        await _add(memory, "Mina: The scouts sold lemonade at the fair.", days_ago=20)
        await _add(memory, "Ravi: The lighthouse keeper retired in May.", days_ago=40)
        ranked = await _first(
            memory, "Which trail did Mina hike with the scouts?", "lexical", "dense", "neighbours"
        )
    assert ranked[0] == answer


async def test_a_speakers_own_words_rank_above_what_another_said_about_them(
    memory: Memory,
) -> None:
    # Oren repeats the question's words back to Talia; what she did is in her own words.
    with anyio.fail_after(60):
        own = await _add(memory, "Talia: I made a lemon tart for the school fair.", days_ago=6)
        await _add(
            memory,
            "Oren: Talia, the lemon tart you baked for the school fair was the best thing there!",
            days_ago=5,
        )
        await _add(memory, "Oren: The fair raised money for the new library.", days_ago=5.5)
        await _add(memory, "Talia: My sister visits in June.", days_ago=30)
        ranked = await _first(
            memory, "What did Talia bake for the school fair?", "lexical", "dense", "entity"
        )
    assert ranked[0] == own


async def test_graph_reaches_memories_about_the_same_concept(memory: Memory) -> None:
    with anyio.fail_after(60):
        hit = await _add(memory, "The heron returned to the pond.", concepts=["birdwatching"])
        linked = await _add(
            memory, "Binoculars are in the hall cupboard.", concepts=["birdwatching"]
        )
        for i in range(4):
            await _add(memory, f"Grocery list number {i}.", concepts=[f"chores {i}"])
        plain = await _first(memory, "When did the heron return?", "lexical")
        single = await _first(memory, "When did the heron return?", "lexical", "graph")
        # The graph retriever serves multi-hop questions (forced here with ppr=True).
        multi = await memory.recall(
            "When did the heron return?",
            reference_time=NOW,
            retrievers=["lexical", "graph"],
            ppr=True,
        )
    assert plain == single == [hit]
    assert [m.uuid for m in multi.memories][:2] == [hit, linked]


async def test_fusion_ranks_agreement_first(memory: Memory) -> None:
    with anyio.fail_after(60):
        both = await _add(memory, "The backup job failed because the disk was full.")
        await _add(memory, "The disk was replaced in May.")  # lexical only, weaker
        await _add(memory, "Storage ran out so nightly copies stopped.")  # meaning only
        result = await memory.recall("Why did the backup job fail?", reference_time=NOW)
    first = result.memories[0]
    assert first.uuid == both
    assert {"lexical", "dense"} <= set(first.retrievers)
    assert [m.score for m in result.memories] == sorted(
        (m.score for m in result.memories), reverse=True
    )


async def test_recall_sends_no_write_to_falkordb(
    memory: Memory, falkordb_server: EmbeddedFalkorDB
) -> None:
    """Counted at the server: GRAPH.QUERY calls (writes) stay the same during recalls."""
    probe = aredis.Redis(unix_socket_path=falkordb_server.socket_path)
    with anyio.fail_after(60):
        for text in ("Ops: the cache was flushed at noon.", "Ops: the deploy failed at noon?"):
            await memory.remember(text, reference_time=NOW)
        await memory.recall("warm-up", reference_time=NOW)

        async def writes() -> int:
            stats: dict[str, Any] = await probe.info("commandstats")
            return int(stats.get("cmdstat_graph.QUERY", {}).get("calls", 0))

        before = await writes()
        for q in ("Why did the deploy fail?", "When was the cache flushed?", "Who is Ops?"):
            result = await memory.recall(q, reference_time=NOW)
            assert result.memories
        after = await writes()
        await probe.aclose()
    assert after == before


async def test_invariant_on_the_synthetic_set(memory: Memory) -> None:
    """polyg's R@k is at least the best single retriever's in every category."""
    dataset = load_dataset(SYNTHETIC)
    with anyio.fail_after(600):
        report = await run_retrieval(
            memory,
            dataset,
            namespace_prefix=f"{memory.namespace}_inv",
            ablation=True,
            leave_one_out=False,
        )
    rows = report.invariant()
    assert rows and all(r["holds"] for r in rows), [r for r in rows if not r["holds"]]


async def test_catalogue_follows_writes_and_deletes_from_elsewhere(
    memory: Memory, store: FalkorStore, embedder: Embedder
) -> None:
    ns = memory.namespace
    other = Memory(store=store, embedder=embedder, namespace=ns)  # another process's view
    with anyio.fail_after(60):
        first = await _add(memory, "The greenhouse thermometer reads twelve degrees.")
        assert await _first(memory, "greenhouse thermometer", "lexical") == [first]
        second, _ = await other.semantic.add_memory(
            ns, "The greenhouse heater was switched on.", created_at=NOW
        )
        found = await _first(memory, "greenhouse heater", "lexical")
        assert found[0] == second.uuid and first in found
        await store.query(ns, "MATCH (m:S_Memory {uuid: $u}) DETACH DELETE m", {"u": second.uuid})
        assert await _first(memory, "greenhouse heater", "lexical") == [first]


async def test_recall_in_a_namespace_of_another_model_says_so(memory: Memory) -> None:
    await memory.store.ensure_vectors(memory.namespace, "other/embedding-model", 384)
    with pytest.raises(EmbeddingMismatch, match=r"other/embedding-model.*EMBEDDING_MODEL"):
        await memory.recall("anything about the cache?", reference_time=NOW)


async def test_a_when_question_prefers_the_memory_that_says_when(memory: Memory) -> None:
    # Both are Bruno's and both are about the kayak race; only one says when it was.
    with anyio.fail_after(60):
        undated = await _add(
            memory, "Bruno: The kayak race is the best kayak race on the river.", days_ago=3
        )
        dated = await _add(memory, "Bruno: I paddled the kayak race last Saturday.", days_ago=9)
        await _add(memory, "Bruno: The allotment needs new fencing.", days_ago=20)
        await _add(memory, "Lena: The library opens late on Thursdays.", days_ago=25)
        question = "When did Bruno do the kayak race?"
        memory.pipeline.fusion_weights = FusionWeights(dated=0.0)
        plain = await _first(memory, question, "lexical", "dense")
        memory.pipeline.fusion_weights = FusionWeights()
        ranked = await _first(memory, question, "lexical", "dense")
    assert plain[0] == undated
    assert ranked[:2] == [dated, undated]


async def test_a_how_long_question_prefers_the_memory_that_says_how_long(memory: Memory) -> None:
    with anyio.fail_after(60):
        undated = await _add(memory, "Bruno: Rowing, rowing, rowing on the lake.", days_ago=3)
        lasting = await _add(
            memory, "Bruno: I have been rowing with the river club for six years.", days_ago=9
        )
        await _add(memory, "Bruno: The allotment needs new fencing.", days_ago=20)
        await _add(memory, "Lena: The library opens late on Thursdays.", days_ago=25)
        question = "How long has Bruno been rowing?"
        memory.pipeline.fusion_weights = FusionWeights(dated=0.0)
        plain = await _first(memory, question, "lexical")
        memory.pipeline.fusion_weights = FusionWeights()
        ranked = await _first(memory, question, "lexical")
    assert plain[0] == undated
    assert ranked[0] == lasting


def test_a_memory_that_only_asks_is_told_from_one_that_says_something() -> None:
    assert only_asks("Ravi: Which trail did you hike?")
    assert only_asks("Ravi: Great news, Mina! How is the new kiln working out?")
    assert only_asks("How is the new kiln working out? Any cracks yet?")
    assert not only_asks("Ravi: I hiked the north trail with the scouts. Which did you hike?")
    assert not only_asks("Ravi: Wow! Great.")  # no question: not asking
    assert not only_asks("Mina: Great news, Ravi! I fired the new kiln twice this week. Any tips?")


async def test_the_asked_speakers_question_to_someone_else_is_not_about_them(
    memory: Memory,
) -> None:
    # Noor asks Oren about his pets; what Noor has is in her reply to Oren's question.
    with anyio.fail_after(60):
        asks = await _add(memory, "Noor: Cute! What pets do you have at home?", days_ago=9)
        await _add(memory, "Oren: Two cats. And you, any pets at home?", days_ago=8.99)
        own = await _add(
            memory, "Noor: Just one pet, a tortoise called Pebble, he is very old.", days_ago=8.98
        )
        await _add(memory, "Noor: The allotment needs new fencing.", days_ago=20)
        question = "What pets does Noor have at home?"
        retrievers = ["lexical", "dense", "entity", "neighbours"]
        memory.pipeline.fusion_weights = FusionWeights(other_author=1.0)
        plain = await _first(memory, question, *retrievers)
        memory.pipeline.fusion_weights = FusionWeights()
        ranked = await _first(memory, question, *retrievers)
    assert plain.index(asks) < plain.index(own)
    assert ranked.index(own) < ranked.index(asks)


async def test_a_speaker_named_by_a_short_name_is_still_the_one_asked_about(
    memory: Memory,
) -> None:
    # "Sam" begins only Samantha's name: her own words answer, Oren's echo is second-hand.
    with anyio.fail_after(60):
        own = await _add(memory, "Samantha: I fired a blue vase in the kiln on Sunday.", days_ago=6)
        echo = await _add(memory, "Oren: Sam fired a vase in the kiln, lovely.", days_ago=5.9)
        await _add(memory, "Oren: The kiln shed needs a new lock.", days_ago=30)
        await _add(memory, "Samantha: My sister visits in June.", days_ago=40)
        ranked = await _first(
            memory, "What did Sam fire in the kiln?", "lexical", "dense", "entity", "neighbours"
        )
    assert ranked.index(own) < ranked.index(echo)
