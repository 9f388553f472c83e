"""Causal graph: links, node reuse, chains, depth limits, confidences, cycles."""

from __future__ import annotations

import math

import pytest
from polyg_core.errors import InvalidInput, NodeNotFound
from polyg_core.graphs.causal import DEFAULT_MATCH_THRESHOLD, CausalGraph
from polyg_core.graphs.entity_refs import lexically_compatible
from polyg_core.graphs.temporal import TemporalGraph
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.resolve import NameResolver
from polyg_core.storage.store import FalkorStore

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def cached(embedder: Embedder) -> Embedder:
    # The local embedder caches vectors itself; each text is embedded once per session.
    return embedder


@pytest.fixture
def graph(store: FalkorStore, cached: Embedder) -> CausalGraph:
    return CausalGraph(store, cached, NameResolver(store, cached))


async def count(store: FalkorStore, ns: str, cypher: str) -> int:
    return int((await store.query(ns, cypher)).scalar(0))


async def chain(graph: CausalGraph, namespace: str, *links: tuple[str, str, float]) -> None:
    """Add each (cause, effect, confidence) link."""
    for cause, effect, confidence in links:
        await graph.add_link(namespace, cause, effect, confidence)


# -- the matching threshold, measured with the real embedder ----------------------------------

SAME = [
    ("missing AUTH_SECRET", "AUTH_SECRET missing"),
    ("missing AUTH_SECRET", "AUTH_SECRET missing from config"),
    ("auth service crash", "Auth service crashed"),
    ("auth service crash", "crash of the auth service"),
    ("deploy v2.3.1", "deployment v2.3.1"),
    ("traffic spike from marketing campaign", "marketing campaign traffic spike"),
]
DIFFERENT = [
    ("auth service crash", "auth service restart"),
    ("missing AUTH_SECRET", "missing AUTH_TOKEN"),
    ("missing AUTH_SECRET", "missing DB_PASSWORD"),
    ("auth service crash", "payment service crash"),
    ("deploy v2.3.1", "deploy v2.3.2"),
    ("API latency increased", "API latency decreased"),
    ("auth service crash", "auth service did not crash"),
    ("missing AUTH_SECRET", "AUTH_SECRET added"),
    ("disk full on db-1", "disk full on db-2"),
    ("step one", "step two"),
    ("strong middle", "weak middle"),
    ("service A crashed", "service B crashed"),
    ("romeo service latency spike", "juliet service latency spike"),
    ("romeo database outage", "juliet database outage"),
]


async def test_threshold_joins_same_meaning_and_keeps_different_ones_apart(
    cached: Embedder,
) -> None:
    texts = sorted({t for pair in SAME + DIFFERENT for t in pair})
    vectors = dict(zip(texts, await cached.embed(texts), strict=True))

    def joins(a: str, b: str) -> bool:
        similarity = float(vectors[a] @ vectors[b])
        return similarity >= DEFAULT_MATCH_THRESHOLD and lexically_compatible(a, b)

    assert [pair for pair in SAME if not joins(*pair)] == []
    assert [pair for pair in DIFFERENT if joins(*pair)] == []


# -- add_link ----------------------------------------------------------------------------------


async def test_add_link_creates_two_nodes_and_a_link(graph: CausalGraph, namespace: str) -> None:
    result = await graph.add_link(
        namespace, "traffic spike", "connection pool exhausted", 0.92, evidence="campaign"
    )
    assert (result.cause_created, result.effect_created) == (True, True)
    assert (result.cause_matched_by, result.effect_matched_by) == ("created", "created")
    assert result.link.confidence == 0.92
    assert result.link.evidence == "campaign"
    assert result.link.cause == result.cause.uuid
    assert result.link.effect_description == "connection pool exhausted"
    assert "embedding" not in result.model_dump_json()


async def test_the_same_pair_again_updates_the_link_instead_of_adding_one(
    graph: CausalGraph, namespace: str, store: FalkorStore
) -> None:
    await graph.add_link(namespace, "cache cold", "slow pages", 0.4, evidence="first guess")
    again = await graph.add_link(namespace, "Cache cold.", "slow pages", 0.7)

    assert again.link.confidence == 0.7
    assert again.link.evidence == "first guess"
    assert await count(store, namespace, "MATCH (c:C_Node) RETURN count(c)") == 2
    assert await count(store, namespace, "MATCH ()-[r:C_CAUSES]->() RETURN count(r)") == 1


async def test_nodes_are_reused_by_normalised_description(
    graph: CausalGraph, namespace: str
) -> None:
    first = await graph.add_link(namespace, "missing AUTH_SECRET", "auth service crash", 0.95)
    second = await graph.add_link(namespace, "config reload", "Missing auth_secret!", 0.5)

    assert second.effect.uuid == first.cause.uuid
    assert second.effect_matched_by == "normalized"
    assert not second.effect_created


async def test_nodes_are_reused_by_similar_description(
    graph: CausalGraph, namespace: str, store: FalkorStore
) -> None:
    first = await graph.add_link(namespace, "missing AUTH_SECRET", "auth service crash", 0.95)
    second = await graph.add_link(
        namespace, "deploy v2.3.1", "AUTH_SECRET missing from config", 0.88
    )
    by_uuid = await graph.add_link(namespace, first.effect.uuid, "pager alert", 0.9)

    assert second.effect.uuid == first.cause.uuid
    assert second.effect_matched_by == "embedding"
    assert second.effect_similarity >= DEFAULT_MATCH_THRESHOLD
    assert by_uuid.cause_matched_by == "uuid"
    with pytest.raises(NodeNotFound, match="No causal named '0123456789abcdef0123456789abcdef'"):
        await graph.add_link(namespace, "0123456789abcdef0123456789abcdef", "pager alert", 0.9)
    assert await count(store, namespace, "MATCH (c:C_Node) RETURN count(c)") == 4


async def test_similar_but_different_descriptions_get_their_own_nodes(
    graph: CausalGraph, namespace: str
) -> None:
    first = await graph.add_link(namespace, "deploy v2.3.1", "API latency increased", 0.6)
    second = await graph.add_link(namespace, "deploy v2.3.2", "API latency decreased", 0.6)

    assert second.cause_created and second.effect_created
    assert {first.cause.uuid, first.effect.uuid}.isdisjoint({second.cause.uuid, second.effect.uuid})


async def test_self_links_are_refused(graph: CausalGraph, namespace: str) -> None:
    with pytest.raises(InvalidInput, match="cannot be its own cause"):
        await graph.add_link(namespace, "disk full", "Disk full", 0.5)
    with pytest.raises(InvalidInput, match="same causal node"):
        await graph.add_link(namespace, "missing AUTH_SECRET", "AUTH_SECRET missing", 0.5)
    link = await graph.add_link(namespace, "disk full", "writes fail", 0.5)
    with pytest.raises(InvalidInput, match="same causal node"):
        await graph.add_link(namespace, link.cause.uuid, "disk is full", 0.5)


@pytest.mark.parametrize("bad", [1.5, -0.1, math.nan, math.inf])
async def test_confidence_outside_zero_to_one_is_refused(
    graph: CausalGraph, namespace: str, bad: float
) -> None:
    with pytest.raises(InvalidInput, match="between 0 and 1"):
        await graph.add_link(namespace, "a thing", "another thing", bad)


async def test_links_reach_entities_and_events(
    graph: CausalGraph, namespace: str, store: FalkorStore
) -> None:
    temporal = TemporalGraph(graph.store, graph.embedder, graph.resolver)
    crashed = await temporal.add_event(namespace, "Auth service crashed", "2026-01-07T14:05:00Z")
    link = await graph.add_link(
        namespace,
        "missing AUTH_SECRET",
        "auth service crash",
        0.95,
        entities=["auth-service", "AUTH_SECRET"],
        events=[crashed.uuid, "Auth service crashed"],
    )
    assert link.events == [crashed.uuid]
    assert len(link.entities) == 2
    affected = await graph.nodes_for_entities(namespace, link.entities[:1])
    assert sorted(n.description for n in affected) == ["auth service crash", "missing AUTH_SECRET"]
    assert await count(store, namespace, "MATCH ()-[r:X_REFERS_TO]->() RETURN count(r)") == 2

    with pytest.raises(NodeNotFound, match="No event named 'moon landing'"):
        await graph.add_link(namespace, "a", "b", 0.5, events=["moon landing"])
    assert await count(store, namespace, "MATCH (c:C_Node) RETURN count(c)") == 2


async def test_add_solution_links_a_problem_to_its_fix(
    graph: CausalGraph, namespace: str, store: FalkorStore
) -> None:
    await graph.add_link(namespace, "missing AUTH_SECRET", "auth service crash", 0.95)
    solved = await graph.add_solution(
        namespace, "AUTH_SECRET missing", "add AUTH_SECRET to the deploy config", "postmortem"
    )
    assert not solved.problem_created
    assert solved.problem.description == "missing AUTH_SECRET"
    assert solved.solution_created
    assert solved.solution.node_type == "solution"
    assert await count(store, namespace, "MATCH ()-[r:C_SOLVED_BY]->() RETURN count(r)") == 1


# -- chains ------------------------------------------------------------------------------------


async def test_upstream_and_downstream_follow_the_chain(graph: CausalGraph, namespace: str) -> None:
    await chain(
        graph,
        namespace,
        ("bad config merged", "config rollout", 0.9),
        ("config rollout", "auth pods restart", 0.8),
        ("auth pods restart", "login errors", 0.7),
    )
    up = await graph.upstream(namespace, "login errors", depth=3)
    assert up.direction == "upstream"
    assert [p.nodes for p in up.paths] == [
        ["auth pods restart", "login errors"],
        ["config rollout", "auth pods restart", "login errors"],
        ["bad config merged", "config rollout", "auth pods restart", "login errors"],
    ]
    down = await graph.downstream(namespace, "bad config merged", depth=3)
    assert down.paths[-1].nodes == [
        "bad config merged",
        "config rollout",
        "auth pods restart",
        "login errors",
    ]
    assert len(down.nodes) == 4
    assert len(down.edges) == 3


async def test_depth_limits_are_honoured(graph: CausalGraph, namespace: str) -> None:
    await chain(
        graph,
        namespace,
        ("step one", "step two", 0.9),
        ("step two", "step three", 0.9),
        ("step three", "step four", 0.9),
    )
    for depth, longest in ((1, 2), (2, 3), (3, 4), (10, 4)):
        up = await graph.upstream(namespace, "step four", depth=depth)
        assert max(len(p.nodes) for p in up.paths) == longest
        assert len(up.paths) == longest - 1
    for bad in (0, 11):
        with pytest.raises(InvalidInput, match="depth must be between 1 and 10"):
            await graph.upstream(namespace, "step four", depth=bad)


async def test_path_confidence_is_the_product_and_paths_are_ranked_by_it(
    graph: CausalGraph, namespace: str
) -> None:
    await chain(
        graph,
        namespace,
        ("power cut", "router reboot", 0.9),
        ("router reboot", "outage", 0.9),
        ("power cut", "dns cache flush", 0.5),
        ("dns cache flush", "outage", 0.5),
    )
    up = await graph.upstream(namespace, "outage", depth=2)
    assert [(p.nodes[0], round(p.confidence, 6)) for p in up.paths] == [
        ("router reboot", 0.9),
        ("power cut", 0.81),
        ("dns cache flush", 0.5),
        ("power cut", 0.25),
    ]
    assert up.paths[1].confidences == [0.9, 0.9]


async def test_cycles_end_paths_instead_of_looping(graph: CausalGraph, namespace: str) -> None:
    await chain(
        graph,
        namespace,
        ("retry storm", "queue backlog", 0.8),
        ("queue backlog", "timeouts", 0.8),
        ("timeouts", "retry storm", 0.8),
    )
    up = await graph.upstream(namespace, "retry storm", depth=10)
    assert sorted(p.nodes for p in up.paths) == [
        ["queue backlog", "timeouts", "retry storm"],
        ["timeouts", "retry storm"],
    ]
    down = await graph.downstream(namespace, "retry storm", depth=10)
    assert all(len(set(p.node_ids)) == len(p.node_ids) for p in down.paths)
    assert len(down.paths) == 2


async def test_many_paths_are_capped_and_reported(graph: CausalGraph, namespace: str) -> None:
    await chain(
        graph, namespace, *[(f"cause {chr(97 + i)}", "alarm", 0.1 + i / 20) for i in range(6)]
    )
    up = await graph.upstream(namespace, "alarm", depth=1, max_paths=4)
    assert len(up.paths) == 4
    assert up.truncated
    assert up.paths[0].nodes[0] == "cause f"


async def test_chains_resolve_the_start_node_by_name(graph: CausalGraph, namespace: str) -> None:
    link = await graph.add_link(namespace, "memory leak", "OOM kill", 0.8)
    assert (await graph.get(namespace, link.effect.uuid)).description == "OOM kill"
    assert (await graph.get(namespace, "oom KILL")).uuid == link.effect.uuid
    with pytest.raises(NodeNotFound):
        await graph.upstream(namespace, "solar flare")
