"""Steps 2-4 of MAGMA: seeds from vector search and names, then the expansion views.

Each view also returns the cross-linked nodes it passes through (the entities an
event involves, the entities and events a causal node affects or refers to), so
a node reached by several views carries the same uuid in each and the merge can
boost it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import anyio
import numpy as np
import numpy.typing as npt
from polyg_shared.intents import CausalDirection, Intent
from polyg_shared.retrieval import ContextEdge, ContextNode, ViewResult
from polyg_shared.timeutil import to_epoch_ms, utc_now

from polyg_core.errors import PolygError
from polyg_core.graphs.relation_time import RELATION_HELD, held_params
from polyg_core.recall.context_nodes import to_context
from polyg_core.recall.ppr import PPRConfig, ppr_view
from polyg_core.resolve import ENTITY_NAMES, NameResolver
from polyg_core.storage.cypher import clean, props
from polyg_core.storage.fulltext import word_search
from polyg_core.storage.schema import CAUSAL, CONCEPT, ENTITY, EVENT, FACT, MEMORY, check_label
from polyg_core.storage.store import FalkorStore
from polyg_core.storage.vector import Neighbour, knn

logger = logging.getLogger(__name__)

MAX_VIEW_NODES = 50
SEED_ENTITY_MIN = 0.5
HOP_DECAY = 0.8
SEARCH_LABELS = (CONCEPT, MEMORY, ENTITY, CAUSAL)
WORD_LABELS = (EVENT, FACT)
"""Labels without vectors, seeded by the words they share with the question."""


@dataclass
class Seeds:
    """Where expansion starts: node uuids with their seed scores, per graph."""

    entities: dict[str, float] = field(default_factory=dict)
    events: dict[str, float] = field(default_factory=dict)
    facts: dict[str, float] = field(default_factory=dict)
    causal: dict[str, float] = field(default_factory=dict)
    semantic: ViewResult = field(default_factory=lambda: ViewResult(view="semantic"))

    def empty(self) -> bool:
        return not (self.entities or self.events or self.facts or self.causal)


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


def _bump(target: dict[str, float], uuid: str, score: float) -> None:
    if score > target.get(uuid, -1.0):
        target[uuid] = score


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
    tf = intent.timeframe
    at = to_epoch_ms(as_of or (tf.end if tf and tf.end else utc_now()))
    # With a timeframe, a fact valid at any time in it is a seed; else one valid at `at`.
    window = (
        (
            to_epoch_ms(tf.start) if tf.start else None,
            to_epoch_ms(tf.end) if tf.end else None,
        )
        if tf is not None and (tf.start or tf.end)
        else None
    )
    seeds = Seeds()
    nodes: dict[str, ContextNode] = {}
    edges: list[ContextEdge] = []
    words = intent.semantic_query.strip()
    if vector is not None or words:
        hits_by_label: dict[str, list[Neighbour]] = {}

        async def search(label: str) -> None:
            assert vector is not None
            hits_by_label[label] = await knn(
                store, namespace, label, vector.tolist(), top_k, min_similarity=min_score
            )

        async def search_words(label: str) -> None:
            found = await word_search(store, namespace, label, words, top_k)
            # Not held to `min_score`, a bar for cosine similarity: the share of the
            # question's words a short event holds is low even when it is the answer.
            hits_by_label[label] = [Neighbour(h.label, h.properties, h.overlap) for h in found]

        try:
            async with anyio.create_task_group() as tg:
                for label in SEARCH_LABELS if vector is not None else ():
                    tg.start_soon(search, label)
                for label in WORD_LABELS if words else ():
                    tg.start_soon(search_words, label)
        except BaseExceptionGroup as group:
            # Callers expect polyg's own error (storage down, timeout), not a group of them.
            raise group.exceptions[0] from group
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
                if label == ENTITY and hit.similarity >= SEED_ENTITY_MIN:
                    _bump(seeds.entities, node.uuid, hit.similarity)
                elif label == EVENT:
                    _bump(seeds.events, node.uuid, hit.similarity)
                elif label == FACT:
                    _bump(seeds.facts, node.uuid, hit.similarity)
                elif label == CAUSAL:
                    _bump(seeds.causal, node.uuid, hit.similarity)
    for name in intent.entities:
        try:
            found = await resolver.find(namespace, ENTITY_NAMES, name)
        except PolygError:  # ambiguous: the vector seeds still cover it
            found = None
        if found is not None:
            _bump(seeds.entities, found.uuid, 1.0)
            nodes[found.uuid] = to_context(ENTITY, found.properties, 1.0)
    concept_ids = [u for u, n in nodes.items() if n.label == CONCEPT]
    memory_ids = [u for u, n in nodes.items() if n.label == MEMORY]
    if concept_ids or memory_ids:
        # Anchored on the indexed uuids first (WITH): otherwise FalkorDB scans every concept.
        res = await store.query(
            namespace,
            "CALL { MATCH (s:S_Concept) WHERE s.uuid IN $cids WITH s "
            "MATCH (s)-[:X_REPRESENTS]->(e:E_Entity) RETURN s.uuid AS src, s.uuid AS cu, e "
            "UNION MATCH (s:S_Memory) WHERE s.uuid IN $mids WITH s "
            "MATCH (s)-[:S_ABOUT]->(c:S_Concept)-[:X_REPRESENTS]->(e:E_Entity) "
            "RETURN s.uuid AS src, c.uuid AS cu, e } "
            f"RETURN src, cu, {props('e')} LIMIT 200",
            {"cids": concept_ids, "mids": memory_ids},
            read_only=True,
        )
        for src, concept, entity in res.rows:
            entity = clean(entity)
            score = nodes[src].score if src in nodes else min_score
            node = to_context(ENTITY, entity, score)
            if node.uuid not in nodes or nodes[node.uuid].score < score:
                nodes[node.uuid] = node
            _bump(seeds.entities, node.uuid, score)
            edges.append(ContextEdge(source=concept, target=node.uuid, type="X_REPRESENTS"))
    seeds.semantic = ViewResult(view="semantic", nodes=list(nodes.values()), edges=edges)
    return seeds


@dataclass
class ViewContext:
    """What every expansion view needs."""

    store: FalkorStore
    namespace: str
    intent: Intent
    seeds: Seeds
    max_nodes: int = MAX_VIEW_NODES
    now: datetime = field(default_factory=utc_now)

    def window(self) -> tuple[int | None, int | None]:
        tf = self.intent.timeframe
        if tf is None:
            return None, None
        start = to_epoch_ms(tf.start) if tf.start else None
        end = to_epoch_ms(tf.end) if tf.end else None
        return start, end


class _Collector:
    def __init__(self, view: str, cap: int) -> None:
        self.view = view
        self.cap = cap
        self.nodes: dict[str, ContextNode] = {}
        self.edges: list[ContextEdge] = []

    @property
    def full(self) -> bool:
        return len(self.nodes) >= self.cap

    def add(self, label: str, raw: dict[str, Any], score: float) -> bool:
        node = to_context(label, clean(raw), score)
        if node.uuid in self.nodes:
            if self.nodes[node.uuid].score < node.score:
                self.nodes[node.uuid] = self.nodes[node.uuid].model_copy(
                    update={"score": node.score}
                )
            return False
        if self.full:
            return False
        self.nodes[node.uuid] = node
        return True

    def result(self) -> ViewResult:
        """The nodes and the edges between them, each edge once: a walk meets an edge
        from both of its ends (hop 1 from `a`, hop 2 from `b`)."""
        keep = set(self.nodes)
        edges: list[ContextEdge] = []
        seen: set[tuple[str, str, str, str | None]] = set()
        for e in self.edges:
            key = (e.source, e.target, e.type, e.label)
            if e.source in keep and e.target in keep and key not in seen:
                seen.add(key)
                edges.append(e)
        return ViewResult(view=self.view, nodes=list(self.nodes.values()), edges=edges)  # type: ignore[arg-type]


async def entity_view(ctx: ViewContext, depth: int) -> ViewResult:
    """BFS over E_RELATES from the seed entities; score decays 0.8 per hop. Only the
    relations that held in the question's timeframe (or now) are walked."""
    if not ctx.seeds.entities:
        return ViewResult(view="entity", status="skipped", error="no seed entities")
    col = _Collector("entity", ctx.max_nodes)
    res = await ctx.store.query(
        ctx.namespace,
        f"MATCH (e:E_Entity) WHERE e.uuid IN $ids RETURN {props('e')}",
        {"ids": list(ctx.seeds.entities)},
        read_only=True,
    )
    for (raw,) in res.rows:
        col.add(ENTITY, raw, ctx.seeds.entities.get(raw["uuid"], 0.5))
    frontier = dict(ctx.seeds.entities)
    for _hop in range(depth):
        if not frontier or col.full:
            break
        res = await ctx.store.query(
            ctx.namespace,
            "MATCH (a:E_Entity)-[r:E_RELATES]-(b:E_Entity) WHERE a.uuid IN $ids "
            f"AND {RELATION_HELD} "
            f"RETURN a.uuid, startNode(r) = a, r.relationship_type, {props('b')} LIMIT $cap",
            {
                "ids": list(frontier),
                "cap": ctx.max_nodes * 4,
                **held_params(*ctx.window(), to_epoch_ms(ctx.now)),
            },
            read_only=True,
        )
        nxt: dict[str, float] = {}
        for a, outgoing, rel, raw in res.rows:
            score = frontier[a] * HOP_DECAY
            b = raw["uuid"]
            if col.add(ENTITY, raw, score):
                nxt[b] = score
            src, dst = (a, b) if outgoing else (b, a)
            col.edges.append(ContextEdge(source=src, target=dst, type="E_RELATES", label=rel))
        frontier = nxt
    return col.result()


async def temporal_view(ctx: ViewContext, depth: int) -> ViewResult:
    """Events and facts involving the seeds (facts valid now or during the timeframe),
    along T_BEFORE up to `depth`, within the timeframe; carries the involved entities."""
    start, end = ctx.window()
    seeds = ctx.seeds
    if not (seeds.entities or seeds.events or seeds.facts) and start is None and end is None:
        return ViewResult(
            view="temporal", status="skipped", error="no seed entities, events or timeframe"
        )
    col = _Collector("temporal", ctx.max_nodes)
    window = (
        "($start IS NULL OR e.occurred_at >= $start) AND ($end IS NULL OR e.occurred_at <= $end)"
    )
    params: dict[str, Any] = {
        "ents": list(seeds.entities),
        "evs": list(seeds.events),
        "facts": list(seeds.facts),
        "start": start,
        "end": end,
        "cap": ctx.max_nodes,
    }
    scores: dict[str, float] = {}
    if seeds.entities:
        res = await ctx.store.query(
            ctx.namespace,
            "MATCH (n:E_Entity) WHERE n.uuid IN $ents WITH n "
            f"MATCH (e:T_Event)-[:X_INVOLVES]->(n) WHERE {window} "
            f"RETURN {props('e')}, n.uuid ORDER BY e.occurred_at DESC LIMIT $cap",
            params,
            read_only=True,
        )
        for raw, ent in res.rows:
            score = seeds.entities[ent] * 0.9
            col.add(EVENT, raw, score)
            scores[raw["uuid"]] = max(scores.get(raw["uuid"], 0.0), score)
    if seeds.events:
        res = await ctx.store.query(
            ctx.namespace,
            f"MATCH (e:T_Event) WHERE e.uuid IN $evs AND {window} RETURN {props('e')}",
            params,
            read_only=True,
        )
        for (raw,) in res.rows:
            score = seeds.events[raw["uuid"]]
            col.add(EVENT, raw, score)
            scores[raw["uuid"]] = max(scores.get(raw["uuid"], 0.0), score)
    if not scores and not seeds.entities and (start is not None or end is not None):
        res = await ctx.store.query(
            ctx.namespace,
            f"MATCH (e:T_Event) WHERE {window} RETURN {props('e')} ORDER BY e.occurred_at ASC LIMIT $cap",
            params,
            read_only=True,
        )
        for (raw,) in res.rows:
            col.add(EVENT, raw, 0.6)
            scores[raw["uuid"]] = 0.6
    frontier = dict(scores)
    for _hop in range(max(depth - 1, 0)):
        if not frontier or col.full:
            break
        res = await ctx.store.query(
            ctx.namespace,
            "MATCH (a:T_Event) WHERE a.uuid IN $ids WITH a "
            f"MATCH (a)-[:T_BEFORE]-(e:T_Event) WHERE {window} RETURN a.uuid, {props('e')} "
            "LIMIT $cap",
            {**params, "ids": list(frontier)},
            read_only=True,
        )
        nxt: dict[str, float] = {}
        for a, raw in res.rows:
            score = frontier[a] * HOP_DECAY
            if col.add(EVENT, raw, score):
                nxt[raw["uuid"]] = score
        frontier = nxt
    # Facts: current ones, or those valid at some time in the asked timeframe ("in March
    # 2025" takes what held then, also a fact that ended or began within the month).
    if start is None and end is None:
        valid = "f.valid_from <= $asof AND (f.valid_to IS NULL OR f.valid_to > $asof)"
        fact_params = {**params, "asof": to_epoch_ms(ctx.now)}
    else:
        valid = (
            "($end IS NULL OR f.valid_from <= $end) "
            "AND ($start IS NULL OR f.valid_to IS NULL OR f.valid_to > $start)"
        )
        fact_params = dict(params)
    if seeds.entities:
        res = await ctx.store.query(
            ctx.namespace,
            "MATCH (n:E_Entity) WHERE n.uuid IN $ents WITH n "
            f"MATCH (f:T_Fact)-[:X_INVOLVES]->(n) WHERE {valid} "
            f"RETURN {props('f')}, n.uuid LIMIT $cap",
            fact_params,
            read_only=True,
        )
        for raw, ent in res.rows:
            col.add(FACT, raw, seeds.entities[ent] * 0.9)
    if seeds.facts:
        res = await ctx.store.query(
            ctx.namespace,
            f"MATCH (f:T_Fact) WHERE f.uuid IN $facts AND {valid} RETURN {props('f')}",
            fact_params,
            read_only=True,
        )
        for (raw,) in res.rows:
            col.add(FACT, raw, seeds.facts[raw["uuid"]])
    await _carry_entities(ctx, col, "X_INVOLVES")
    return col.result()


async def _carry_entities(ctx: ViewContext, col: _Collector, link: str) -> None:
    """Add the entities the view's nodes are cross-linked to, with those links as edges."""
    rel = {"X_INVOLVES": "X_INVOLVES", "X_AFFECTS": "X_AFFECTS"}[link]
    rows: list[Any] = []
    for label in sorted({n.label for n in col.nodes.values() if n.label != ENTITY}):
        ids = [u for u, n in col.nodes.items() if n.label == label]
        # Labelled and anchored (WITH): an unlabelled `x.uuid IN $ids` scans every node.
        res = await ctx.store.query(
            ctx.namespace,
            f"MATCH (x:{check_label(label)}) WHERE x.uuid IN $ids WITH x "
            f"MATCH (x)-[:{rel}]->(n:E_Entity) RETURN x.uuid, {props('n')} LIMIT $cap",
            {"ids": ids, "cap": ctx.max_nodes * 2},
            read_only=True,
        )
        rows.extend(res.rows)
    for src, raw in rows:
        base = col.nodes[src].score
        seed = ctx.seeds.entities.get(raw["uuid"])
        col.add(ENTITY, raw, max(base * 0.9, seed or 0.0))
        col.edges.append(ContextEdge(source=src, target=raw["uuid"], type=rel))


async def causal_view(ctx: ViewContext, depth: int) -> ViewResult:
    """Causal nodes affecting the seeds (or matched directly), walked up and/or down C_CAUSES
    to `depth`; a node's score is its start score times the best path confidence to it."""
    seeds = ctx.seeds
    col = _Collector("causal", ctx.max_nodes)
    start: dict[str, float] = dict(seeds.causal)
    raw_nodes: dict[str, dict[str, Any]] = {}
    if seeds.causal:
        res = await ctx.store.query(
            ctx.namespace,
            f"MATCH (c:C_Node) WHERE c.uuid IN $ids RETURN {props('c')}",
            {"ids": list(seeds.causal)},
            read_only=True,
        )
        for (raw,) in res.rows:
            raw_nodes[raw["uuid"]] = raw
    if seeds.entities or seeds.events:
        res = await ctx.store.query(
            ctx.namespace,
            "CALL { MATCH (t:E_Entity) WHERE t.uuid IN $ents WITH t "
            "MATCH (c:C_Node)-[:X_AFFECTS]->(t) RETURN c, t.uuid AS tu "
            "UNION MATCH (t:T_Event) WHERE t.uuid IN $evs WITH t "
            "MATCH (c:C_Node)-[:X_REFERS_TO]->(t) RETURN c, t.uuid AS tu } "
            f"RETURN {props('c')}, tu LIMIT $cap",
            {"ents": list(seeds.entities), "evs": list(seeds.events), "cap": ctx.max_nodes},
            read_only=True,
        )
        for raw, target in res.rows:
            score = (seeds.entities.get(target) or seeds.events.get(target) or 0.5) * 0.9
            _bump(start, raw["uuid"], score)
            raw_nodes[raw["uuid"]] = raw
    if not start:
        return ViewResult(
            view="causal", status="skipped", error="no causal nodes linked to the seeds"
        )
    for uuid, score in sorted(start.items(), key=lambda kv: -kv[1]):
        col.add(CAUSAL, raw_nodes[uuid], score)
    direction = ctx.intent.causal_direction
    walks: list[tuple[str, str]] = []
    if direction in (CausalDirection.UPSTREAM, CausalDirection.BOTH):
        walks.append(("(b:C_Node)-[r:C_CAUSES]->(a:C_Node)", "up"))
    if direction in (CausalDirection.DOWNSTREAM, CausalDirection.BOTH):
        walks.append(("(a:C_Node)-[r:C_CAUSES]->(b:C_Node)", "down"))
    for pattern, way in walks:
        frontier = {u: s for u, s in start.items() if u in col.nodes}
        for _hop in range(depth):
            if not frontier:
                break
            res = await ctx.store.query(
                ctx.namespace,
                f"MATCH {pattern} WHERE a.uuid IN $ids "
                f"RETURN a.uuid, r.confidence, {props('b')} LIMIT $cap",
                {"ids": list(frontier), "cap": ctx.max_nodes * 4},
                read_only=True,
            )
            nxt: dict[str, float] = {}
            for a, confidence, raw in res.rows:
                conf = float(confidence if confidence is not None else 0.5)
                score = frontier[a] * conf
                b = raw["uuid"]
                added = col.add(CAUSAL, raw, score)
                if added or (b in col.nodes and b not in frontier and score > nxt.get(b, 0.0)):
                    nxt[b] = score
                src, dst = (b, a) if way == "up" else (a, b)
                col.edges.append(
                    ContextEdge(source=src, target=dst, type="C_CAUSES", confidence=conf)
                )
            frontier = {u: s for u, s in nxt.items() if u in col.nodes}
    res = await ctx.store.query(
        ctx.namespace,
        "MATCH (c:C_Node)-[r:X_AFFECTS|X_REFERS_TO]->(t) WHERE c.uuid IN $ids "
        f"RETURN c.uuid, type(r), labels(t)[0], {props('t')} LIMIT $cap",
        {"ids": [u for u, n in col.nodes.items() if n.label == CAUSAL], "cap": ctx.max_nodes * 2},
        read_only=True,
    )
    for src, rel, label, raw in res.rows:
        seed = seeds.entities.get(raw["uuid"]) or seeds.events.get(raw["uuid"])
        col.add(str(label), raw, max(col.nodes[src].score * 0.9, seed or 0.0))
        col.edges.append(ContextEdge(source=src, target=raw["uuid"], type=str(rel)))
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
