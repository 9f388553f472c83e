"""Recall's last retrieval step: filters, decay and hybrid ranking over the merged subgraph.

Runs after `merge_views` and before linearizing:

1. memories (`S_Memory`) that fail the category / tag / project / who filter leave the
   merged subgraph (with their edges);
2. each remaining memory gets its decay weight `exp(-days since last access / 30)` and a
   retention tier (short / mid / long) in its attributes; the weight breaks ties between
   equally relevant memories (at most a 1% cut, unless decay is off), so age never pushes
   a matching memory below one that does not match;
3. the hybrid ranking (`polyg_core.recall.hybrid_scores`) splits the best nodes into core and
   extended by the query mode.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from polyg_shared.retrieval import ContextNode, MergedSubgraph, RankingReport, ViewResult
from polyg_shared.timeutil import to_epoch_ms

from polyg_core.recall.concurrency import both
from polyg_core.recall.context_nodes import to_context
from polyg_core.recall.decay import DecayPolicy, MemoryMeta, memory_meta
from polyg_core.recall.filters import MemoryFilter
from polyg_core.recall.hybrid_scores import (
    Mode,
    Ranked,
    RankingWeights,
    Vector,
    causal_scores,
    fetch_embeddings,
    hybrid_rank,
)
from polyg_core.storage.schema import CAUSAL, MEMORY, X_AFFECTS
from polyg_core.storage.store import FalkorStore
from polyg_core.storage.vector import knn
from polyg_core.storage.write_stamp import StampedReads

logger = logging.getLogger(__name__)

FILTER_KNN = 100
AGE_TIE_BREAK = 0.01


@dataclass
class RankedRecall:
    """The merged subgraph after filters and decay, the ranking, and its report."""

    merged: MergedSubgraph
    ranked: Ranked
    report: RankingReport


EMBEDDING_CANDIDATES = 60


async def filtered_memory_view(
    store: FalkorStore,
    namespace: str,
    vector: Vector,
    memory_filter: MemoryFilter,
    *,
    k: int = FILTER_KNN,
    min_similarity: float = 0.2,
) -> ViewResult:
    """Memories that pass the filter among the `k` nearest to the question.

    With a filter set, the few seed memories may all fail it; this wider k-NN (through the
    vector index) finds the matching ones.
    """
    hits = await knn(store, namespace, MEMORY, vector.tolist(), k, min_similarity=min_similarity)
    meta = await memory_meta(store, namespace, [h.uuid for h in hits])
    nodes = [
        to_context(MEMORY, h.properties, h.similarity)
        for h in hits
        if h.uuid in meta and memory_filter.matches(meta[h.uuid])
    ]
    return ViewResult(view="semantic", nodes=nodes)


def _causal_targets(
    merged: MergedSubgraph, causal_seeds: Mapping[str, float], entities: Mapping[str, float]
) -> set[str]:
    targets = set(causal_seeds)
    for e in merged.edges:
        if e.type == X_AFFECTS and e.target in entities:
            targets.add(e.source)
    labels = {n.uuid: n.label for n in merged.nodes}
    return {t for t in targets if labels.get(t) == CAUSAL}


def _filtered_out(
    memory_ids: list[str], meta: Mapping[str, MemoryMeta], flt: MemoryFilter
) -> set[str]:
    """The memories an active filter leaves out (one without metadata too)."""
    if not flt.active:
        return set()
    return {u for u in memory_ids if u not in meta or not flt.matches(meta[u])}


def _aged(
    nodes: list[ContextNode],
    meta: Mapping[str, MemoryMeta],
    policy: DecayPolicy,
    now_ms: int,
    decay: bool,
) -> tuple[list[ContextNode], dict[str, float]]:
    """The nodes with each memory's decay, retention tier and tags written in, and (when
    `decay`) the score multiplier of each memory by its age."""
    multipliers: dict[str, float] = {}
    out: list[ContextNode] = []
    for n in nodes:
        m = meta.get(n.uuid)
        if m is not None:
            weight = policy.weight(m.last_ms, now_ms)
            attrs = {
                **n.attributes,
                "decay": round(weight, 4),
                "retention_tier": policy.tier(m.created_ms, now_ms),
                "tags": list(m.tags),
            }
            if decay:
                # Age breaks ties and never vetoes: at most a 1% cut for the oldest.
                multipliers[n.uuid] = 1.0 - AGE_TIE_BREAK * (1.0 - weight)
            n = n.model_copy(update={"attributes": attrs})
        out.append(n)
    return out, multipliers


def _decayed(nodes: list[ContextNode], multipliers: Mapping[str, float]) -> list[ContextNode]:
    """The nodes with their scores times their multipliers, best first (ties by text). A
    node without a multiplier keeps its score (times 1.0): no copy for it."""
    out = [
        n if (m := multipliers.get(n.uuid)) is None else n.model_copy(update={"score": n.score * m})
        for n in nodes
    ]
    out.sort(key=lambda n: (-n.score, n.text))
    return out


def _best_placed(nodes: Sequence[ContextNode]) -> list[ContextNode]:
    """Vectors travel as 384 floats each: they are read only for the best-placed
    candidates, the only ones that can reach the core and extended lists."""
    return sorted(nodes, key=lambda n: -n.score)[:EMBEDDING_CANDIDATES]


async def rank_recall(
    store: FalkorStore,
    namespace: str,
    merged: MergedSubgraph,
    *,
    vector: Vector | None,
    mode: Mode,
    now: datetime,
    causal_seeds: Mapping[str, float],
    entity_seeds: Mapping[str, float],
    decay: bool = True,
    policy: DecayPolicy | None = None,
    memory_filter: MemoryFilter | None = None,
    weights: RankingWeights | None = None,
    reads: StampedReads | None = None,
) -> RankedRecall:
    """Filter, decay and rank the merged candidates (see the module docstring).

    `reads`: replies kept under the namespace's write stamp (the candidates' vectors)."""
    policy = policy or DecayPolicy()
    flt = memory_filter or MemoryFilter()
    w = weights or RankingWeights()
    now_ms = to_epoch_ms(now)
    memory_ids = [n.uuid for n in merged.nodes if n.label == MEMORY]
    embeddings: dict[str, Vector] | None = None
    if flt.active:
        meta = await memory_meta(store, namespace, memory_ids)
    else:
        # Without a filter no candidate is dropped: the ones whose vectors are read are
        # known before the memories' metadata, and the two reads go out together.
        meta, embeddings = await both(
            memory_meta(store, namespace, memory_ids),
            fetch_embeddings(store, namespace, _best_placed(merged.nodes), reads),
        )
    dropped = _filtered_out(memory_ids, meta, flt)
    nodes, multipliers = _aged(
        [n for n in merged.nodes if n.uuid not in dropped], meta, policy, now_ms, decay
    )
    kept = {n.uuid for n in nodes}
    edges = [e for e in merged.edges if e.source in kept and e.target in kept]
    base = MergedSubgraph(nodes=nodes, edges=edges, views=merged.views)
    if embeddings is None:
        embeddings = await fetch_embeddings(store, namespace, _best_placed(nodes), reads)
    causal = causal_scores(base, _causal_targets(base, causal_seeds, entity_seeds))
    ranked = hybrid_rank(
        nodes,
        mode=mode,
        query_vector=np.asarray(vector, dtype=np.float32) if vector is not None else None,
        embeddings=embeddings,
        causal=causal,
        multipliers=multipliers,
        weights=w,
    )
    decayed = _decayed(nodes, multipliers)
    report = RankingReport(
        weights={"vector": w.vector, "graph": w.graph, "causal": w.causal},
        threshold=w.threshold,
        candidates=ranked.candidates,
        below_threshold=ranked.below_threshold,
        duplicates_removed=ranked.duplicates,
        decay=decay,
        filters=flt.describe(),
        memories_filtered_out=len(dropped),
    )
    return RankedRecall(
        merged=MergedSubgraph(nodes=decayed, edges=edges, views=merged.views),
        ranked=ranked,
        report=report,
    )
