"""The PPR view's PageRank, computed straight from the fetched rows, scores every node as
`algorithms.personalized_pagerank` over a `GraphData` of the same edges does, and ranks
the same top nodes (invented graphs: parallel edges of several types, edges both ways,
self-loops, nodes without edges, weights of 0); the fetch reads a written neighbourhood
edge by edge, each once (the real embedded server)."""

from __future__ import annotations

import random
import time

import numpy as np
import pytest
from polyg_core.algorithms.centrality import personalized_pagerank
from polyg_core.algorithms.model import GraphData
from polyg_core.recall.ppr import (
    Neighbourhood,
    PPRConfig,
    _rank,  # pyright: ignore[reportPrivateUsage]
    fetch_neighbourhood,
    ppr_scores,
)
from polyg_core.storage import FalkorStore

RELATIONS = ["E_RELATES", "X_INVOLVES", "S_ABOUT", "C_CAUSES", "T_BEFORE"]


def _random_hood(rng: random.Random, n: int, n_edges: int, n_seeds: int) -> Neighbourhood:
    """Node ids far apart and out of order (as FalkorDB's internal ids are), the seeds
    first, each (source, target, type) once."""
    ids = rng.sample(range(1, 50 * n), n)
    seeds = {ids[i]: rng.choice([0.05, 0.3, 1.0, rng.random() + 0.01]) for i in range(n_seeds)}
    seen: set[tuple[int, int, str]] = set()
    src: list[int] = []
    dst: list[int] = []
    relations: list[str] = []
    weights: list[float] = []
    for _ in range(n_edges):
        key = (rng.randrange(n), rng.randrange(n), rng.choice(RELATIONS))
        if key in seen:
            continue
        seen.add(key)
        src.append(key[0])
        dst.append(key[1])
        relations.append(key[2])
        weights.append(rng.choice([1.0, 0.0, 0.5, rng.random()]))
    return Neighbourhood(ids, seeds, src, dst, relations, weights, False, 2)


def _as_graph_data(hood: Neighbourhood) -> GraphData:
    """The neighbourhood as the view built it before: a `GraphData` edge by edge."""
    graph = GraphData()
    for node_id in hood.ids:
        graph.add_node(str(node_id))
    for a, b, rel, weight in zip(hood.src, hood.dst, hood.relations, hood.weights, strict=True):
        graph.add_edge(str(hood.ids[a]), str(hood.ids[b]), rel, weight=weight)
    return graph


def _old_rank(hood: Neighbourhood, config: PPRConfig) -> dict[int, float]:
    ranking = personalized_pagerank(
        _as_graph_data(hood),
        {str(k): v for k, v in hood.seeds.items()},
        restart=config.restart,
        top_n=None,
        weight="weight",
        directed=False,
        time_budget=60.0,
    )
    ranked = [(int(r.node.id), r.score) for r in ranking.rankings if r.score > 0]
    seeds = {str(k) for k in hood.seeds}
    best_other = max((sc for n, sc in ranked if str(n) not in seeds), default=0.0)
    return {
        n: 1.0 if str(n) in seeds else (min(1.0, sc / best_other) if best_other else 0.0)
        for n, sc in ranked[: config.top_n]
    }


HOODS = [
    (7, 3, 12, 1),  # small, a few edges
    (40, 11, 120, 3),
    (300, 5, 900, 4),  # the view's node cap
    (60, 23, 0, 2),  # no edges: every walk restarts
    (25, 29, 400, 25),  # every node a seed
]


@pytest.mark.parametrize(("n", "seed", "n_edges", "n_seeds"), HOODS)
def test_scores_from_rows_equal_pagerank_over_graph_data(
    n: int, seed: int, n_edges: int, n_seeds: int
) -> None:
    hood = _random_hood(random.Random(seed), n, n_edges, n_seeds)
    ranking = personalized_pagerank(
        _as_graph_data(hood),
        {str(k): v for k, v in hood.seeds.items()},
        restart=0.5,
        top_n=None,
        weight="weight",
        directed=False,
        time_budget=60.0,
    )
    expected = {int(r.node.id): r.score for r in ranking.rankings}
    got = ppr_scores(hood, 0.5, 60.0)
    assert len(got) == n
    assert sum(got) == pytest.approx(1.0)
    for i, node_id in enumerate(hood.ids):
        assert abs(got[i] - expected[node_id]) <= 1e-9


@pytest.mark.parametrize(("n", "seed", "n_edges", "n_seeds"), HOODS)
@pytest.mark.parametrize("top_n", [1, 5, 30])
def test_top_nodes_equal_the_graph_data_ranking(
    n: int, seed: int, n_edges: int, n_seeds: int, top_n: int
) -> None:
    hood = _random_hood(random.Random(seed), n, n_edges, n_seeds)
    config = PPRConfig(top_n=top_n)
    new = _rank(hood, config, 60.0)
    old = _old_rank(hood, config)
    assert list(new) == list(old)
    assert all(abs(new[k] - old[k]) <= 1e-9 for k in old)
    assert all(new[k] == 1.0 for k in hood.seeds if k in new)


def test_ties_are_broken_by_node_id_as_text() -> None:
    # A seed between two leaves of equal mass: 10 sorts before 9 as text, as before.
    hood = Neighbourhood(
        [5, 9, 10], {5: 1.0}, [0, 0], [1, 2], ["E_RELATES"] * 2, [1.0, 1.0], False, 1
    )
    assert list(_rank(hood, PPRConfig(), 60.0)) == list(_old_rank(hood, PPRConfig())) == [5, 10, 9]


async def _write_chain(store: FalkorStore, namespace: str) -> dict[str, int]:
    """Ada and Bo linked twice (two relation types), Bo's event, its cause, and a
    stranger nobody links to; returns each node's internal id by uuid."""
    await store.query(
        namespace,
        "CREATE (a:E_Entity {uuid: 'e-ada', name: 'Ada Okafor'}), "
        "(b:E_Entity {uuid: 'e-bo', name: 'Bo Lindqvist'}), "
        "(s:E_Entity {uuid: 'e-stranger', name: 'Cyd Marr'}), "
        "(v:T_Event {uuid: 'v-kiln', description: 'Bo fired the new kiln', occurred_at: 0}), "
        "(c:C_Node {uuid: 'c-crack', description: 'the glaze cracked'}), "
        "(a)-[:E_RELATES {relationship_type: 'teaches'}]->(b), "
        "(b)-[:E_RELATES {relationship_type: 'shares_studio'}]->(a), "
        "(v)-[:X_INVOLVES]->(b), "
        "(c)-[:C_CAUSES {confidence: 0.25}]->(v)",
    )
    res = await store.query(namespace, "MATCH (n) RETURN n.uuid, id(n)", read_only=True)
    return {str(u): int(i) for u, i in res.rows}


@pytest.mark.anyio
async def test_fetch_reads_every_edge_once_with_its_weight(
    store: FalkorStore, namespace: str
) -> None:
    ids = await _write_chain(store, namespace)
    hood = await fetch_neighbourhood(
        store,
        namespace,
        {ids["e-ada"]: 1.0},
        hops=4,
        max_nodes=300,
        max_edges_per_hop=50_000,
        deadline=time.monotonic() + 30,
    )
    uuid_of = {i: u for u, i in ids.items()}
    assert uuid_of[hood.ids[0]] == "e-ada"
    assert {uuid_of[i] for i in hood.ids} == {"e-ada", "e-bo", "v-kiln", "c-crack"}
    edges = {
        (uuid_of[hood.ids[a]], uuid_of[hood.ids[b]], rel, w)
        for a, b, rel, w in zip(hood.src, hood.dst, hood.relations, hood.weights, strict=True)
    }
    assert len(edges) == len(hood.src) == 4
    assert edges == {
        ("e-ada", "e-bo", "E_RELATES", 1.0),
        ("e-bo", "e-ada", "E_RELATES", 1.0),
        ("v-kiln", "e-bo", "X_INVOLVES", 1.0),
        ("c-crack", "v-kiln", "C_CAUSES", 0.25),
    }
    ranked = _rank(hood, PPRConfig(), 30.0)
    assert ranked[ids["e-ada"]] == 1.0
    # Bo is one hop away, the cause three: mass falls with distance.
    assert ranked[ids["e-bo"]] == 1.0 > ranked[ids["v-kiln"]] > ranked[ids["c-crack"]] > 0
    assert np.isclose(sum(ppr_scores(hood, 0.5, 30.0)), 1.0)


@pytest.mark.anyio
async def test_fetch_stops_at_the_node_cap(store: FalkorStore, namespace: str) -> None:
    ids = await _write_chain(store, namespace)
    hood = await fetch_neighbourhood(
        store,
        namespace,
        {ids["e-ada"]: 1.0},
        hops=4,
        max_nodes=2,
        max_edges_per_hop=50_000,
        deadline=time.monotonic() + 30,
    )
    assert hood.truncated
    assert len(hood.ids) == 2
    assert all(a < 2 and b < 2 for a, b in zip(hood.src, hood.dst, strict=True))
