"""Deletes that leave nothing wrong: facts of a deleted entity stop being current,
its links go, and implicit nodes left without links are removed on every delete."""

from __future__ import annotations

import json

import anyio
import pytest
from polyg_core.errors import NodeNotFound
from polyg_core.graphs.causal import CausalGraph
from polyg_core.graphs.crosslinks import CrossLinker
from polyg_core.graphs.entity import EntityGraph
from polyg_core.graphs.semantic import SemanticGraph
from polyg_core.graphs.temporal import TemporalGraph
from polyg_core.graphs.temporal_queries import CHAIN_EDGES
from polyg_core.storage.store import FalkorStore

pytestmark = pytest.mark.anyio


async def count(store: FalkorStore, ns: str, cypher: str) -> int:
    return int((await store.query(ns, cypher)).scalar(0))


async def test_deleting_an_entity_ends_its_current_facts_and_keeps_their_history(
    entities: EntityGraph, temporal: TemporalGraph, namespace: str
) -> None:
    with anyio.fail_after(60):
        await temporal.add_fact(namespace, "Alice", "works_on", "Payments", valid_from="2025-01-01")
        assert len(await temporal.facts(namespace, subject="Alice")) == 1
        assert await entities.delete(namespace, "Alice")
        current = await temporal.facts(namespace, subject="Alice")
        history = await temporal.facts(namespace, subject="Alice", history=True)
    assert current == []
    assert len(history) == 1 and history[0].valid_to is not None


async def test_deleting_an_entity_ends_the_facts_it_is_the_object_of(
    entities: EntityGraph, temporal: TemporalGraph, namespace: str
) -> None:
    with anyio.fail_after(60):
        await temporal.add_fact(
            namespace, "Quentin Marsh", "reports_to", "Oriane Vell", valid_from="2025-01-01"
        )
        await entities.add(namespace, "Oriane Vell", "person")
        await entities.link(namespace, "Quentin Marsh", "Oriane Vell", "reports_to")
        assert await entities.delete(namespace, "Oriane Vell")
        current = await temporal.facts(namespace, subject="Quentin Marsh")
        history = await temporal.facts(namespace, subject="Quentin Marsh", history=True)
    assert current == []
    assert [f.object for f in history] == ["Oriane Vell"] and history[0].valid_to is not None


async def test_deleting_an_entity_can_delete_its_facts(
    store: FalkorStore, entities: EntityGraph, temporal: TemporalGraph, namespace: str
) -> None:
    with anyio.fail_after(60):
        await temporal.add_fact(namespace, "Bob", "owns", "billing", valid_from="2025-01-01")
        assert await entities.delete(namespace, "Bob", delete_facts=True)
    assert await count(store, namespace, "MATCH (f:T_Fact) RETURN count(f)") == 0


async def test_deleting_an_entity_removes_its_event_chain_and_keeps_the_events(
    store: FalkorStore,
    entities: EntityGraph,
    temporal: TemporalGraph,
    namespace: str,
) -> None:
    with anyio.fail_after(60):
        for day in (1, 2, 3):
            await temporal.add_event(
                namespace, f"deploy {day}", f"2026-01-0{day}", entities=["api", "web"]
            )
        assert await entities.delete(namespace, "api")
    chains = await store.query(namespace, CHAIN_EDGES)
    web = await entities.get(namespace, "web")
    assert {r[0] for r in chains.rows} == {web.uuid}
    edges = await store.query(namespace, "MATCH ()-[b:T_BEFORE]->() RETURN count(b)")
    assert edges.scalar() == 2  # web's chain; what only api's chain needed is gone
    assert await count(store, namespace, "MATCH (e:T_Event) RETURN count(e)") == 3


async def test_every_delete_removes_implicit_nodes_left_without_links(
    store: FalkorStore, entities: EntityGraph, semantic: SemanticGraph, namespace: str
) -> None:
    links = CrossLinker(store)
    with anyio.fail_after(60):
        concept, _ = await semantic.add_concept(namespace, "caching", entities=["implicit-cache"])
        await entities.add(namespace, "explicit-db")
        assert await links.delete_node(namespace, concept.uuid)
    names = await store.query(namespace, "MATCH (e:E_Entity) RETURN e.name")
    assert [r[0] for r in names.rows] == ["explicit-db"]


async def test_clearing_a_graph_removes_implicit_nodes_left_without_links(
    store: FalkorStore, entities: EntityGraph, semantic: SemanticGraph, namespace: str
) -> None:
    with anyio.fail_after(60):
        await semantic.add_concept(namespace, "caching", entities=["implicit-cache"])
        await CrossLinker(store).clear(namespace, "semantic")
    assert await count(store, namespace, "MATCH (e:E_Entity) RETURN count(e)") == 0


async def test_unlinking_names_the_ends_exactly(entities: EntityGraph, namespace: str) -> None:
    with anyio.fail_after(60):
        await entities.add(namespace, "auth service")
        await entities.add(namespace, "user db")
        await entities.link(namespace, "auth service", "user db", "reads")
        with pytest.raises(NodeNotFound):
            await entities.unlink(namespace, "auth servce", "user db", "reads")
        assert await entities.unlink(namespace, "AuthService", "user db", "reads") == 1


async def test_one_causal_link_can_be_deleted_and_its_nodes_stay(
    store: FalkorStore, causal: CausalGraph, namespace: str
) -> None:
    with anyio.fail_after(60):
        await causal.add_link(namespace, "cache cold", "slow pages", 0.6)
        await causal.add_link(namespace, "slow pages", "users leave", 0.5)
        with pytest.raises(NodeNotFound):
            await causal.remove_link(namespace, "cache cld", "slow pages")
        assert await causal.remove_link(namespace, "Cache cold.", "slow pages")
        assert not await causal.remove_link(namespace, "cache cold", "slow pages")
    assert await count(store, namespace, "MATCH ()-[r:C_CAUSES]->() RETURN count(r)") == 1
    assert await count(store, namespace, "MATCH (c:C_Node) RETURN count(c)") == 3


async def test_deleting_an_event_by_uuid_joins_its_entities_chain(
    store: FalkorStore, temporal: TemporalGraph, namespace: str
) -> None:
    with anyio.fail_after(60):
        events = [
            await temporal.add_event(namespace, name, f"2026-01-0{day}", entities=["svc"])
            for day, name in ((1, "A"), (2, "B"), (3, "C"))
        ]
        assert await CrossLinker(store).delete_node(namespace, events[1].uuid)
    chain = await store.query(
        namespace, "MATCH (a:T_Event)-[:T_BEFORE]->(b:T_Event) RETURN a.description, b.description"
    )
    assert [tuple(r) for r in chain.rows] == [("A", "C")]


async def test_merging_moves_every_link_and_keeps_the_merged_name(
    store: FalkorStore,
    entities: EntityGraph,
    temporal: TemporalGraph,
    namespace: str,
    causal: CausalGraph,
) -> None:
    with anyio.fail_after(60):
        await entities.add(namespace, "auth service")
        await entities.add(namespace, "user db")
        await temporal.add_event(namespace, "A", "2026-01-01", entities=["auth service"])
        await temporal.add_event(namespace, "B", "2026-01-02", entities=["auth servce"])
        await entities.link(namespace, "auth servce", "user db", "reads")
        await entities.link(namespace, "auth servce", "auth service", "same as")
        await causal.add_link(namespace, "bad config", "crash", 0.9, entities=["auth servce"])
        merged, names = await entities.merge(namespace, "auth servce", "auth service")
        rels = await entities.relationships(namespace, "auth service")
    assert merged.name == "auth service" and names == ["auth servce"]
    assert [(r.source_name, r.relationship_type, r.target_name) for r in rels] == [
        ("auth service", "reads", "user db")
    ]
    chain = await store.query(
        namespace, "MATCH (a:T_Event)-[b:T_BEFORE]->(c:T_Event) RETURN a.description, c.description"
    )
    assert [tuple(r) for r in chain.rows] == [("A", "B")]
    affected = await store.query(
        namespace, "MATCH (:C_Node)-[:X_AFFECTS]->(e:E_Entity) RETURN DISTINCT e.name"
    )
    assert [r[0] for r in affected.rows] == ["auth service"]
    assert await count(store, namespace, "MATCH (e:E_Entity) RETURN count(e)") == 2


async def test_merging_keeps_the_source_properties_the_target_lacks_and_records_it(
    store: FalkorStore, entities: EntityGraph, namespace: str
) -> None:
    with anyio.fail_after(60):
        await entities.add(namespace, "billing api", "Service", {"owner": "ops", "tier": 1})
        await entities.add(namespace, "billing-api v2", "Service", {"tier": 2, "port": 8080})
        merged, names = await entities.merge(namespace, "billing-api v2", "billing api")
    assert names == ["billing-api v2"]
    # the target's own value wins; what only the source knew is kept
    assert merged.properties == {"owner": "ops", "tier": 1, "port": 8080}
    res = await store.query(
        namespace, "MATCH (e:E_Entity {name: 'billing api'}) RETURN e.merge_history"
    )
    (history,) = res.rows[0]
    entry = json.loads(history[0])
    assert entry["name"] == "billing-api v2" and entry["properties_taken"] == ["port"]
    assert entry["entity_type"] == "service" and entry["at"]


async def test_a_causal_link_never_picks_its_event_by_meaning(
    temporal: TemporalGraph,
    namespace: str,
    causal: CausalGraph,
) -> None:
    with anyio.fail_after(60):
        await temporal.add_event(namespace, "auth service crashed at startup", "2026-01-01")
        with pytest.raises(NodeNotFound):
            await causal.add_link(
                namespace, "bad config", "crash", 0.9, events=["auth service crash at startup"]
            )
        # a read still finds it by meaning
        found = await temporal.resolve_event(namespace, "auth service crash at startup")
    assert found.description == "auth service crashed at startup"
