"""Categories and WHO / PROJECT / WHY tags: remember stores them, recall filters by them."""

from __future__ import annotations

import anyio
import pytest
from polyg_core.errors import InvalidInput
from polyg_core.memory import Memory

pytestmark = pytest.mark.anyio

REF = "2026-02-02T10:00:00Z"


async def remember_three(memory: Memory) -> dict[str, str]:
    a = await memory.remember(
        "To restart the billing worker, drain the queue and then run the deploy script.",
        category="procedural",
        who="alice",
        project="billing",
        why="runbook",
        reference_time=REF,
    )
    b = await memory.remember(
        "The billing worker crashed during the Friday deploy.",
        category="episodic",
        who="bob",
        project="billing",
        reference_time=REF,
    )
    c = await memory.remember(
        "To restart the search worker, drain the queue and then run the deploy script.",
        category="procedural",
        who="alice",
        project="search",
        tags=["ops"],
        reference_time=REF,
    )
    return {"a": a.memory_uuid, "b": b.memory_uuid, "c": c.memory_uuid}


def memory_ids(result: object) -> set[str]:
    nodes = getattr(result, "nodes", [])
    return {n.uuid for n in nodes if n.label == "S_Memory"}


async def test_remember_stores_category_and_prefixed_tags(memory: Memory) -> None:
    with anyio.fail_after(60):
        ids = await remember_three(memory)
        res = await memory.store.query(
            memory.namespace,
            "MATCH (m:S_Memory {uuid: $u}) RETURN m.category, m.tags, m.created_at_iso",
            {"u": ids["a"]},
        )
    category, tags, created = res.rows[0]
    assert category == "procedural"
    assert set(tags) == {"who:alice", "project:billing", "why:runbook"}
    assert str(created).startswith("2026-02-02T10:00:00")  # WHEN is the reference time


async def test_recall_filters_memories_by_category_project_who_and_tags(memory: Memory) -> None:
    question = "How do I restart the worker after the deploy?"
    with anyio.fail_after(90):
        ids = await remember_three(memory)
        everything = await memory.recall(question, reference_time=REF)
        procedural = await memory.recall(question, category="procedural", reference_time=REF)
        billing = await memory.recall(question, project="billing", reference_time=REF)
        bob = await memory.recall(question, who="Bob", reference_time=REF)
        ops = await memory.recall(question, tags=["ops"], reference_time=REF)
    assert set(ids.values()) <= memory_ids(everything)
    assert memory_ids(procedural) == {ids["a"], ids["c"]}
    assert memory_ids(billing) == {ids["a"], ids["b"]}
    assert memory_ids(bob) == {ids["b"]}
    assert memory_ids(ops) == {ids["c"]}
    assert billing.ranking is not None
    assert billing.ranking.filters == {"project": "billing"}
    assert all(
        n.uuid in {ids["a"], ids["b"]}
        for n in [*billing.core, *billing.extended]
        if n.label == "S_Memory"
    )


async def test_bad_filter_values_say_what_to_use(memory: Memory) -> None:
    with pytest.raises(InvalidInput, match="use one of procedural, episodic, semantic"):
        await memory.recall("anything?", category="habits")
    with pytest.raises(InvalidInput, match="who is blank"):
        await memory.remember("Some text worth keeping.", who="  ")


async def test_a_filter_that_matches_nothing_says_so_with_low_confidence(memory: Memory) -> None:
    question = "How do I restart the worker after the deploy?"
    with anyio.fail_after(90):
        await remember_three(memory)
        result = await memory.recall(question, project="nope", reference_time=REF)
    assert result.answer.startswith("Not known: no memory matches the filter (project: nope)")
    assert result.confidence <= 0.1
    assert result.memories == []
    assert result.sources == []
    # Nothing of another project's memories is left to rest an answer on.
    assert result.nodes == []
    assert result.core == [] and result.extended == []


async def test_a_filter_restricts_facts_events_and_entities_too(memory: Memory) -> None:
    with anyio.fail_after(90):
        await memory.remember(
            "Priya moved to the payments team in March.", project="payments", reference_time=REF
        )
        await memory.remember(
            "Deploy 4.2 of the search worker broke indexing because the schema changed.",
            project="search",
            reference_time=REF,
        )
        everything = await memory.recall("What changed recently?", reference_time=REF)
        payments = await memory.recall(
            "What changed recently?", project="payments", reference_time=REF
        )
    texts = " ".join(n.text for n in everything.nodes).lower()
    assert "search" in texts  # unfiltered, the search project's nodes are there
    kept = " ".join(n.text for n in payments.nodes).lower()
    assert "search" not in kept and "schema" not in kept and "indexing" not in kept
    assert all("payments" in m.content for m in payments.memories)
