"""Events and facts carry no vector: they are found by their words, entities and time."""

from __future__ import annotations

import uuid

import pytest
from polyg_core.errors import NodeNotFound
from polyg_core.graphs.temporal import TemporalGraph
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.storage.fulltext import query_terms, word_search
from polyg_core.storage.schema import EMBEDDED_LABELS
from polyg_core.storage.store import FalkorStore
from polyg_shared.intents import Intent

pytestmark = pytest.mark.anyio


def fresh() -> str:
    return f"unembedded-{uuid.uuid4().hex[:8]}"


async def count(store: FalkorStore, ns: str, cypher: str) -> int:
    return int((await store.query(ns, cypher, read_only=True)).scalar(0))


def test_question_words_and_function_words_are_not_searched() -> None:
    assert query_terms("What happened to the checkout service during the outage?") == [
        "checkout",
        "service",
        "outage",
    ]
    assert query_terms("v2 of the API, the API!") == ["v2", "api"]
    assert query_terms("?? the of") == []


async def test_events_and_facts_are_stored_without_a_vector_or_an_index(
    store: FalkorStore, temporal: TemporalGraph
) -> None:
    ns = fresh()
    await temporal.add_event(ns, "billing deploy failed", "2026-01-05T10:00:00Z", entities=["api"])
    await temporal.add_fact(ns, "Alice", "works_on", "billing", valid_from="2026-01-01")
    assert await count(ns=ns, store=store, cypher="MATCH (n:T_Event) RETURN count(n)") == 1
    assert await count(ns=ns, store=store, cypher="MATCH (n:T_Fact) RETURN count(n)") == 1
    stored = "MATCH (n) WHERE (n:T_Event OR n:T_Fact) AND n.embedding IS NOT NULL RETURN count(n)"
    assert await count(store, ns, stored) == 0
    # The entities they name do carry one.
    assert (
        await count(store, ns, "MATCH (n:E_Entity) WHERE n.embedding IS NOT NULL RETURN count(n)")
        == 2
    )
    indexes = await store.query(ns, "CALL db.indexes() YIELD label, types RETURN label, types")
    vector_labels = {str(label) for label, types in indexes.rows if "VECTOR" in str(types)}
    assert "T_Event" not in vector_labels and "T_Fact" not in vector_labels
    assert "E_Entity" in vector_labels
    assert "T_Event" not in EMBEDDED_LABELS and "T_Fact" not in EMBEDDED_LABELS


async def test_word_search_scores_by_the_share_of_the_query_words_held(
    store: FalkorStore, temporal: TemporalGraph
) -> None:
    ns = fresh()
    t = "2026-01-05T10:00:00Z"
    await temporal.add_event(ns, "checkout deployment failed", t)
    await temporal.add_event(ns, "checkout traffic spiked", t)
    await temporal.add_event(ns, "ledger backup finished", t)
    hits = await word_search(store, ns, "T_Event", "Why did the checkout deploy fail?", 10)
    by_text = {str(h.properties["description"]): h.overlap for h in hits}
    # Stemmed: deploy / deployment, fail / failed.
    assert by_text == {
        "checkout deployment failed": 1.0,
        "checkout traffic spiked": pytest.approx(1 / 3),
    }
    assert await word_search(store, ns, "T_Event", "the of what", 10) == []
    assert await word_search(store, fresh(), "T_Event", "checkout", 10) == []


async def test_a_read_finds_an_event_by_a_paraphrase_that_shares_its_words(
    temporal: TemporalGraph,
) -> None:
    ns = fresh()
    await temporal.add_event(ns, "payments database failover completed", "2026-01-05T10:00:00Z")
    await temporal.add_event(ns, "payments team lunch", "2026-01-06T12:00:00Z")
    found = await temporal.resolve_event(ns, "the payments database failover was completed")
    assert found.description == "payments database failover completed"
    with pytest.raises(NodeNotFound):  # writes resolve exactly: a paraphrase is no match
        await temporal.resolve_event(
            ns, "the payments database failover was completed", fuzzy=False
        )
    with pytest.raises(NodeNotFound) as miss:
        await temporal.resolve_event(ns, "payments outage report")
    # The closest events are offered, scored by meaning.
    assert "payments team lunch" in {c.name for c in miss.value.candidates}


async def test_recall_seeds_events_by_their_words(store: FalkorStore, embedder: Embedder) -> None:
    ns = fresh()
    memory = Memory(store=store, embedder=embedder, namespace=ns)
    await memory.temporal.add_event(
        ns, "pgbouncer pool size restored to 100", "2026-01-05T10:00:00Z", entities=["pgbouncer"]
    )
    await memory.temporal.add_event(ns, "ledger backup finished", "2026-01-05T11:00:00Z")
    seeds = await memory.pipeline.seeds(
        ns,
        Intent(semantic_query="when was the pool size restored"),
        None,
    )
    texts = {n.text for n in seeds.semantic.nodes}
    assert any("pool size restored" in t for t in texts)
    assert not any("ledger" in t for t in texts)
    assert seeds.events
