"""Analysis tools on scratch graphs and memory namespaces, against real FalkorDB."""

from __future__ import annotations

import anyio
import pytest
from polyg_core.algorithms import operations as algorithms
from polyg_core.errors import InvalidInput
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.scratch import GraphAnalyzer, ScratchGraphs
from polyg_core.scratch.fetch import fetch_graph
from polyg_core.storage.store import FalkorStore
from polyg_shared.engine import EdgeSpec, NodeSpec

pytestmark = pytest.mark.anyio


@pytest.fixture
def scratch(store: FalkorStore, embedder: Embedder) -> ScratchGraphs:
    return ScratchGraphs(store, embedder)


@pytest.fixture
def analyzer(scratch: ScratchGraphs) -> GraphAnalyzer:
    return GraphAnalyzer(scratch)


async def _auth_flow(scratch: ScratchGraphs, ns: str) -> None:
    await scratch.add_nodes(
        [
            NodeSpec(label="LoginController", type="controller"),
            NodeSpec(label="AuthService", type="service"),
            NodeSpec(label="UserRepository", type="repository"),
            NodeSpec(label="PostgresDB", type="database"),
        ],
        graph=ns,
    )
    await scratch.add_edges(
        [
            EdgeSpec(source="LoginController", target="AuthService", relation="calls"),
            EdgeSpec(source="AuthService", target="UserRepository", relation="queries"),
            EdgeSpec(source="UserRepository", target="PostgresDB", relation="connects"),
        ],
        graph=ns,
    )


async def test_example_1_shortest_path_has_length_3(
    scratch: ScratchGraphs, analyzer: GraphAnalyzer, namespace: str
) -> None:
    with anyio.fail_after(60):
        await _auth_flow(scratch, namespace)
        out = await analyzer.shortest_path("LoginController", "PostgresDB", graph=namespace)
    assert out.path == ["LoginController", "AuthService", "UserRepository", "PostgresDB"]
    assert out.length == 3
    assert out.relations == ["calls", "queries", "connects"]
    back = await analyzer.shortest_path("PostgresDB", "LoginController", graph=namespace)
    assert back.path is None and back.reason and "no directed path" in back.reason


async def test_builtin_and_python_shortest_path_agree(
    scratch: ScratchGraphs, namespace: str
) -> None:
    await _auth_flow(scratch, namespace)
    await scratch.add_edge("LoginController", "UserRepository", "shortcut", graph=namespace)
    builtin = await GraphAnalyzer(scratch).shortest_path(
        "login controller", "postgres db", graph=namespace
    )
    python = await GraphAnalyzer(scratch, use_builtin=False).shortest_path(
        "login controller", "postgres db", graph=namespace
    )
    assert builtin.path == python.path == ["LoginController", "UserRepository", "PostgresDB"]
    assert builtin.length == python.length == 2


async def test_components_are_listed_largest_first(scratch: ScratchGraphs, namespace: str) -> None:
    await _auth_flow(scratch, namespace)
    await scratch.add_nodes([NodeSpec(label="Logger"), NodeSpec(label="Metrics")], graph=namespace)
    await scratch.add_edge("Logger", "Metrics", "feeds", graph=namespace)
    await scratch.add_node("Orphan", graph=namespace)
    builtin = await GraphAnalyzer(scratch).connected_components(graph=namespace)
    python = await GraphAnalyzer(scratch, use_builtin=False).connected_components(graph=namespace)
    assert builtin.count == python.count == 3
    assert [sorted(c) for c in builtin.components] == [sorted(c) for c in python.components]
    assert sorted(builtin.components[0]) == sorted(
        ["LoginController", "AuthService", "UserRepository", "PostgresDB"]
    )


async def test_rankings_cycles_reduction_and_info(
    scratch: ScratchGraphs, analyzer: GraphAnalyzer, namespace: str
) -> None:
    await _auth_flow(scratch, namespace)
    await scratch.add_edge("LoginController", "UserRepository", "reads", graph=namespace)
    pr = await analyzer.pagerank(top_n=2, graph=namespace)
    assert pr.rankings[0].label == "PostgresDB" and pr.total_nodes == 4
    full = await analyzer.pagerank(top_n=10, graph=namespace)
    assert abs(sum(r.score for r in full.rankings) - 1.0) < 1e-3
    deg = await analyzer.degree_centrality(graph=namespace)
    assert (deg.rankings[0].label, deg.rankings[0].total) in {
        ("UserRepository", 3),
        ("AuthService", 2),
    }
    bc = await analyzer.betweenness(graph=namespace)
    assert bc.rankings[0].label == "UserRepository"
    info = await analyzer.graph_info(graph=namespace)
    assert (info.node_count, info.edge_count, info.is_dag, info.is_connected) == (4, 4, True, True)
    assert info.node_types["service"] == 1 and info.relation_types["calls"] == 1
    assert info.kind == "scratch"
    cycles = await analyzer.find_cycles(graph=namespace)
    assert not cycles.has_cycles
    red = await analyzer.transitive_reduction(graph=namespace)
    assert [(e.source, e.target) for e in red.redundant] == [("LoginController", "UserRepository")]
    assert red.edges_removed == 0
    done = await analyzer.transitive_reduction(in_place=True, graph=namespace)
    assert done.edges_removed == 1
    assert (await analyzer.graph_info(graph=namespace)).edge_count == 3
    await scratch.add_edge("PostgresDB", "LoginController", "notifies", graph=namespace)
    cycles = await analyzer.find_cycles(graph=namespace)
    assert cycles.has_cycles and len(cycles.cycles[0]) == 4


async def test_all_paths_and_subgraph(
    scratch: ScratchGraphs, analyzer: GraphAnalyzer, namespace: str
) -> None:
    await _auth_flow(scratch, namespace)
    await scratch.add_edge("LoginController", "UserRepository", "reads", graph=namespace)
    paths = await analyzer.all_paths("LoginController", "PostgresDB", graph=namespace)
    assert paths.count == 2
    assert paths.paths[0] == ["LoginController", "UserRepository", "PostgresDB"]
    sub = await analyzer.subgraph(["AuthService"], hops=1, graph=namespace)
    assert {n.label for n in sub.nodes} == {"AuthService", "LoginController", "UserRepository"}
    assert len(sub.edges) == 3


async def test_memory_namespace_is_analysed_with_cross_links(
    scratch: ScratchGraphs, analyzer: GraphAnalyzer, store: FalkorStore, namespace: str
) -> None:
    await store.ensure_schema(namespace)
    await store.query(
        namespace,
        "CREATE (a:E_Entity {uuid: 'e1', name: 'Alice', name_key: 'alice', entity_type: 'person'}), "
        "(b:E_Entity {uuid: 'e2', name: 'Payments', name_key: 'payments', entity_type: 'project'}), "
        "(c:S_Concept {uuid: 's1', name: 'Billing', name_key: 'billing'}), "
        "(ev:T_Event {uuid: 't1', description: 'Payments outage'}), "
        "(f:T_Fact {uuid: 'f1', subject: 'Alice', predicate: 'leads', object: 'Payments'}), "
        "(a)-[:E_RELATES {relationship_type: 'works_on'}]->(b), "
        "(c)-[:X_REPRESENTS]->(b), (ev)-[:X_INVOLVES]->(b), (f)-[:X_INVOLVES]->(a)",
    )
    data = await fetch_graph(store, namespace, "memory")
    assert {n.name for n in data.nodes} == {
        "Alice",
        "Payments",
        "Billing",
        "Payments outage",
        "Alice leads Payments",
    }
    assert {e.relation for e in data.edges} == {"works_on", "X_REPRESENTS", "X_INVOLVES"}
    path = await analyzer.shortest_path("Billing", "Payments", graph=namespace)
    assert path.path == ["Billing", "Payments"]
    comps = await analyzer.connected_components(graph=namespace)
    assert comps.count == 1 and len(comps.components[0]) == 5
    info = await analyzer.graph_info(graph=namespace)
    assert info.kind == "memory" and info.node_types["person"] == 1
    with pytest.raises(InvalidInput, match="memory graph"):
        await analyzer.transitive_reduction(in_place=True, graph=namespace)


async def test_fetch_refuses_graphs_over_the_node_limit(
    scratch: ScratchGraphs, namespace: str
) -> None:
    await _auth_flow(scratch, namespace)
    small = GraphAnalyzer(scratch, max_nodes=3)
    with pytest.raises(InvalidInput, match="more than the 3"):
        await small.pagerank(graph=namespace)


async def test_python_and_fetched_graph_agree_on_info(
    scratch: ScratchGraphs, store: FalkorStore, namespace: str
) -> None:
    await _auth_flow(scratch, namespace)
    data = await fetch_graph(store, namespace, "scratch")
    assert algorithms.graph_info(data).edge_count == 3
    assert {e.relation for e in data.edges} == {"calls", "queries", "connects"}
