"""Nodes and edges of scratch graphs: seed 002 §6.4 and Part 9 examples, against real FalkorDB."""

from __future__ import annotations

import anyio
import pytest
from polyg_core.errors import AmbiguousName, InvalidInput, NodeNotFound
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.scratch import NameNotExact, ScratchGraphs
from polyg_core.storage.store import FalkorStore
from polyg_shared.engine import EdgeSpec, NodeSpec

pytestmark = pytest.mark.anyio


@pytest.fixture
def scratch(store: FalkorStore, embedder: Embedder) -> ScratchGraphs:
    return ScratchGraphs(store, embedder)


AUTH_FLOW = [
    NodeSpec(label="LoginController", type="controller"),
    NodeSpec(label="AuthService", type="service"),
    NodeSpec(label="UserRepository", type="repository"),
    NodeSpec(label="PostgresDB", type="database"),
]


async def test_add_nodes_counts_new_and_existing(scratch: ScratchGraphs, namespace: str) -> None:
    with anyio.fail_after(60):
        first = await scratch.add_nodes(AUTH_FLOW, graph=namespace)
        again = await scratch.add_nodes(AUTH_FLOW, graph=namespace)
    assert (first.added, first.existing) == (4, 0)
    assert (again.added, again.existing) == (0, 4)
    assert [r.matched for r in again.results] == ["exact"] * 4
    listed = await scratch.list_nodes(graph=namespace)
    assert [n.label for n in listed.nodes] == sorted(n.label for n in AUTH_FLOW)
    assert listed.nodes[0].type == "service"


async def test_add_node_returns_existing_for_normalised_and_similar_names(
    scratch: ScratchGraphs, namespace: str
) -> None:
    with anyio.fail_after(60):
        await scratch.add_nodes(AUTH_FLOW, graph=namespace)
        same = await scratch.add_node("auth service", graph=namespace)
        similar = await scratch.add_node("user repositories", graph=namespace)
        new = await scratch.add_node("PaymentService", graph=namespace)
    assert not same.created and same.node.label == "AuthService" and same.matched == "normalized"
    assert not similar.created and similar.node.label == "UserRepository"
    assert similar.matched == "embedding" and similar.similarity >= 0.85
    assert new.created and new.matched == "created"


async def test_batch_duplicates_become_one_node(scratch: ScratchGraphs, namespace: str) -> None:
    specs = [NodeSpec(label="AuthService"), NodeSpec(label="auth_service"), NodeSpec(label="Cache")]
    out = await scratch.add_nodes(specs, graph=namespace)
    assert (out.added, out.existing) == (2, 1)
    assert out.results[1].node.label == "AuthService"
    assert (await scratch.list_nodes(graph=namespace)).total == 2


async def test_example_1_shortest_flow_edges(scratch: ScratchGraphs, namespace: str) -> None:
    await scratch.add_nodes(AUTH_FLOW, graph=namespace)
    out = await scratch.add_edges(
        [
            EdgeSpec(source="LoginController", target="AuthService", relation="calls"),
            EdgeSpec(source="AuthService", target="UserRepository", relation="queries"),
            EdgeSpec(source="UserRepository", target="PostgresDB", relation="connects"),
        ],
        graph=namespace,
    )
    assert (out.added, out.failed) == (3, [])
    edges = await scratch.find_edges(source="AuthService", graph=namespace)
    assert [(e.source, e.target, e.relation) for e in edges.edges] == [
        ("AuthService", "UserRepository", "queries")
    ]


async def test_example_3_fuzzy_endpoints_show_what_matched(
    scratch: ScratchGraphs, namespace: str
) -> None:
    await scratch.add_nodes(AUTH_FLOW, graph=namespace)
    with anyio.fail_after(30):
        out = await scratch.add_edge("auth service", "user repo", "validates_with", graph=namespace)
    assert out.created
    assert (out.edge.source, out.edge.target, out.edge.relation) == (
        "AuthService",
        "UserRepository",
        "validates_with",
    )
    assert (out.source_matched, out.target_matched) == ("AuthService", "UserRepository")
    assert (out.source_match, out.target_match) == ("normalized", "embedding")
    again = await scratch.add_edge(
        "AuthService", "UserRepository", "validates_with", graph=namespace
    )
    assert not again.created


async def test_several_relations_between_one_pair(scratch: ScratchGraphs, namespace: str) -> None:
    await scratch.add_nodes(AUTH_FLOW, graph=namespace)
    await scratch.add_edge("AuthService", "UserRepository", "calls", graph=namespace)
    await scratch.add_edge("AuthService", "UserRepository", "imports", graph=namespace)
    edges = await scratch.find_edges("AuthService", "UserRepository", graph=namespace)
    assert [e.relation for e in edges.edges] == ["calls", "imports"]
    removed = await scratch.remove_edge("AuthService", "UserRepository", "calls", graph=namespace)
    assert removed.success and removed.removed == 1
    edges = await scratch.find_edges("AuthService", "UserRepository", graph=namespace)
    assert [e.relation for e in edges.edges] == ["imports"]


async def test_ambiguous_service_returns_candidates(scratch: ScratchGraphs, namespace: str) -> None:
    await scratch.add_nodes(
        [NodeSpec(label=n) for n in ("AuthService", "PaymentService", "EmailService", "Database")],
        graph=namespace,
    )
    with pytest.raises(AmbiguousName) as info:
        await scratch.add_edge("Service", "Database", "connects_to", graph=namespace)
    names = {c.name for c in info.value.candidates}
    assert names == {"AuthService", "PaymentService", "EmailService"}
    assert "Service" in str(info.value)


async def test_missing_endpoint_is_not_created(scratch: ScratchGraphs, namespace: str) -> None:
    await scratch.add_nodes(AUTH_FLOW, graph=namespace)
    with pytest.raises(NodeNotFound) as info:
        await scratch.add_edge("AuthService", "Kafka", "publishes", graph=namespace)
    assert "Kafka" in str(info.value)
    assert (await scratch.list_nodes(graph=namespace)).total == 4


async def test_add_edges_reports_failures_and_adds_the_good_ones(
    scratch: ScratchGraphs, namespace: str
) -> None:
    await scratch.add_nodes(AUTH_FLOW, graph=namespace)
    out = await scratch.add_edges(
        [
            EdgeSpec(source="AuthService", target="PostgresDB", relation="reads"),
            EdgeSpec(source="AuthService", target="Kafka", relation="publishes"),
            EdgeSpec(source="AuthService", target="PostgresDB", relation="reads"),
        ],
        graph=namespace,
    )
    assert out.added == 1 and out.existing == 1
    assert len(out.failed) == 1 and out.failed[0].edge.target == "Kafka"
    assert "Kafka" in out.failed[0].reason


async def test_find_node_exact_fuzzy_and_nothing(scratch: ScratchGraphs, namespace: str) -> None:
    await scratch.add_nodes(AUTH_FLOW, graph=namespace)
    exact = await scratch.find_node("AuthService", graph=namespace)
    assert [(m.label, m.similarity) for m in exact.matches] == [("AuthService", 1.0)]
    fuzzy = await scratch.find_node("user repo", graph=namespace)
    assert fuzzy.matches[0].label == "UserRepository" and fuzzy.matches[0].similarity < 1.0
    assert fuzzy.matches[0].type == "repository"
    nothing = await scratch.find_node("banana smoothie recipe", graph=namespace)
    assert nothing.matches == []


async def test_remove_node_needs_exact_name(scratch: ScratchGraphs, namespace: str) -> None:
    await scratch.add_nodes(AUTH_FLOW, graph=namespace)
    await scratch.add_edge("AuthService", "UserRepository", "calls", graph=namespace)
    await scratch.add_edge("LoginController", "AuthService", "calls", graph=namespace)
    with pytest.raises(NameNotExact, match="be specific") as info:
        await scratch.remove_node("user repo", graph=namespace)
    assert info.value.candidates[0].name == "UserRepository"
    with pytest.raises(NodeNotFound):
        await scratch.remove_node("Kafka", graph=namespace)
    out = await scratch.remove_node("auth service", graph=namespace)
    assert out.success and out.label == "AuthService" and out.edges_removed == 2
    assert (await scratch.list_nodes(graph=namespace)).total == 3


async def test_neighbors_by_direction_and_relation(scratch: ScratchGraphs, namespace: str) -> None:
    await scratch.add_nodes(AUTH_FLOW, graph=namespace)
    await scratch.add_edge("LoginController", "AuthService", "calls", graph=namespace)
    await scratch.add_edge("AuthService", "UserRepository", "queries", graph=namespace)
    await scratch.add_edge("AuthService", "PostgresDB", "reads", graph=namespace)
    both = await scratch.get_neighbors("auth service", graph=namespace)
    assert both.node_matched == "AuthService"
    assert {(n.label, n.direction) for n in both.neighbors} == {
        ("UserRepository", "out"),
        ("PostgresDB", "out"),
        ("LoginController", "in"),
    }
    incoming = await scratch.get_neighbors("AuthService", direction="in", graph=namespace)
    assert [n.label for n in incoming.neighbors] == ["LoginController"]
    reads = await scratch.get_neighbors(
        "AuthService", direction="out", relation="reads", graph=namespace
    )
    assert [n.label for n in reads.neighbors] == ["PostgresDB"]


async def test_node_tools_refuse_memory_graphs(
    scratch: ScratchGraphs, store: FalkorStore, namespace: str
) -> None:
    await store.ensure_schema(namespace)  # a memory namespace
    with pytest.raises(InvalidInput, match="memory graph"):
        await scratch.add_node("X", graph=namespace)


async def test_labels_that_differ_only_by_number_are_different_nodes(
    scratch: ScratchGraphs, namespace: str
) -> None:
    # Embeddings put "queue gateway 347" next to "queue gateway 575" (cosine ~0.87); a
    # match by meaning must not merge them, here or in a later batch.
    first = await scratch.add_nodes(
        [NodeSpec(label="queue gateway 575"), NodeSpec(label="queue gateway 347")],
        graph=namespace,
    )
    assert first.added == 2
    later = await scratch.add_node("queue gateway 348", graph=namespace)
    assert later.created
    again = await scratch.add_node("Queue Gateway 347", graph=namespace)
    assert not again.created and again.node.label == "queue gateway 347"
    edge = await scratch.add_edge(
        "queue gateway 347", "queue gateway 575", "calls", graph=namespace
    )
    assert (edge.source_matched, edge.target_matched) == ("queue gateway 347", "queue gateway 575")
    assert (edge.source_match, edge.target_match) == ("exact", "exact")
    with pytest.raises(NodeNotFound):
        await scratch.add_edge("queue gateway 999", "queue gateway 575", "calls", graph=namespace)


@pytest.mark.parametrize(
    "labels",
    [
        ["deploy cache", "cache deploy", "cache deploy"],
        ["deploy cache", "cache deploy", "Cache Deploy", "deploy cache"],
        ["cache deploy", "cache deploy", "deploy cache", "deploy  cache"],
    ],
)
async def test_near_twins_and_duplicates_in_one_batch_resolve_to_one_node(
    scratch: ScratchGraphs, namespace: str, labels: list[str]
) -> None:
    with anyio.fail_after(60):
        out = await scratch.add_nodes([NodeSpec(label=label) for label in labels], graph=namespace)
        listed = await scratch.list_nodes(graph=namespace)
    assert out.added == 1 and out.existing == len(labels) - 1
    assert len(listed.nodes) == 1
    node = listed.nodes[0]
    assert node.label == labels[0]
    assert all(r.node.label == node.label for r in out.results)
    assert out.results[0].created and out.results[0].matched == "created"
    for label, result in zip(labels[1:], out.results[1:], strict=True):
        assert not result.created
        expected = "exact" if label == node.label else None
        if expected:
            assert result.matched == expected
        else:
            assert result.matched in ("normalized", "embedding")


async def test_a_batch_over_the_cap_is_refused_with_the_limit(
    scratch: ScratchGraphs, namespace: str
) -> None:
    from polyg_shared.engine import MAX_ADD_BATCH

    nodes = [NodeSpec(label=f"n{i}") for i in range(MAX_ADD_BATCH + 1)]
    edges = [EdgeSpec(source="a", target="b", relation="r")] * (MAX_ADD_BATCH + 1)
    with pytest.raises(InvalidInput, match=f"at most {MAX_ADD_BATCH} nodes per call, got"):
        await scratch.add_nodes(nodes, graph=namespace)
    with pytest.raises(InvalidInput, match=f"at most {MAX_ADD_BATCH} edges per call"):
        await scratch.add_edges(edges, graph=namespace)
    assert (await scratch.list_nodes(graph=namespace)).nodes == []
