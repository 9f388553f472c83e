"""Seed 000's deployment-failure scenario through the temporal and causal graphs."""

from __future__ import annotations

import pytest
from polyg_core.graphs.causal import CausalGraph
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
def graphs(store: FalkorStore, cached: Embedder) -> tuple[TemporalGraph, CausalGraph]:
    resolver = NameResolver(store, cached)
    return TemporalGraph(store, cached, resolver), CausalGraph(store, cached, resolver)


async def _seed(ns: str, temporal: TemporalGraph, causal: CausalGraph) -> None:
    await temporal.add_event(
        ns,
        "Deployment v2.3.1 started",
        "2026-01-07T14:00:00Z",
        entities=["deploy-v2.3.1", "auth-service"],
    )
    await temporal.add_event(
        ns, "Auth service crashed", "2026-01-07T15:05:00+01:00", entities=["auth-service"]
    )
    await temporal.add_fact(ns, "auth-service", "status", "down", valid_from="2026-01-07T14:05:00Z")
    await causal.add_link(
        ns,
        "missing AUTH_SECRET",
        "auth service crash",
        0.95,
        evidence="crash log: AUTH_SECRET is undefined",
        entities=["auth-service", "AUTH_SECRET"],
        events=["Auth service crashed"],
    )
    await causal.add_link(
        ns,
        "deploy v2.3.1",
        "AUTH_SECRET missing from config",
        0.88,
        entities=["deploy-v2.3.1", "AUTH_SECRET"],
        events=["Deployment v2.3.1 started"],
    )


async def test_upstream_from_the_crash_finds_the_deploy_through_the_missing_secret(
    graphs: tuple[TemporalGraph, CausalGraph], namespace: str
) -> None:
    temporal, causal = graphs
    await _seed(namespace, temporal, causal)

    chain = await causal.upstream(namespace, "auth-service crashed", depth=3)

    assert chain.root.description == "auth service crash"
    by_nodes = {tuple(p.nodes): p for p in chain.paths}
    full = by_nodes[("deploy v2.3.1", "missing AUTH_SECRET", "auth service crash")]
    assert full.confidence == pytest.approx(0.836, abs=1e-9)
    assert full.confidences == pytest.approx([0.88, 0.95])
    assert [p.confidence for p in chain.paths] == pytest.approx([0.95, 0.836])


async def test_the_two_phrasings_of_the_missing_secret_are_one_node(
    graphs: tuple[TemporalGraph, CausalGraph], namespace: str, store: FalkorStore
) -> None:
    temporal, causal = graphs
    await _seed(namespace, temporal, causal)

    res = await store.query(namespace, "MATCH (c:C_Node) RETURN c.description")
    assert sorted(r[0] for r in res.rows) == [
        "auth service crash",
        "deploy v2.3.1",
        "missing AUTH_SECRET",
    ]
    downstream = await causal.downstream(namespace, "deploy v2.3.1", depth=2)
    assert ["deploy v2.3.1", "missing AUTH_SECRET", "auth service crash"] in [
        p.nodes for p in downstream.paths
    ]


async def test_scenario_entities_reach_events_facts_and_causes(
    graphs: tuple[TemporalGraph, CausalGraph], namespace: str, store: FalkorStore
) -> None:
    temporal, causal = graphs
    await _seed(namespace, temporal, causal)
    ids = await store.query(namespace, "MATCH (x:E_Entity) RETURN x.name, x.uuid ORDER BY x.name")
    entity = {str(n): str(u) for n, u in ids.rows}
    assert sorted(entity) == ["AUTH_SECRET", "auth-service", "deploy-v2.3.1"]

    timeline = await temporal.timeline(namespace, entity="auth service")
    assert [e.description for e in timeline] == [
        "Deployment v2.3.1 started",
        "Auth service crashed",
    ]
    facts = await temporal.facts_for(namespace, [entity["auth-service"]])
    assert [(f.subject, f.predicate, f.object) for f in facts] == [
        ("auth-service", "status", "down")
    ]
    affecting = await causal.nodes_for_entities(namespace, [entity["auth-service"]])
    assert sorted(n.description for n in affecting) == [
        "auth service crash",
        "missing AUTH_SECRET",
    ]
    near = await temporal.events_near(
        namespace,
        [entity["deploy-v2.3.1"]],
        start="2026-01-07T00:00:00Z",
        end="2026-01-07T23:59:59Z",
        depth=1,
    )
    assert [e.description for e in near.events] == [
        "Deployment v2.3.1 started",
        "Auth service crashed",
    ]
    assert near.hops == {near.events[0].uuid: 0, near.events[1].uuid: 1}
    refers = await store.query(
        namespace,
        "MATCH (c:C_Node)-[:X_REFERS_TO]->(e:T_Event) RETURN c.description, e.description",
    )
    assert ["auth service crash", "Auth service crashed"] in refers.rows
    assert ["deploy v2.3.1", "Deployment v2.3.1 started"] in refers.rows
