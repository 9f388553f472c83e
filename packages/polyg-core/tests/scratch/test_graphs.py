"""Named graphs: creation on use, listing, deletion, idle expiry."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator

import pytest
from polyg_core.errors import InvalidNamespace
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.scratch import GraphEngine
from polyg_core.storage.store import FalkorStore
from polyg_shared.engine import EdgeSpec, NodeSpec

pytestmark = pytest.mark.anyio


@pytest.fixture
def engine(store: FalkorStore, embedder: Embedder) -> GraphEngine:
    return GraphEngine(store, embedder)


@pytest.fixture
async def names(store: FalkorStore) -> AsyncIterator[list[str]]:
    made = [f"t_{uuid.uuid4().hex[:10]}_{i}" for i in range(3)]
    yield made
    for name in made:
        await store.delete_graph(name)


async def test_example_2_named_graphs_are_listed_with_counts(
    engine: GraphEngine, names: list[str]
) -> None:
    before, after, _ = names
    await engine.nodes.add_node("MonolithService", graph=before)
    await engine.nodes.add_node("AuthService", graph=after)
    await engine.nodes.add_node("UserService", graph=after)
    listed = {g.name: g for g in await engine.graphs.list_graphs()}
    assert (listed[before].node_count, listed[before].edge_count) == (1, 0)
    assert (listed[after].node_count, listed[after].edge_count) == (2, 0)
    assert listed[after].kind == "scratch"
    assert listed[after].created_at and listed[after].last_used_at


async def test_example_4_recovery_with_list_graphs_then_pagerank(
    engine: GraphEngine, names: list[str]
) -> None:
    codebase = names[0]
    await engine.nodes.add_nodes([NodeSpec(label=n) for n in ("A", "B", "C")], graph=codebase)
    await engine.nodes.add_edges(
        [
            EdgeSpec(source="A", target="C", relation="uses"),
            EdgeSpec(source="B", target="C", relation="uses"),
        ],
        graph=codebase,
    )
    fresh = GraphEngine(engine.store, engine.embedder)  # a new session: nothing remembered
    listed = {g.name: g for g in await fresh.graphs.list_graphs()}
    assert (listed[codebase].node_count, listed[codebase].edge_count) == (3, 2)
    ranks = await fresh.analysis.pagerank(top_n=1, graph=codebase)
    assert ranks.rankings[0].label == "C"


async def test_idle_scratch_graphs_expire_and_memory_graphs_stay(
    engine: GraphEngine, store: FalkorStore, names: list[str]
) -> None:
    old, recent, memory = names
    await engine.nodes.add_node("X", graph=old)
    await engine.nodes.add_node("Y", graph=recent)
    await store.ensure_schema(memory)  # kind "memory"
    long_ago = int((time.time() - 3 * 3600) * 1000)
    for ns in (old, memory):
        await store.query(ns, "MATCH (m:P_Meta) SET m.last_used_at = $t", {"t": long_ago})
    removed = await engine.graphs.expire_idle(ttl_s=7200)
    assert old in removed and recent not in removed and memory not in removed
    remaining = await store.list_graphs()
    assert old not in remaining and recent in remaining and memory in remaining
    assert await engine.graphs.expire_idle(ttl_s=0) == []


async def test_use_records_last_use_and_delete_graph(engine: GraphEngine, names: list[str]) -> None:
    ns = names[0]
    await engine.nodes.add_node("X", graph=ns)
    first = (await engine.graphs.summary(ns)).last_used_at
    await engine.nodes.list_nodes(graph=ns)
    assert (await engine.graphs.summary(ns)).last_used_at >= first  # type: ignore[operator]
    assert await engine.graphs.delete_graph(ns) is True
    assert await engine.graphs.delete_graph(ns) is False


async def test_invalid_graph_names_are_refused(engine: GraphEngine) -> None:
    with pytest.raises(InvalidNamespace, match="letters, digits"):
        await engine.nodes.add_node("X", graph="no spaces allowed")
