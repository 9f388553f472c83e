"""The benchmark generator: seeded, proportional, and readable through the public API."""

from typing import Any

import anyio
import pytest
from polyg_bench.generate import generate
from polyg_core.graphs.causal import CausalGraph
from polyg_core.graphs.entity import EntityGraph
from polyg_core.graphs.semantic import SemanticGraph
from polyg_core.graphs.temporal import TemporalGraph
from polyg_core.resolve import NameResolver
from polyg_core.storage.store import FalkorStore

pytestmark = pytest.mark.anyio


async def _count(store: FalkorStore, ns: str, label: str) -> int:
    res = await store.query(ns, f"MATCH (n:{label}) RETURN count(n)", read_only=True)
    return int(res.scalar())


async def test_generated_namespace_has_the_documented_proportions(
    store: FalkorStore, namespace: str
) -> None:
    with anyio.fail_after(60):
        gen = await generate(store, namespace, 40, seed=3)
    counts = {
        "E_Entity": 40,
        "T_Event": 120,
        "T_Fact": 40,
        "C_Node": 20,
        "S_Concept": 4,
        "S_Memory": 20,
    }
    for label, expected in counts.items():
        assert await _count(store, namespace, label) == expected, label
    rel = await store.query(namespace, "MATCH ()-[r:E_RELATES]->() RETURN count(r)")
    assert rel.scalar() == 80
    assert gen.nodes == sum(counts.values())
    assert gen.seconds > 0


async def test_same_seed_gives_the_same_names_and_uuids(store: FalkorStore, namespace: str) -> None:
    with anyio.fail_after(60):
        first = await generate(store, namespace, 20, seed=9)
        second = await generate(store, namespace, 20, seed=9)
        other = await generate(store, namespace, 20, seed=10)
    assert first.entity_names == second.entity_names
    assert first.entity_uuids == second.entity_uuids
    assert first.causal_uuids == second.causal_uuids
    assert first.entity_uuids != other.entity_uuids


async def test_generated_graph_answers_the_read_api(
    store: FalkorStore, namespace: str, embedder: Any
) -> None:
    with anyio.fail_after(60):
        gen = await generate(store, namespace, 30, seed=4, dimension=embedder.dimension)
        resolver = NameResolver(store, embedder)
        entities = EntityGraph(store, embedder, resolver)
        found = await entities.get(namespace, gen.entity_names[5])
        chain = await CausalGraph(store, embedder, resolver).downstream(
            namespace, gen.causal_uuids[0], depth=3
        )
    assert found.uuid == gen.entity_uuids[5]
    assert chain is not None


async def test_too_few_entities_is_refused_with_the_reason(
    store: FalkorStore, namespace: str
) -> None:
    from polyg_core.errors import InvalidInput

    with pytest.raises(InvalidInput, match="at least 2"):
        await generate(store, namespace, 1)


async def _shape(store: FalkorStore, ns: str) -> dict[str, set[str]]:
    """Property names per node label and relationship type of a namespace."""
    shape: dict[str, set[str]] = {}
    nodes = await store.query(
        ns, "MATCH (n) UNWIND labels(n) AS l RETURN l, keys(n)", read_only=True
    )
    rels = await store.query(ns, "MATCH ()-[r]->() RETURN type(r), keys(r)", read_only=True)
    for name, keys in [*nodes.rows, *rels.rows]:
        shape.setdefault(str(name), set()).update(str(k) for k in keys)
    return shape


async def _write_through_graphs(store: FalkorStore, ns: str, embedder: Any) -> None:
    resolver = NameResolver(store, embedder)
    entities = EntityGraph(store, embedder, resolver)
    temporal = TemporalGraph(store, embedder, resolver)
    causal = CausalGraph(store, embedder, resolver)
    semantic = SemanticGraph(store, embedder, resolver, entities=entities)
    await entities.add(ns, "Quillon ledger", "service")
    await entities.add(ns, "Marnie Ostrow", "person")
    await entities.link(ns, "Marnie Ostrow", "Quillon ledger", "owns")
    await temporal.add_event(
        ns, "Quillon ledger deployed", "2025-03-01", entities=["Quillon ledger"]
    )
    await temporal.add_event(ns, "Quillon ledger paged", "2025-03-02", entities=["Quillon ledger"])
    await temporal.add_fact(ns, "Quillon ledger", "owned_by", "team-7", "2025-01-05")
    await causal.add_node(ns, "ledger disk full", entities=["Quillon ledger"])
    await causal.add_link(ns, "ledger disk full", "ledger write errors", 0.8)
    await semantic.add_concept(ns, "ledger concept", "how ledgers work", ["Quillon ledger"])
    await semantic.add_memory(ns, "Marnie reviewed the ledger", concepts=["ledger concept"])


async def test_generated_graph_has_the_shape_the_graphs_write(
    store: FalkorStore, namespace: str, embedder: Any
) -> None:
    written = f"{namespace}-written"
    try:
        with anyio.fail_after(120):
            await generate(store, namespace, 20, seed=5, dimension=embedder.dimension)
            await _write_through_graphs(store, written, embedder)
            generated, expected = await _shape(store, namespace), await _shape(store, written)
    finally:
        await store.delete_graph(written)
    labels = ("E_Entity", "T_Event", "T_Fact", "C_Node", "S_Concept", "S_Memory")
    types = ("E_RELATES", "T_BEFORE", "X_INVOLVES", "C_CAUSES", "X_AFFECTS")
    for name in (*labels, *types, "X_REPRESENTS", "S_ABOUT"):
        assert name in expected, name
        assert generated.get(name) == expected[name], name
