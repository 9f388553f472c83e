"""The benchmark generator: seeded, proportional, and readable through the public API."""

from typing import Any

import anyio
import pytest
from polyg_bench.generate import generate
from polyg_core.graphs.causal import CausalGraph
from polyg_core.graphs.entity import EntityGraph
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
