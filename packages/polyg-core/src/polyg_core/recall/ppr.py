"""The PPR view: personalized PageRank over the seeds' neighbourhood (HippoRAG-style multi-hop).

FalkorDB's `algo.pageRank` takes no personalization vector, so the view:

1. weighs each seed by its specificity: `score / (fan_in + 1)`, where `fan_in` is the
   number of memories, events/facts and causal nodes that mention it (incoming
   `S_ABOUT`, `X_INVOLVES`, `X_AFFECTS`) — a hub everyone mentions says little;
2. fetches the seeds' k-hop neighbourhood over every memory label and every edge type,
   hop by hop on internal node ids, bounded in nodes (`max_nodes`) and wall time;
3. runs personalized PageRank (restart 0.5, walking edges both ways, weighted by
   `C_CAUSES.confidence` / `S_SIMILAR_TO.score`, 1 elsewhere) as a power iteration on a
   scipy.sparse matrix built straight from the fetched rows (the same computation as
   `polyg_core.algorithms.personalized_pagerank` over a `GraphData`, without making one);
4. returns the top nodes with scores in [0, 1]: seeds score 1, other nodes their PPR
   mass relative to the best non-seed node, so `merge_views` can fuse them.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from polyg_shared.retrieval import ContextEdge, ContextNode, ViewResult

from polyg_core.graphs.walks import GraphWalks
from polyg_core.recall.context_nodes import label_of, to_context
from polyg_core.recall.view_context import ViewContext
from polyg_core.storage.cypher import clean
from polyg_core.storage.schema import CAUSAL, ENTITY, EVENT, FACT, R_CAUSES
from polyg_core.storage.store import FalkorStore

logger = logging.getLogger(__name__)

CHUNK = 250
MAX_ITERATIONS = 100
"""Power iterations at most (`algorithms.personalized_pagerank`'s default)."""
TOLERANCE = 1e-8
"""L1 change between rounds below which the iteration stops (the same default)."""

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class PPRConfig:
    """Bounds and parameters of the PPR view.

    Attributes:
        restart: probability of jumping back to the seeds at each step.
        hops: neighbourhood radius around the seeds.
        max_nodes: most nodes fetched into the in-memory graph.
        max_edges_per_hop: most edge rows read per hop.
        time_budget_s: wall time for fetch + PageRank; the fetch stops early when used up.
        top_n: nodes returned.
    """

    restart: float = 0.5
    hops: int = 4
    max_nodes: int = 300
    max_edges_per_hop: int = 50_000
    time_budget_s: float = 2.0
    top_n: int = 30


@dataclass
class Neighbourhood:
    """The fetched subgraph as arrays: node ids numbered in the order they were reached
    (the seeds first), and each edge once, by the positions of its ends in that order."""

    ids: list[int]
    seeds: dict[int, float]
    src: list[int]
    dst: list[int]
    relations: list[str]
    weights: list[float]
    truncated: bool
    hops: int


async def seed_specificity(
    store: FalkorStore,
    namespace: str,
    seeds: dict[str, dict[str, float]],
    walks: GraphWalks | None = None,
) -> dict[int, float]:
    """Internal id -> seed weight `score / (fan_in + 1)` for seeds given by label -> uuid -> score."""
    rows = await (walks or GraphWalks(store)).seed_fan_in(
        namespace, {label: list(by_uuid) for label, by_uuid in seeds.items()}
    )
    scores = {u: s for by_uuid in seeds.values() for u, s in by_uuid.items()}
    out: dict[int, float] = {}
    for uuid, node_id, fan_in in rows:
        weight = scores.get(uuid, 0.0) / (fan_in + 1)
        if weight > 0:
            out[node_id] = max(out.get(node_id, 0.0), weight)
    return out


def _weight(value: Any) -> float:
    """An edge's transition weight: its confidence or score when that is a finite number
    >= 0, else 1. Most links carry none."""
    if value is None:
        return 1.0
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        number = float(value)
        if math.isfinite(number):
            return number
    return 1.0


async def fetch_neighbourhood(
    store: FalkorStore,
    namespace: str,
    seeds: dict[int, float],
    *,
    hops: int,
    max_nodes: int,
    max_edges_per_hop: int,
    deadline: float,
    chunk: int = CHUNK,
    walks: GraphWalks | None = None,
) -> Neighbourhood:
    """Breadth-first fetch of the seeds' neighbourhood (every edge type), bounded.

    Each hop expands its frontier in chunks of `chunk` nodes (one query each, edges
    aggregated per node); the fetch stops at `max_nodes` nodes, `max_edges_per_hop`
    edges in a hop, or the deadline, checked between chunks.
    """
    walks = walks or GraphWalks(store)
    position: dict[int, int] = {node_id: i for i, node_id in enumerate(seeds)}
    ids = list(seeds)
    src: list[int] = []
    dst: list[int] = []
    relations: list[str] = []
    weights: list[float] = []
    edges: set[tuple[int, int, str]] = set()
    frontier = list(seeds)
    truncated = False
    done = 0
    for _hop in range(hops):
        if not frontier or truncated:
            break
        nxt: list[int] = []
        rows_in_hop = 0
        for i in range(0, len(frontier), chunk):
            if time.monotonic() > deadline or len(ids) >= max_nodes:
                truncated = True
                break
            rows = await walks.links_by_id(namespace, frontier[i : i + chunk])
            for a, links in rows:
                at = position[a]
                rows_in_hop += len(links)
                for b, outgoing, rel, weight in links:
                    other = position.get(b)
                    if other is None:
                        if len(ids) >= max_nodes:
                            truncated = True
                            continue
                        other = position[b] = len(ids)
                        ids.append(b)
                        nxt.append(b)
                    key = (at, other, rel) if outgoing else (other, at, rel)
                    if key not in edges:
                        edges.add(key)
                        src.append(key[0])
                        dst.append(key[1])
                        relations.append(rel)
                        weights.append(_weight(weight))
            if rows_in_hop > max_edges_per_hop:
                truncated = True
                break
        frontier = nxt
        done += 1
    return Neighbourhood(ids, dict(seeds), src, dst, relations, weights, truncated, done)


def ppr_scores(hood: Neighbourhood, restart: float, time_budget: float) -> FloatArray:
    """Personalized PageRank over the neighbourhood, one score per node (by position):
    restart `restart` to the seeds in proportion to their weights, edges walked both
    ways with their weights (parallel edges add up), as
    `algorithms.personalized_pagerank(..., weight="weight", directed=False)` computes it,
    on a matrix built straight from the fetched arrays."""
    from scipy import sparse  # on first use: a process that never recalls does not load it

    from polyg_core.algorithms.centrality import power_iteration
    from polyg_core.algorithms.indexed import Budget

    n = len(hood.ids)
    personalization = np.zeros(n)
    for i, node_id in enumerate(hood.ids[: len(hood.seeds)]):
        personalization[i] += hood.seeds[node_id]
    matrix = sparse.csr_matrix(
        (
            np.asarray(hood.weights, dtype=np.float64),
            (np.asarray(hood.src, dtype=np.int64), np.asarray(hood.dst, dtype=np.int64)),
        ),
        shape=(n, n),
    )
    matrix.sum_duplicates()
    both_ways = (matrix + matrix.T).tocsr()
    scores, _rounds, _converged = power_iteration(
        both_ways,
        personalization,
        damping=1.0 - restart,
        max_iter=MAX_ITERATIONS,
        tol=TOLERANCE,
        budget=Budget(time_budget),
    )
    return scores


def _rank(hood: Neighbourhood, config: PPRConfig, time_budget: float) -> dict[int, float]:
    """The top `config.top_n` nodes by PPR, scored in [0, 1]: seeds 1, other nodes their
    mass relative to the best non-seed node (ties broken by node id as text)."""
    scores: list[float] = ppr_scores(hood, config.restart, time_budget).tolist()
    positive = [i for i, score in enumerate(scores) if score > 0]
    positive.sort(key=lambda i: (-scores[i], str(hood.ids[i])))
    n_seeds = len(hood.seeds)
    best_other = max((scores[i] for i in positive if i >= n_seeds), default=0.0)
    return {
        hood.ids[i]: 1.0
        if i < n_seeds
        else (min(1.0, scores[i] / best_other) if best_other else 0.0)
        for i in positive[: config.top_n]
    }


async def _context_nodes(
    ctx: ViewContext, scores: dict[int, float], walks: GraphWalks
) -> tuple[list[ContextNode], dict[int, str]]:
    """The ranked nodes as context nodes (marked `ppr`), best first, and their uuids."""
    rows = await walks.nodes_by_id(ctx.namespace, list(scores))
    nodes: list[ContextNode] = []
    uuid_of: dict[int, str] = {}
    for node_id, labels, raw in rows:
        label = label_of({"_labels": labels})
        if not label:
            continue
        node = to_context(label, clean(raw), scores.get(node_id, 0.0))
        node = node.model_copy(update={"attributes": {**node.attributes, "ppr": True}})
        uuid_of[node_id] = node.uuid
        nodes.append(node)
    nodes.sort(key=lambda n: -n.score)
    return nodes, uuid_of


def _edges_between(hood: Neighbourhood, uuid_of: dict[int, str]) -> list[ContextEdge]:
    out: list[ContextEdge] = []
    for a, b, rel, weight in zip(hood.src, hood.dst, hood.relations, hood.weights, strict=True):
        source, target = uuid_of.get(hood.ids[a]), uuid_of.get(hood.ids[b])
        if source is not None and target is not None:
            confidence = weight if rel == R_CAUSES else None
            out.append(ContextEdge(source=source, target=target, type=rel, confidence=confidence))
    return out


async def ppr_view(ctx: ViewContext, config: PPRConfig | None = None) -> ViewResult:
    """Personalized PageRank from the seeds over their neighbourhood, as a view.

    Skipped when there are no entity, event, fact or causal seeds.
    """
    config = config or PPRConfig()
    started = time.monotonic()
    deadline = started + config.time_budget_s
    s = ctx.seeds
    by_label = {ENTITY: s.entities, EVENT: s.events, FACT: s.facts, CAUSAL: s.causal}
    if not any(by_label.values()):
        return ViewResult(view="ppr", status="skipped", error="no seed nodes")
    walks = ctx.walks
    weights = await seed_specificity(ctx.store, ctx.namespace, by_label, walks)
    if not weights:
        return ViewResult(view="ppr", status="skipped", error="seed nodes not found")
    hood = await fetch_neighbourhood(
        ctx.store,
        ctx.namespace,
        weights,
        hops=config.hops,
        max_nodes=config.max_nodes,
        max_edges_per_hop=config.max_edges_per_hop,
        deadline=deadline,
        walks=walks,
    )
    scores = _rank(hood, config, max(0.05, deadline - time.monotonic()))
    nodes, uuid_of = await _context_nodes(ctx, scores, walks)
    logger.debug(
        "ppr: %d nodes, %d edges, %d hops, truncated=%s, %.1f ms",
        len(hood.ids),
        len(hood.src),
        hood.hops,
        hood.truncated,
        (time.monotonic() - started) * 1000,
    )
    error = (
        f"neighbourhood capped at {len(hood.ids)} nodes after {hood.hops} hops"
        if hood.truncated
        else None
    )
    return ViewResult(view="ppr", nodes=nodes, edges=_edges_between(hood, uuid_of), error=error)
