"""Import and export of named graphs: formats, round trips, malformed input."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
from polyg_core.errors import InvalidInput
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.scratch import GraphEngine
from polyg_core.scratch.fetch import fetch_graph
from polyg_core.storage.store import FalkorStore
from polyg_shared.engine import EdgeSpec, NodeSpec

pytestmark = pytest.mark.anyio


@pytest.fixture
def engine(store: FalkorStore, embedder: Embedder) -> GraphEngine:
    return GraphEngine(store, embedder)


@pytest.fixture
async def other(store: FalkorStore) -> AsyncIterator[str]:
    name = f"t_{uuid.uuid4().hex[:12]}"
    yield name
    await store.delete_graph(name)


async def _build(engine: GraphEngine, ns: str) -> None:
    await engine.nodes.add_nodes(
        [
            NodeSpec(label="api", type="service", properties={"owner": "team-a", "port": 8080}),
            NodeSpec(label="auth", type="service"),
            NodeSpec(label="users", type="service"),
            NodeSpec(label="database", type="store", properties={"engine": "postgres"}),
        ],
        graph=ns,
    )
    await engine.nodes.add_edges(
        [
            EdgeSpec(source="api", target="auth", relation="calls", properties={"sync": "yes"}),
            EdgeSpec(source="api", target="users", relation="calls"),
            EdgeSpec(source="auth", target="database", relation="queries"),
            EdgeSpec(source="users", target="database", relation="queries"),
            EdgeSpec(source="users", target="database", relation="writes"),
        ],
        graph=ns,
    )


def _shape(data: object) -> tuple[set[tuple[str, str | None]], set[tuple[str, str, str]]]:
    from polyg_core.algorithms.model import GraphData

    assert isinstance(data, GraphData)
    return (
        {(n.name, n.type) for n in data.nodes},
        {(e.source, e.target, e.relation) for e in data.edges},
    )


@pytest.mark.parametrize("fmt", ["json", "graphml", "dot", "csv", "tsv", "mermaid", "cypher"])
async def test_round_trip_into_a_fresh_graph(
    engine: GraphEngine, store: FalkorStore, namespace: str, other: str, fmt: str
) -> None:
    await _build(engine, namespace)
    exported = await engine.io.export_graph(fmt, graph=namespace)
    assert (exported.node_count, exported.edge_count) == (4, 5)
    out = await engine.io.import_graph(fmt, exported.content, graph=other)
    assert (out.nodes_added, out.edges_added, out.unparseable) == (4, 5, [])
    before = await fetch_graph(store, namespace, "scratch")
    after = await fetch_graph(store, other, "scratch")
    before_nodes, before_edges = _shape(before)
    after_nodes, after_edges = _shape(after)
    assert after_edges == before_edges
    if fmt == "mermaid":  # Mermaid carries no node types
        assert {n for n, _ in after_nodes} == {n for n, _ in before_nodes}
    else:
        assert after_nodes == before_nodes
    if fmt in ("json", "graphml", "cypher"):
        props = {n.name: n.properties for n in after.nodes}
        assert props["api"] == {"owner": "team-a", "port": 8080}
        edge_props = {(e.source, e.target, e.relation): e.properties for e in after.edges}
        assert edge_props[("api", "auth", "calls")] == {"sync": "yes"}


async def test_import_merges_into_an_existing_graph(engine: GraphEngine, namespace: str) -> None:
    await _build(engine, namespace)
    csv = "source,target,relation\napi,auth,calls\nAuth,Cache,reads\n"
    out = await engine.io.import_graph("csv", csv, graph=namespace)
    assert (out.nodes_added, out.nodes_existing) == (1, 3)  # "Auth" is the node "auth"
    assert (out.edges_added, out.edges_existing) == (1, 1)
    assert out.embedded
    found = await engine.nodes.find_node("cache", graph=namespace)
    assert found.matches[0].label == "Cache"


async def test_malformed_input_leaves_the_graph_untouched(
    engine: GraphEngine, store: FalkorStore, namespace: str
) -> None:
    await _build(engine, namespace)
    before = _shape(await fetch_graph(store, namespace, "scratch"))
    for fmt, text in (
        ("json", '{"nodes": [{"label": "x"}], "edges": ['),
        ("graphml", "<graphml><graph><node id='a'></graph>"),
        ("dot", "digraph { a -> ; }}}"),
    ):
        with pytest.raises(InvalidInput):
            await engine.io.import_graph(fmt, text, graph=namespace)
    assert _shape(await fetch_graph(store, namespace, "scratch")) == before


async def test_bad_csv_lines_are_reported_and_good_ones_imported(
    engine: GraphEngine, namespace: str
) -> None:
    csv = 'source,target,relation\na,b,calls\n"unclosed,c,d\n'
    out = await engine.io.import_graph("csv", csv, graph=namespace)
    assert out.edges_added >= 1
    assert out.unparseable and out.unparseable[0].message


async def test_unknown_format_is_refused(engine: GraphEngine, namespace: str) -> None:
    with pytest.raises(InvalidInput, match="format"):
        await engine.io.import_graph("yaml", "a: b", graph=namespace)


async def test_memory_graph_export(engine: GraphEngine, store: FalkorStore, namespace: str) -> None:
    await store.ensure_schema(namespace)
    await store.query(
        namespace,
        "CREATE (:E_Entity {uuid: 'e1', name: 'Alice', name_key: 'alice', entity_type: 'person'})"
        "-[:E_RELATES {relationship_type: 'works_on'}]->"
        "(:E_Entity {uuid: 'e2', name: 'Payments', name_key: 'payments', entity_type: 'project'})",
    )
    out = await engine.io.export_graph("csv", graph=namespace)
    assert "works_on" in out.content and (out.node_count, out.edge_count) == (2, 1)
    with pytest.raises(InvalidInput, match="memory graph"):
        await engine.io.import_graph("csv", "a,b,c\n", graph=namespace)
