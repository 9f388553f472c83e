"""remember's write path: a fixed handful of queries and one embedding call per text,
and entities it creates implicitly reported like explicit ones."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from polyg_core.config import StorageSettings
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.storage.store import FalkorStore
from polyg_core.testing.counting import CountingStore
from polyg_core.testing.timed import TimedEmbedder

from ..conftest import ScriptedMemory, extraction_reply

pytestmark = pytest.mark.anyio

NOTE = (
    "The auth-service crashed on 2026-01-07 because AUTH_SECRET was missing after the "
    "deploy-v2.3.1 deployment. Caching with Redis reduced latency for the auth-service."
)


async def test_a_typical_note_is_written_in_at_most_15_queries_and_one_embedding_call(
    falkordb_settings: StorageSettings, embedder: Embedder, namespace: str
) -> None:
    store = CountingStore(falkordb_settings)
    await store.connect()
    counting = TimedEmbedder(embedder)
    mem = Memory(store=store, embedder=counting, namespace=namespace)
    try:
        with anyio.fail_after(60):
            await mem.entities.add(namespace, "auth-service", "Service")
            await mem.remember("Redis is a cache.", reference_time="2026-01-05T12:00:00Z")
            store.queries.clear()
            counting.calls = 0
            result = await mem.remember(NOTE, reference_time="2026-01-10T12:00:00Z")
            sent = len(store.queries)
            stored = await store.query(
                namespace,
                "MATCH (m:S_Memory {uuid: $u})-[:S_ABOUT]->(c:S_Concept)"
                "-[:X_REPRESENTS]->(e:E_Entity) RETURN c.name, e.name ORDER BY c.name, e.name",
                {"u": result.memory_uuid},
            )
            again = await mem.remember(NOTE, reference_time="2026-01-10T12:00:00Z")
    finally:
        await store.close()
    assert sent <= 15, store.queries
    assert counting.calls == 1
    assert result.created and not again.created and again.memory_uuid == result.memory_uuid
    # entities that were stored are reused, not duplicated; new ones are created
    by_name = {e.name: e for e in result.entities}
    assert not by_name["auth-service"].created and not by_name["Redis"].created
    assert by_name["AUTH_SECRET"].created
    assert result.events and result.causal_links and result.concepts
    assert ["caching", "Redis"] in [list(r) for r in stored.rows]


def _extraction(_: list[dict[str, Any]]) -> str:
    return extraction_reply(
        entities=[{"name": "billing-api", "entity_type": "Service"}],
        relations=[
            {"source": "billing-api", "target": "auth servce", "relationship_type": "calls"}
        ],
        events=[
            {
                "description": "billing-api timed out calling the ledger",
                "occurred_at": "2026-01-10T11:00:00Z",
                "entities": ["billing-api", "ledger servce"],
            }
        ],
    )


async def test_entities_a_relation_or_event_creates_report_their_near_duplicates(
    store: FalkorStore, namespace: str, scripted_memory: ScriptedMemory
) -> None:
    async with scripted_memory(_extraction) as mem:
        with anyio.fail_after(60):
            auth, _ = await mem.entities.add(namespace, "auth service", "Service")
            ledger, _ = await mem.entities.add(namespace, "ledger service", "Service")
            result = await mem.remember("billing-api calls the auth service.")
    by_name = {e.name: e for e in result.entities}
    assert by_name["billing-api"].created
    # names no stored entity has exactly: new plain entities, reported with the stored
    # entities they are close to (nothing merged)
    typo = by_name["auth servce"]
    assert typo.created and typo.uuid != auth.uuid
    assert auth.uuid in [s.uuid for s in typo.similar_existing]
    assert ledger.uuid in [s.uuid for s in by_name["ledger servce"].similar_existing]
    linked = await store.query(
        namespace,
        "MATCH (:E_Entity {name: 'billing-api'})-[:E_RELATES]->(t:E_Entity) RETURN t.uuid",
    )
    assert [r[0] for r in linked.rows] == [typo.uuid]


def _shared_name_extraction(_: list[dict[str, Any]]) -> str:
    return extraction_reply(
        entities=[{"name": "atlas", "entity_type": "Service"}],
        relations=[{"source": "atlas", "target": "billing", "relationship_type": "calls"}],
        events=[
            {
                "description": "atlas restarted",
                "occurred_at": "2026-01-10T11:00:00Z",
                "entities": ["atlas"],
            }
        ],
        facts=[
            {
                "subject": "atlas",
                "predicate": "runs_on",
                "object": "k8s",
                "valid_from": "2026-01-01T00:00:00Z",
            }
        ],
    )


async def test_a_name_two_entities_share_is_the_one_of_the_extracted_type_and_facts_skip_it(
    store: FalkorStore, namespace: str, scripted_memory: ScriptedMemory
) -> None:
    async with scripted_memory(_shared_name_extraction) as mem:
        with anyio.fail_after(60):
            service, _ = await mem.entities.add(namespace, "atlas", "Service")
            await mem.entities.add(namespace, "atlas", "Project")
            result = await mem.remember("atlas calls billing; it restarted.")
            links = await store.query(
                namespace,
                "MATCH (a:E_Entity {name: 'atlas'})<-[:X_INVOLVES]-(:T_Event) RETURN a.uuid "
                "UNION ALL MATCH (a:E_Entity {name: 'atlas'})-[:E_RELATES]->() RETURN a.uuid",
            )
            facts = await store.query(namespace, "MATCH (f:T_Fact) RETURN count(f)")
    assert result.created
    assert [(e.uuid, e.created) for e in result.entities if e.name == "atlas"] == [
        (service.uuid, False)
    ]
    assert [r[0] for r in links.rows] == [service.uuid, service.uuid]
    assert result.relations == ["atlas -calls-> billing"] and len(result.events) == 1
    assert result.facts == [] and facts.rows[0][0] == 0
