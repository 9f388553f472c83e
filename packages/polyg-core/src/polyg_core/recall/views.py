"""Steps 2-4 of MAGMA: seeds from vector search and names, then the expansion views.

Each view also returns the cross-linked nodes it passes through (the entities an
event involves, the entities and events a causal node affects or refers to), so
a node reached by several views carries the same uuid in each and the merge can
boost it. The views read the graphs through their read steps (`graphs.walks`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import anyio
import numpy as np
import numpy.typing as npt
from polyg_shared.intents import CausalDirection, Intent
from polyg_shared.retrieval import ContextEdge, ContextNode, ViewResult
from polyg_shared.timeutil import to_epoch_ms, utc_now

from polyg_core.errors import PolygError
from polyg_core.graphs.walks import CausalWay, EntityLink, GraphWalks
from polyg_core.recall.context_nodes import to_context
from polyg_core.recall.ppr import PPRConfig, ppr_view
from polyg_core.recall.view_context import (
    MAX_VIEW_NODES,
    Seeds,
    ViewCollector,
    ViewContext,
    bump,
)
from polyg_core.resolve import ENTITY_NAMES, NameResolver
from polyg_core.storage.cypher import clean
from polyg_core.storage.fulltext import word_search_labels
from polyg_core.storage.schema import (
    CAUSAL,
    CONCEPT,
    ENTITY,
    EVENT,
    FACT,
    MEMORY,
    R_CAUSES,
    R_RELATES,
    X_INVOLVES,
    X_REPRESENTS,
)
from polyg_core.storage.store import FalkorStore
from polyg_core.storage.vector import Neighbour, knn_labels

__all__ = [
    "MAX_VIEW_NODES",
    "Seeds",
    "ViewContext",
    "causal_view",
    "entity_view",
    "find_seeds",
    "run_views",
    "temporal_view",
]

logger = logging.getLogger(__name__)

SEED_ENTITY_MIN = 0.5
HOP_DECAY = 0.8
SEARCH_LABELS = (CONCEPT, MEMORY, ENTITY, CAUSAL)
WORD_LABELS = (EVENT, FACT)
"""Labels without vectors, seeded by the words they share with the question."""
REPRESENTED_LIMIT = 200
"""Most entities reached from the concept and memory seeds over X_REPRESENTS."""

Window = tuple[int | None, int | None]


def _valid_at(fact: dict[str, Any], at: int) -> bool:
    start = fact.get("valid_from")
    end = fact.get("valid_to")
    return (start is None or int(start) <= at) and (end is None or int(end) > at)


def _valid_during(fact: dict[str, Any], start: int | None, end: int | None) -> bool:
    begin = fact.get("valid_from")
    stop = fact.get("valid_to")
    return (end is None or begin is None or int(begin) <= end) and (
        start is None or stop is None or int(stop) > start
    )


# -- seeds ------------------------------------------------------------------------------------


def _fact_time(intent: Intent, as_of: datetime | None) -> tuple[int, Window | None]:
    """When a seed fact must hold: at some time in the intent's timeframe (the window),
    else at `as_of` (default: the timeframe's end, else now)."""
    tf = intent.timeframe
    at = to_epoch_ms(as_of or (tf.end if tf and tf.end else utc_now()))
    if tf is None or not (tf.start or tf.end):
        return at, None
    window = (
        to_epoch_ms(tf.start) if tf.start else None,
        to_epoch_ms(tf.end) if tf.end else None,
    )
    return at, window


async def _search(
    store: FalkorStore,
    namespace: str,
    vector: npt.NDArray[np.float32] | None,
    words: str,
    top_k: int,
    min_score: float,
) -> dict[str, list[Neighbour]]:
    """k-NN over every embedded label (one query) and word search over events and facts
    (another), in parallel; labels in a fixed order."""
    near: dict[str, list[Neighbour]] = {}
    by_words: dict[str, list[Neighbour]] = {}

    async def search() -> None:
        assert vector is not None
        near.update(
            await knn_labels(
                store, namespace, SEARCH_LABELS, vector.tolist(), top_k, min_similarity=min_score
            )
        )

    async def search_words() -> None:
        found = await word_search_labels(store, namespace, WORD_LABELS, words, top_k)
        # Not held to `min_score`, a bar for cosine similarity: the share of the
        # question's words a short event holds is low even when it is the answer.
        for label, hits in found.items():
            by_words[label] = [Neighbour(h.label, h.properties, h.overlap) for h in hits]

    try:
        async with anyio.create_task_group() as tg:
            if vector is not None:
                tg.start_soon(search)
            if words:
                tg.start_soon(search_words)
    except BaseExceptionGroup as group:
        # Callers expect polyg's own error (storage down, timeout), not a group of them.
        raise group.exceptions[0] from group
    return {**near, **by_words}


def _seed_target(seeds: Seeds, label: str, similarity: float) -> dict[str, float] | None:
    """Which of the seeds a hit of `label` starts (None: it seeds no view)."""
    if label == ENTITY:
        return seeds.entities if similarity >= SEED_ENTITY_MIN else None
    return {EVENT: seeds.events, FACT: seeds.facts, CAUSAL: seeds.causal}.get(label)


def _seed_hits(
    seeds: Seeds,
    nodes: dict[str, ContextNode],
    hits_by_label: dict[str, list[Neighbour]],
    at: int,
    window: Window | None,
) -> None:
    """Every hit becomes a semantic node; entity, event, fact and causal hits seed views.
    A fact not valid when asked is left out."""
    for label, hits in hits_by_label.items():
        for hit in hits:
            if label == FACT and not (
                _valid_during(hit.properties, *window)
                if window is not None
                else _valid_at(hit.properties, at)
            ):
                continue
            node = to_context(label, hit.properties, hit.similarity)
            nodes[node.uuid] = node
            target = _seed_target(seeds, label, hit.similarity)
            if target is not None:
                bump(target, node.uuid, hit.similarity)


async def _seed_names(
    resolver: NameResolver,
    namespace: str,
    names: Sequence[str],
    seeds: Seeds,
    nodes: dict[str, ContextNode],
) -> None:
    """The entities the question names seed at full score."""
    for name in names:
        try:
            found = await resolver.find(namespace, ENTITY_NAMES, name)
        except PolygError:  # ambiguous: the vector seeds still cover it
            found = None
        if found is not None:
            bump(seeds.entities, found.uuid, 1.0)
            nodes[found.uuid] = to_context(ENTITY, found.properties, 1.0)


async def _seed_represented(
    walks: GraphWalks,
    namespace: str,
    seeds: Seeds,
    nodes: dict[str, ContextNode],
    edges: list[ContextEdge],
    min_score: float,
) -> None:
    """Entities that the concept hits (and the concepts of the memory hits) represent
    seed at the score of the hit they came from."""
    concept_ids = [u for u, n in nodes.items() if n.label == CONCEPT]
    memory_ids = [u for u, n in nodes.items() if n.label == MEMORY]
    if not (concept_ids or memory_ids):
        return
    rows = await walks.entities_represented(namespace, concept_ids, memory_ids, REPRESENTED_LIMIT)
    for src, concept, raw in rows:
        score = nodes[src].score if src in nodes else min_score
        uuid = str(raw.get("uuid", ""))
        known = nodes.get(uuid)
        if known is None or known.score < score:  # an entity met again is built once
            nodes[uuid] = to_context(ENTITY, clean(raw), score)
        bump(seeds.entities, uuid, score)
        edges.append(ContextEdge(source=concept, target=uuid, type=X_REPRESENTS))


async def find_seeds(
    store: FalkorStore,
    resolver: NameResolver,
    namespace: str,
    intent: Intent,
    vector: npt.NDArray[np.float32] | None,
    *,
    top_k: int = 10,
    min_score: float = 0.3,
    as_of: datetime | None = None,
) -> Seeds:
    """k-NN over every embedded label, word search over events and facts (the intent's
    `semantic_query`; score: the share of its words they hold), entity-name matches, and
    X_REPRESENTS to entities.

    Facts not valid during the intent's timeframe (without one: at `as_of`, default now)
    are left out, so a superseded fact never answers a question about the present and
    the fact valid then answers a question about the past.
    """
    at, window = _fact_time(intent, as_of)
    seeds = Seeds()
    nodes: dict[str, ContextNode] = {}
    edges: list[ContextEdge] = []
    words = intent.semantic_query.strip()
    if vector is not None or words:
        hits = await _search(store, namespace, vector, words, top_k, min_score)
        _seed_hits(seeds, nodes, hits, at, window)
    await _seed_names(resolver, namespace, intent.entities, seeds, nodes)
    await _seed_represented(GraphWalks(store), namespace, seeds, nodes, edges, min_score)
    seeds.semantic = ViewResult(view="semantic", nodes=list(nodes.values()), edges=edges)
    return seeds


# -- the entity view --------------------------------------------------------------------------


async def entity_view(ctx: ViewContext, depth: int) -> ViewResult:
    """BFS over E_RELATES from the seed entities; score decays 0.8 per hop. Only the
    relations that held in the question's timeframe (or now) are walked."""
    if not ctx.seeds.entities:
        return ViewResult(view="entity", status="skipped", error="no seed entities")
    col = ViewCollector("entity", ctx.max_nodes)
    start, end = ctx.window()
    # The seeds and their first hop are read together (the hop is dropped when the seeds
    # fill the view, as it was never walked then).
    found, first_hop = await ctx.walks.entities_and_relations(
        ctx.namespace,
        list(ctx.seeds.entities),
        start=start,
        end=end,
        now=to_epoch_ms(ctx.now),
        cap=ctx.max_nodes * 4,
    )
    for raw in found:
        col.add(ENTITY, raw, ctx.seeds.entities.get(raw["uuid"], 0.5))
    frontier = dict(ctx.seeds.entities)
    for hop in range(depth):
        if not frontier or col.full:
            break
        rows = (
            first_hop
            if hop == 0
            else await ctx.walks.relations_held(
                ctx.namespace,
                list(frontier),
                start=start,
                end=end,
                now=to_epoch_ms(ctx.now),
                cap=ctx.max_nodes * 4,
            )
        )
        nxt: dict[str, float] = {}
        for a, outgoing, rel, raw in rows:
            score = frontier[a] * HOP_DECAY
            b = raw["uuid"]
            if col.add(ENTITY, raw, score):
                nxt[b] = score
            src, dst = (a, b) if outgoing else (b, a)
            col.edges.append(ContextEdge(source=src, target=dst, type=R_RELATES, label=rel))
        frontier = nxt
    return col.result()


# -- the temporal view ------------------------------------------------------------------------


async def _events_of_seeds(ctx: ViewContext, col: ViewCollector) -> dict[str, float]:
    """Events involving the seed entities, the seed events, and without any seed but with
    a timeframe the timeframe's first events: event uuid -> score."""
    start, end = ctx.window()
    seeds = ctx.seeds
    scores: dict[str, float] = {}
    found: list[tuple[dict[str, Any], float]] = []
    if seeds.entities or seeds.events:
        involving, seed_events = await ctx.walks.events_of_seeds(
            ctx.namespace,
            list(seeds.entities),
            list(seeds.events),
            start=start,
            end=end,
            cap=ctx.max_nodes,
        )
        found.extend((raw, seeds.entities[ent] * 0.9) for raw, ent in involving)
        found.extend((raw, seeds.events[raw["uuid"]]) for raw in seed_events)
    for raw, score in found:
        col.add(EVENT, raw, score)
        scores[raw["uuid"]] = max(scores.get(raw["uuid"], 0.0), score)
    if not scores and not seeds.entities and (start is not None or end is not None):
        rows = await ctx.walks.events_in_window(
            ctx.namespace, start=start, end=end, cap=ctx.max_nodes
        )
        for raw in rows:
            col.add(EVENT, raw, 0.6)
            scores[raw["uuid"]] = 0.6
    return scores


async def _walk_events(
    ctx: ViewContext, col: ViewCollector, frontier: dict[str, float], hops: int
) -> None:
    """Along T_BEFORE from the events found, `hops` times, score decaying per hop."""
    start, end = ctx.window()
    for _hop in range(hops):
        if not frontier or col.full:
            break
        rows = await ctx.walks.events_next_to(
            ctx.namespace, list(frontier), start=start, end=end, cap=ctx.max_nodes
        )
        nxt: dict[str, float] = {}
        for a, raw in rows:
            score = frontier[a] * HOP_DECAY
            if col.add(EVENT, raw, score):
                nxt[raw["uuid"]] = score
        frontier = nxt


async def _facts_of_seeds(ctx: ViewContext) -> list[tuple[dict[str, Any], float]]:
    """Facts involving the seed entities and the seed facts, with their scores: current
    ones, or those valid at some time in the asked timeframe ("in March 2025" takes what
    held then, also a fact that ended or began within the month)."""
    start, end = ctx.window()
    seeds = ctx.seeds
    if not (seeds.entities or seeds.facts):
        return []
    involving, seed_facts = await ctx.walks.facts_of_seeds(
        ctx.namespace,
        list(seeds.entities),
        list(seeds.facts),
        start=start,
        end=end,
        asof=to_epoch_ms(ctx.now),
        cap=ctx.max_nodes,
    )
    return [(raw, seeds.entities[ent] * 0.9) for raw, ent in involving] + [
        (raw, seeds.facts[raw["uuid"]]) for raw in seed_facts
    ]


async def temporal_view(ctx: ViewContext, depth: int) -> ViewResult:
    """Events and facts involving the seeds (facts valid now or during the timeframe),
    along T_BEFORE up to `depth`, within the timeframe; carries the involved entities."""
    start, end = ctx.window()
    seeds = ctx.seeds
    if not (seeds.entities or seeds.events or seeds.facts) and start is None and end is None:
        return ViewResult(
            view="temporal", status="skipped", error="no seed entities, events or timeframe"
        )
    col = ViewCollector("temporal", ctx.max_nodes)
    facts: list[tuple[dict[str, Any], float]] = []

    async def events() -> None:
        scores = await _events_of_seeds(ctx, col)
        await _walk_events(ctx, col, dict(scores), max(depth - 1, 0))

    async def read_facts() -> None:
        facts.extend(await _facts_of_seeds(ctx))

    # The facts do not depend on the events: they are read while the events are walked,
    # and added after them, as before.
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(events)
            tg.start_soon(read_facts)
    except BaseExceptionGroup as group:
        # The view reports polyg's own error (storage down, timeout), not a group of them.
        raise group.exceptions[0] from group
    for raw, score in facts:
        col.add(FACT, raw, score)
    await _carry_entities(ctx, col, X_INVOLVES)
    return col.result()


async def _carry_entities(ctx: ViewContext, col: ViewCollector, link: EntityLink) -> None:
    """Add the entities the view's nodes are cross-linked to, with those links as edges."""
    if not col.can_take((ENTITY,)):
        return
    rows: list[tuple[str, dict[str, Any]]] = []
    for label in sorted({n.label for n in col.nodes.values() if n.label != ENTITY}):
        ids = [u for u, n in col.nodes.items() if n.label == label]
        rows.extend(
            await ctx.walks.linked_entities(ctx.namespace, label, ids, link, ctx.max_nodes * 2)
        )
    for src, raw in rows:
        base = col.nodes[src].score
        seed = ctx.seeds.entities.get(raw["uuid"])
        col.add(ENTITY, raw, max(base * 0.9, seed or 0.0))
        col.edges.append(ContextEdge(source=src, target=raw["uuid"], type=link))


# -- the causal view --------------------------------------------------------------------------


async def _causal_starts(ctx: ViewContext) -> tuple[dict[str, float], dict[str, dict[str, Any]]]:
    """Where the causal walk starts: the causal seeds and the causal nodes that affect
    the seed entities or refer to the seed events (uuid -> score, uuid -> node)."""
    seeds = ctx.seeds
    start: dict[str, float] = dict(seeds.causal)
    raw_nodes: dict[str, dict[str, Any]] = {}
    if seeds.causal or seeds.entities or seeds.events:
        found, rows = await ctx.walks.causal_starts(
            ctx.namespace,
            list(seeds.causal),
            list(seeds.entities),
            list(seeds.events),
            ctx.max_nodes,
        )
        for raw in found:
            raw_nodes[raw["uuid"]] = raw
        for raw, target in rows:
            score = (seeds.entities.get(target) or seeds.events.get(target) or 0.5) * 0.9
            bump(start, raw["uuid"], score)
            raw_nodes[raw["uuid"]] = raw
    return start, raw_nodes


def _causal_ways(direction: CausalDirection) -> list[CausalWay]:
    ways: list[CausalWay] = []
    if direction in (CausalDirection.UPSTREAM, CausalDirection.BOTH):
        ways.append("up")
    if direction in (CausalDirection.DOWNSTREAM, CausalDirection.BOTH):
        ways.append("down")
    return ways


async def _walk_causes(
    ctx: ViewContext,
    col: ViewCollector,
    start: dict[str, float],
    way: CausalWay,
    depth: int,
    first_hop: Sequence[tuple[str, float | None, dict[str, Any]]] | None = None,
) -> None:
    """Up (to causes) or down (to effects) C_CAUSES from `start`, `depth` hops; a node's
    score is the best of start score times the path's confidence. `first_hop`: the first
    hop's rows when already read."""
    frontier = {u: s for u, s in start.items() if u in col.nodes}
    for hop in range(depth):
        if not frontier:
            break
        rows = (
            first_hop
            if hop == 0 and first_hop is not None
            else await ctx.walks.causal_steps(ctx.namespace, list(frontier), way, ctx.max_nodes * 4)
        )
        nxt: dict[str, float] = {}
        for a, confidence, raw in rows:
            conf = confidence if confidence is not None else 0.5
            score = frontier[a] * conf
            b = raw["uuid"]
            added = col.add(CAUSAL, raw, score)
            if added or (b in col.nodes and b not in frontier and score > nxt.get(b, 0.0)):
                nxt[b] = score
            src, dst = (b, a) if way == "up" else (a, b)
            col.edges.append(ContextEdge(source=src, target=dst, type=R_CAUSES, confidence=conf))
        frontier = {u: s for u, s in nxt.items() if u in col.nodes}


async def _carry_causal_targets(ctx: ViewContext, col: ViewCollector) -> None:
    """Add what the view's causal nodes affect or refer to, with those links as edges."""
    seeds = ctx.seeds
    if not col.can_take((ENTITY, EVENT)):
        return
    rows = await ctx.walks.causal_targets(
        ctx.namespace,
        [u for u, n in col.nodes.items() if n.label == CAUSAL],
        ctx.max_nodes * 2,
    )
    for src, rel, label, raw in rows:
        seed = seeds.entities.get(raw["uuid"]) or seeds.events.get(raw["uuid"])
        col.add(label, raw, max(col.nodes[src].score * 0.9, seed or 0.0))
        col.edges.append(ContextEdge(source=src, target=raw["uuid"], type=rel))


async def causal_view(ctx: ViewContext, depth: int) -> ViewResult:
    """Causal nodes affecting the seeds (or matched directly), walked up and/or down C_CAUSES
    to `depth`; a node's score is its start score times the best path confidence to it."""
    start, raw_nodes = await _causal_starts(ctx)
    if not start:
        return ViewResult(
            view="causal", status="skipped", error="no causal nodes linked to the seeds"
        )
    col = ViewCollector("causal", ctx.max_nodes)
    for uuid, score in sorted(start.items(), key=lambda kv: -kv[1]):
        col.add(CAUSAL, raw_nodes[uuid], score)
    ways = _causal_ways(ctx.intent.causal_direction)
    first: dict[str, list[tuple[str, float | None, dict[str, Any]]]] = {}
    frontier = [u for u in start if u in col.nodes]
    if len(ways) == 2 and depth > 0 and frontier:
        # Both walks start from the same frontier (the start nodes in the view; the walk
        # up adds none of them): their first hops are read together.
        first["up"], first["down"] = await ctx.walks.causal_steps_both(
            ctx.namespace, frontier, ctx.max_nodes * 4
        )
    for way in ways:
        await _walk_causes(ctx, col, start, way, depth, first.get(way))
    await _carry_causal_targets(ctx, col)
    return col.result()


async def run_views(
    ctx: ViewContext,
    *,
    timeout_s: float,
    views: Sequence[str] = ("entity", "temporal", "causal"),
    ppr: bool = False,
    ppr_config: PPRConfig | None = None,
) -> list[ViewResult]:
    """Run the expansion views in parallel, each under its own timeout.

    A view that fails or times out is reported with its status; the others go on.
    `ppr=True` adds the personalized-PageRank view (multi-hop questions).
    """
    hints = ctx.intent.depth_hints
    runners = {
        "entity": lambda: entity_view(ctx, hints.entity),
        "temporal": lambda: temporal_view(ctx, hints.temporal),
        "causal": lambda: causal_view(ctx, hints.causal),
        "ppr": lambda: ppr_view(ctx, ppr_config),
    }
    if ppr and "ppr" not in views:
        views = (*views, "ppr")
    results: dict[str, ViewResult] = {}

    async def run(name: str) -> None:
        started = anyio.current_time()
        try:
            with anyio.fail_after(timeout_s):
                result = await runners[name]()
        except TimeoutError:
            result = ViewResult(
                view=name,  # type: ignore[arg-type]
                status="timeout",
                error=f"took longer than {timeout_s:g}s (POLYG_PARALLEL_TIMEOUT)",
            )
        except Exception as exc:  # one view's failure must not sink the others
            logger.warning("%s view failed: %s", name, exc, exc_info=True)
            result = ViewResult(view=name, status="failed", error=str(exc) or type(exc).__name__)  # type: ignore[arg-type]
        results[name] = result.model_copy(
            update={"elapsed_ms": round((anyio.current_time() - started) * 1000, 2)}
        )

    async with anyio.create_task_group() as tg:
        for name in views:
            tg.start_soon(run, name)
    return [results[name] for name in views]
