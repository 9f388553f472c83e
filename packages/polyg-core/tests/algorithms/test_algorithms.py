"""Analysis algorithms on GraphData, checked by hand and against networkx on random graphs."""

from __future__ import annotations

import itertools

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polyg_core.algorithms import operations as alg
from polyg_core.algorithms.model import EdgeData, GraphData, NodeData
from polyg_core.errors import InvalidInput, NodeNotFound

# --- helpers -------------------------------------------------------------------------


@st.composite
def graphs(draw: st.DrawFn, max_nodes: int = 9, max_edges: int = 22) -> GraphData:
    """Random directed multigraphs with self-loops and parallel edges (ids n0..n{k})."""
    n = draw(st.integers(1, max_nodes))
    ids = [f"n{i}" for i in range(n)]
    pairs = draw(
        st.lists(
            st.tuples(st.sampled_from(ids), st.sampled_from(ids), st.sampled_from(["a", "b"])),
            max_size=max_edges,
        )
    )
    return GraphData(
        nodes=[NodeData(i, i.upper()) for i in ids],
        edges=[EdgeData(u, v, rel) for u, v, rel in pairs],
    )


@st.composite
def dags(draw: st.DrawFn) -> GraphData:
    """Random DAGs: edges only go from a lower to a higher node number."""
    n = draw(st.integers(2, 9))
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=25))
    edges = [EdgeData(f"n{min(u, v)}", f"n{max(u, v)}") for u, v in pairs if u != v]
    return GraphData(nodes=[NodeData(f"n{i}", f"n{i}") for i in range(n)], edges=edges)


def to_nx(g: GraphData) -> nx.DiGraph[str]:
    out: nx.DiGraph[str] = nx.DiGraph()
    out.add_nodes_from(n.id for n in g.nodes)
    out.add_edges_from((e.source, e.target) for e in g.edges)
    return out


def partition(components: list[list[str]]) -> set[frozenset[str]]:
    return {frozenset(c) for c in components}


def canonical(cycle: list[str]) -> tuple[str, ...]:
    start = cycle.index(min(cycle))
    return tuple(cycle[start:] + cycle[:start])


def reachable(g: GraphData) -> set[tuple[str, str]]:
    graph = to_nx(g)
    # typeshed's networkx stubs leave `source` and `**backend_kwargs` untyped.
    return {(u, v) for u in graph for v in nx.descendants(graph, u)}  # pyright: ignore[reportUnknownMemberType]


CHAIN = GraphData.from_edges(
    [("api", "auth", "calls"), ("auth", "db", "queries"), ("api", "users"), ("users", "db")]
)

# --- shortest paths -------------------------------------------------------------------


def test_shortest_path_returns_ids_names_and_relations() -> None:
    result = alg.shortest_path(CHAIN, "api", "db")
    assert result is not None
    assert [n.id for n in result.path] == ["api", "auth", "db"]
    assert result.length == 2
    assert result.relations == ["calls", "queries"]
    assert result.total_weight is None


def test_shortest_path_is_none_when_target_unreachable() -> None:
    assert alg.shortest_path(CHAIN, "db", "api") is None


def test_shortest_path_unknown_node_names_it() -> None:
    with pytest.raises(NodeNotFound, match="nope"):
        alg.shortest_path(CHAIN, "api", "nope")


def test_weighted_shortest_path_prefers_cheaper_longer_route() -> None:
    g = GraphData.from_edges([("a", "b"), ("b", "c"), ("a", "c")])
    g.edges[0].weight = 1.0
    g.edges[1].properties["cost"] = 1.0
    g.edges[2].weight = 5.0
    g.edges[0].properties["cost"] = 1.0
    g.edges[2].properties["cost"] = "5"
    by_weight = alg.shortest_path(g, "a", "c", weight="weight", default_weight=1.0)
    assert by_weight is not None and [n.id for n in by_weight.path] == ["a", "b", "c"]
    assert by_weight.total_weight == 2.0
    by_cost = alg.shortest_path(g, "a", "c", weight="cost")
    assert by_cost is not None and by_cost.total_weight == 2.0


def test_weighted_shortest_path_refuses_negative_weight() -> None:
    g = GraphData.from_edges([("a", "b")])
    g.edges[0].weight = -1.0
    with pytest.raises(InvalidInput, match="weights must be finite numbers >= 0"):
        alg.shortest_path(g, "a", "b", weight="weight")


@settings(max_examples=40)
@given(graphs(), st.data())
def test_shortest_path_lengths_match_networkx(g: GraphData, data: st.DataObject) -> None:
    ids = [n.id for n in g.nodes]
    source, target = data.draw(st.sampled_from(ids)), data.draw(st.sampled_from(ids))
    reference = to_nx(g)
    result = alg.shortest_path(g, source, target)
    if nx.has_path(reference, source, target):
        assert result is not None
        assert result.length == nx.shortest_path_length(reference, source, target)  # pyright: ignore[reportUnknownMemberType]
        hops = list(itertools.pairwise([n.id for n in result.path]))
        assert all(reference.has_edge(u, v) for u, v in hops)
    else:
        assert result is None


@settings(max_examples=40)
@given(graphs(), st.data())
def test_weighted_shortest_path_matches_networkx_dijkstra(
    g: GraphData, data: st.DataObject
) -> None:
    for edge in g.edges:
        edge.weight = float(data.draw(st.integers(0, 9)))
    ids = [n.id for n in g.nodes]
    source, target = data.draw(st.sampled_from(ids)), data.draw(st.sampled_from(ids))
    reference: nx.DiGraph[str] = nx.DiGraph()
    reference.add_nodes_from(ids)
    for e in g.edges:
        w = e.weight or 0.0
        if not reference.has_edge(e.source, e.target) or reference[e.source][e.target]["w"] > w:
            reference.add_edge(e.source, e.target, w=w)
    result = alg.shortest_path(g, source, target, weight="weight")
    if nx.has_path(reference, source, target):
        assert result is not None
        expected = nx.dijkstra_path_length(reference, source, target, weight="w")
        assert result.total_weight == pytest.approx(expected)
    else:
        assert result is None


# --- all paths ------------------------------------------------------------------------


def test_all_paths_lists_shortest_first() -> None:
    g = GraphData.from_edges([("a", "d"), ("a", "b"), ("b", "c"), ("c", "d"), ("b", "d")])
    result = alg.all_paths(g, "a", "d", max_length=5, max_paths=10)
    assert [[n.id for n in p] for p in result.paths] == [
        ["a", "d"],
        ["a", "b", "d"],
        ["a", "b", "c", "d"],
    ]
    assert not result.truncated


def test_all_paths_reports_truncation_at_the_cap() -> None:
    # A ladder with 2^6 paths from s to t.
    edges = [(f"x{i}", f"{side}{i}") for i in range(6) for side in "uv"]
    edges += [(f"{side}{i}", f"x{i + 1}") for i in range(6) for side in "uv"]
    g = GraphData.from_edges(edges)
    result = alg.all_paths(g, "x0", "x6", max_length=12, max_paths=5)
    assert result.count == 5
    assert result.truncated and result.reason == "more than 5 paths"


def test_all_paths_same_node_points_to_find_cycles() -> None:
    with pytest.raises(InvalidInput, match="find_cycles"):
        alg.all_paths(CHAIN, "api", "api")


@settings(max_examples=40)
@given(graphs(max_nodes=7, max_edges=16), st.data())
def test_all_paths_match_networkx_simple_paths(g: GraphData, data: st.DataObject) -> None:
    ids = [n.id for n in g.nodes]
    source = data.draw(st.sampled_from(ids))
    target = data.draw(st.sampled_from(ids))
    if source == target:
        return
    result = alg.all_paths(g, source, target, max_length=4, max_paths=10_000)
    expected = {tuple(p) for p in nx.all_simple_paths(to_nx(g), source, target, cutoff=4)}
    got = [tuple(n.id for n in p) for p in result.paths]
    assert set(got) == expected and len(got) == len(expected)
    assert [len(p) for p in got] == sorted(len(p) for p in got)


# --- components, cycles, reduction ---------------------------------------------------


@settings(max_examples=50)
@given(graphs())
def test_components_partition_matches_networkx(g: GraphData) -> None:
    reference = to_nx(g)
    weak = alg.connected_components(g)
    strong = alg.connected_components(g, strong=True)
    assert partition([[n.id for n in c] for c in weak.components]) == {
        frozenset(c) for c in nx.weakly_connected_components(reference)
    }
    assert partition([[n.id for n in c] for c in strong.components]) == {
        frozenset(c) for c in nx.strongly_connected_components(reference)
    }
    assert weak.count == len(weak.components)
    sizes = [len(c) for c in strong.components]
    assert sizes == sorted(sizes, reverse=True)


def test_components_cap_keeps_count() -> None:
    g = GraphData.from_edges([("a", "b"), ("c", "d"), ("e", "f")])
    result = alg.connected_components(g, max_components=2)
    assert len(result.components) == 2 and result.count == 3 and result.truncated


@settings(max_examples=50)
@given(graphs(max_nodes=7, max_edges=14), st.sampled_from([None, 3]))
def test_cycles_match_networkx(g: GraphData, max_length: int | None) -> None:
    reference = to_nx(g)
    result = alg.find_cycles(g, max_cycles=10_000, max_length=max_length)
    assert result.has_cycles == (not nx.is_directed_acyclic_graph(reference))
    got = {canonical([n.id for n in c]) for c in result.cycles}
    expected = {canonical(c) for c in nx.simple_cycles(reference, length_bound=max_length)}
    assert got == expected
    assert len(result.cycles) == len(got)


def test_find_cycles_cap_and_exact_has_cycles() -> None:
    g = GraphData.from_edges([("a", "b"), ("b", "a"), ("b", "c"), ("c", "a"), ("d", "d")])
    capped = alg.find_cycles(g, max_cycles=1)
    assert len(capped.cycles) == 1 and capped.truncated and capped.has_cycles
    long_only = GraphData.from_edges([("a", "b"), ("b", "c"), ("c", "a")])
    bounded = alg.find_cycles(long_only, max_length=2)
    assert bounded.cycles == [] and bounded.has_cycles


@settings(max_examples=50)
@given(dags())
def test_transitive_reduction_of_dag_matches_networkx_and_keeps_reachability(
    g: GraphData,
) -> None:
    result = alg.transitive_reduction(g)
    assert result.is_dag
    removed = {(e.source.id, e.target.id) for e in result.removable}
    kept = GraphData(g.nodes, [e for e in g.edges if (e.source, e.target) not in removed])
    assert reachable(kept) == reachable(g)
    assert {(e.source, e.target) for e in kept.edges} == set(
        nx.transitive_reduction(to_nx(g)).edges
    )


@settings(max_examples=40)
@given(graphs())
def test_transitive_reduction_with_cycles_keeps_reachability(g: GraphData) -> None:
    result = alg.transitive_reduction(g)
    removed = {(e.source.id, e.target.id, e.relation) for e in result.removable}
    kept = GraphData(
        g.nodes, [e for e in g.edges if (e.source, e.target, e.relation) not in removed]
    )
    assert reachable(kept) == reachable(g)
    if not result.is_dag:
        assert "condensation" in result.note


def test_transitive_reduction_reports_shortcut_with_relation() -> None:
    g = GraphData.from_edges([("a", "b", "x"), ("b", "c", "x"), ("a", "c", "shortcut")])
    result = alg.transitive_reduction(g)
    assert [(e.source.id, e.target.id, e.relation) for e in result.removable] == [
        ("a", "c", "shortcut")
    ]


# --- rankings -------------------------------------------------------------------------


@settings(max_examples=40)
@given(graphs())
def test_pagerank_close_to_networkx(g: GraphData) -> None:
    result = alg.pagerank(g, top_n=None)
    expected = nx.pagerank(to_nx(g), alpha=0.85, tol=1e-12, max_iter=1000)
    got = {r.node.id: r.score for r in result.rankings}
    assert got == pytest.approx(expected, abs=1e-6)
    assert sum(got.values()) == pytest.approx(1.0)


def test_pagerank_seed_example_ranks_database_first() -> None:
    g = GraphData.from_edges([("api", "auth"), ("api", "users"), ("auth", "db"), ("users", "db")])
    result = alg.pagerank(g, top_n=3)
    assert result.rankings[0].node.id == "db"
    assert len(result.rankings) == 3 and result.converged


@settings(max_examples=40)
@given(graphs(), st.data(), st.floats(0.1, 0.9))
def test_personalized_pagerank_matches_networkx(
    g: GraphData, data: st.DataObject, restart: float
) -> None:
    ids = [n.id for n in g.nodes]
    seeds = data.draw(st.dictionaries(st.sampled_from(ids), st.floats(0.1, 5), min_size=1))
    result = alg.personalized_pagerank(
        g, seeds, restart=restart, top_n=None, tol=1e-13, max_iter=2000
    )
    got = {r.node.id: r.score for r in result.rankings}
    assert sum(got.values()) == pytest.approx(1.0)
    expected = nx.pagerank(
        to_nx(g), alpha=1 - restart, personalization=seeds, tol=1e-13, max_iter=2000
    )
    assert got == pytest.approx(expected, abs=1e-6)


def test_personalized_pagerank_returns_dangling_mass_to_seeds() -> None:
    g = GraphData.from_edges([("seed", "sink"), ("other", "sink")])
    result = alg.personalized_pagerank(g, {"seed": 1.0}, restart=0.5, top_n=None)
    scores = {r.node.id: r.score for r in result.rankings}
    assert scores["other"] == pytest.approx(0.0)
    assert scores["seed"] > scores["sink"] > 0


def test_personalized_pagerank_refuses_bad_seeds() -> None:
    with pytest.raises(NodeNotFound):
        alg.personalized_pagerank(CHAIN, {"ghost": 1.0})
    with pytest.raises(InvalidInput, match="positive weight"):
        alg.personalized_pagerank(CHAIN, {"api": 0.0})


def test_personalized_pagerank_undirected_reaches_upstream_nodes() -> None:
    g = GraphData.from_edges([("a", "b")])
    directed = alg.personalized_pagerank(g, {"b": 1.0}, top_n=None)
    both = alg.personalized_pagerank(g, {"b": 1.0}, top_n=None, directed=False)
    assert {r.node.id: r.score for r in directed.rankings}["a"] == pytest.approx(0.0)
    assert {r.node.id: r.score for r in both.rankings}["a"] > 0.1


@settings(max_examples=40)
@given(graphs())
def test_betweenness_matches_networkx(g: GraphData) -> None:
    result = alg.betweenness(g, top_n=None)
    expected = nx.betweenness_centrality(to_nx(g), normalized=True)
    assert {r.node.id: r.score for r in result.rankings} == pytest.approx(expected, abs=1e-9)


def test_degree_centrality_counts_every_edge() -> None:
    g = GraphData.from_edges([("a", "b", "x"), ("a", "b", "y"), ("c", "a")])
    result = alg.degree_centrality(g, mode="out", top_n=1)
    top = result.rankings[0]
    assert (top.node.id, top.in_degree, top.out_degree, top.total) == ("a", 1, 2, 3)
    assert top.score == pytest.approx(1.0)
    with pytest.raises(InvalidInput, match="mode"):
        alg.degree_centrality(g, mode="sideways")  # type: ignore[arg-type]


# --- subgraph and info ----------------------------------------------------------------


def test_subgraph_expands_both_directions_by_hops() -> None:
    zero = alg.subgraph(CHAIN, ["auth"])
    assert [n.id for n in zero.graph.nodes] == ["auth"] and zero.graph.edges == []
    one = alg.subgraph(CHAIN, ["auth"], hops=1)
    assert {n.id for n in one.graph.nodes} == {"api", "auth", "db"}
    assert {(e.source, e.target) for e in one.graph.edges} == {("api", "auth"), ("auth", "db")}
    capped = alg.subgraph(CHAIN, ["auth"], hops=2, max_nodes=2)
    assert len(capped.graph.nodes) == 2 and capped.truncated


def test_graph_info_summarises() -> None:
    g = GraphData(
        nodes=[NodeData("a", "A", "svc"), NodeData("b", "B", "svc"), NodeData("c", "C", "db")],
        edges=[
            EdgeData("a", "b", "calls"),
            EdgeData("a", "b", "uses"),
            EdgeData("b", "c", "calls"),
        ],
    )
    info = alg.graph_info(g)
    assert (info.node_count, info.edge_count) == (3, 3)
    assert info.density == pytest.approx(2 / 6)
    assert info.is_connected and info.is_dag and info.component_count == 1
    assert info.node_types == {"svc": 2, "db": 1}
    assert info.relation_types == {"calls": 2, "uses": 1}
    assert alg.graph_info(GraphData()).node_count == 0


def test_edges_naming_unknown_nodes_are_refused() -> None:
    g = GraphData(nodes=[NodeData("a", "a")], edges=[EdgeData("a", "zz")])
    with pytest.raises(InvalidInput, match="'zz'"):
        alg.pagerank(g)


def test_time_budget_stops_path_search() -> None:
    # Complete digraph on 12 nodes: billions of simple paths.
    ids = [f"k{i}" for i in range(12)]
    g = GraphData.from_edges([(u, v) for u in ids for v in ids if u != v])
    result = alg.all_paths(g, "k0", "k1", max_length=11, max_paths=10**9, time_budget=0.05)
    assert result.truncated and result.reason == "time budget exhausted"
    cycles = alg.find_cycles(g, max_cycles=10**9, max_length=12, time_budget=0.05)
    assert cycles.truncated and cycles.reason == "time budget exhausted"
