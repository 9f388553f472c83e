"""Hybrid ranking of recall's candidates: weights, threshold, near-duplicates, mode budgets.

`final = w_v * vector + w_g * graph + w_c * causal` (default 0.4 / 0.4 / 0.2), times the
memory's decay weight, where

* vector: cosine similarity of the node's embedding to the question (clipped to [0, 1]);
  the embeddings of the final candidates only are read, in one query;
* graph: the merged (views + PPR) score divided by the best merged score;
* causal: for causal nodes, the noisy-OR probability that the node leads to (or follows
  from) the question's causal seeds over the merged subgraph's C_CAUSES links; other
  nodes inherit the best value of a causal node that affects or refers to them.

Nodes below the threshold (0.3) are dropped, then near-duplicates (cosine >= 0.95 to a
better-ranked node), and the rest is cut to the mode's budget: execution 5 core,
planning 5 core + 15 extended, brainstorming 5 core + 25 extended. The mode comes from
the `mode` argument or is read from the question's wording (`detect_mode`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

import numpy as np
import numpy.typing as npt
from polyg_shared.retrieval import ContextNode, MergedSubgraph

from polyg_core.errors import InvalidInput
from polyg_core.recall.probability import Link, probabilities_to_targets
from polyg_core.storage.schema import CAUSAL, EMBEDDED_LABELS, X_AFFECTS, X_REFERS_TO
from polyg_core.storage.store import FalkorStore
from polyg_core.storage.write_stamp import StampedReads

logger = logging.getLogger(__name__)

Mode = Literal["execution", "planning", "brainstorming"]
MODES: tuple[Mode, ...] = get_args(Mode)
RANKING_SAMPLES = 2_000

Vector = npt.NDArray[np.float32]


@dataclass(frozen=True)
class ModeBudget:
    """How many results a mode keeps: `core` always, `extended` for wider questions."""

    core: int
    extended: int


BUDGETS: dict[Mode, ModeBudget] = {
    "execution": ModeBudget(5, 0),
    "planning": ModeBudget(5, 15),
    "brainstorming": ModeBudget(5, 25),
}

_BRAINSTORM = re.compile(
    r"\b(what if|brainstorm\w*|ideas?|alternatives?|imagine|could we|might we|"
    r"possibilit\w+|options?|creative\w*|explore)\b",
    re.IGNORECASE,
)
_PLANNING = re.compile(
    r"\b(how (should|do|can|could|would|will) (we|i)|should (we|i)|plan\w*|strateg\w+|"
    r"steps?|roadmap|approach|prepare|prevent\w*|avoid|next time|mitigat\w+|decide|decision)\b",
    re.IGNORECASE,
)


def detect_mode(question: str) -> Mode:
    """The query mode from the question's wording.

    "What if ...", "ideas", "alternatives", "options" → brainstorming; "how should we",
    "plan", "steps", "prevent", "strategy" → planning; anything else (factual "what /
    why / when / who" questions) → execution.
    """
    if _BRAINSTORM.search(question):
        return "brainstorming"
    if _PLANNING.search(question):
        return "planning"
    return "execution"


def check_mode(mode: str | None, question: str) -> Mode:
    """The given mode, or the detected one when `mode` is None or "auto".

    Raises:
        InvalidInput: an unknown mode.
    """
    if mode is None or mode == "auto":
        return detect_mode(question)
    if mode not in MODES:
        raise InvalidInput(f"unknown mode {mode!r}; use one of {', '.join(MODES)} or 'auto'")
    return mode


@dataclass(frozen=True)
class RankingWeights:
    """Weights of the hybrid score and the filters after it (all configurable)."""

    vector: float = 0.4
    graph: float = 0.4
    causal: float = 0.2
    threshold: float = 0.3
    duplicate_cosine: float = 0.95

    def __post_init__(self) -> None:
        parts = (self.vector, self.graph, self.causal)
        if any(w < 0 for w in parts) or sum(parts) <= 0:
            raise InvalidInput(
                f"ranking weights must be >= 0 with a positive sum, got {parts}; "
                "the default is 0.4 / 0.4 / 0.2"
            )


@dataclass
class Ranked:
    """The ranking's outcome: the kept nodes split by the mode's budget, and what was dropped."""

    mode: Mode
    core: list[ContextNode] = field(default_factory=lambda: [])
    extended: list[ContextNode] = field(default_factory=lambda: [])
    candidates: int = 0
    below_threshold: int = 0
    duplicates: int = 0


async def fetch_embeddings(
    store: FalkorStore,
    namespace: str,
    nodes: Sequence[ContextNode],
    reads: StampedReads | None = None,
) -> dict[str, Vector]:
    """Embeddings of the given nodes, in one query (one index lookup per label, no scan).

    With `reads` (kept under the namespace's write stamp), a node's vector read by an
    earlier recall is not read again (nor is the absence of one)."""
    out: dict[str, Vector] = {}
    by_label: dict[str, list[str]] = {}
    for n in nodes:
        if n.label not in EMBEDDED_LABELS:
            continue
        key = ("embedding", n.uuid)
        if reads is not None and key in reads:
            kept: Vector | None = reads.get(key)
            if kept is not None:
                out[n.uuid] = kept
            continue
        by_label.setdefault(n.label, []).append(n.uuid)
    if not by_label:
        return out
    parts: list[str] = []
    params: dict[str, Any] = {}
    for i, (label, ids) in enumerate(sorted(by_label.items())):
        params[f"ids{i}"] = ids
        parts.append(
            f"MATCH (n:{label}) WHERE n.uuid IN $ids{i} AND n.embedding IS NOT NULL "
            "RETURN n.uuid AS uuid, n.embedding AS embedding"
        )
    res = await store.query(namespace, " UNION ALL ".join(parts), params, read_only=True)
    read: dict[str, Vector | None] = {}
    for uuid, emb in res.rows:
        vec = np.asarray(emb, dtype=np.float32)
        norm = float(np.linalg.norm(vec))
        read[str(uuid)] = vec / norm if norm > 0 else None
    for ids in by_label.values():
        for uuid in ids:
            vec = read.get(uuid)
            if vec is not None:
                out[uuid] = vec
            if reads is not None:
                reads.put(("embedding", uuid), vec)
    return out


def causal_scores(
    merged: MergedSubgraph, targets: set[str], *, samples: int = RANKING_SAMPLES
) -> dict[str, float]:
    """Noisy-OR causal relevance of every merged node to the causal `targets`.

    A causal node scores max(P(node leads to a target), P(a target leads to node));
    a non-causal node, the best score of a causal node linked to it by X_AFFECTS or
    X_REFERS_TO. Targets score 1.
    """
    causal_ids = [n.uuid for n in merged.nodes if n.label == CAUSAL]
    targets = {t for t in targets if t in set(causal_ids)}
    if not causal_ids or not targets:
        return {}
    links: list[Link] = [
        (e.source, e.target, e.confidence if e.confidence is not None else 0.5)
        for e in merged.edges
        if e.type == "C_CAUSES"
    ]
    reverse: list[Link] = [(v, u, p) for u, v, p in links]
    up = probabilities_to_targets(links, causal_ids, targets, samples=samples)
    down = probabilities_to_targets(reverse, causal_ids, targets, samples=samples)
    scores = {u: max(up.get(u, 0.0), down.get(u, 0.0)) for u in causal_ids}
    for e in merged.edges:
        if e.type in (X_AFFECTS, X_REFERS_TO) and e.source in scores:
            scores[e.target] = max(scores.get(e.target, 0.0), scores[e.source])
    return scores


def _cosine(query: Vector | None, emb: Vector | None) -> float | None:
    if query is None or emb is None or query.shape != emb.shape:
        return None
    return max(0.0, min(1.0, float(np.dot(query, emb))))


def hybrid_rank(
    nodes: Sequence[ContextNode],
    *,
    mode: Mode,
    query_vector: Vector | None,
    embeddings: Mapping[str, Vector],
    causal: Mapping[str, float] | None = None,
    multipliers: Mapping[str, float] | None = None,
    weights: RankingWeights | None = None,
) -> Ranked:
    """Score, filter, de-duplicate and compress the candidates (pure; no I/O).

    Args:
        nodes: the merged candidates (their `score` is the graph score, any scale).
        mode: picks the budget (see `BUDGETS`).
        query_vector: the question's embedding (L2-normalised).
        embeddings: node embeddings (L2-normalised) by uuid; missing ones fall back to
            the node's semantic-view score, else 0.
        causal: noisy-OR causal scores by uuid (0 when absent).
        multipliers: per-node factors on the final score (the decay weight of memories).
        weights: the hybrid weights, threshold and duplicate cosine.

    Returns:
        Core and extended nodes, best first; each carries `hybrid`, `vector`, `graph`
        and `causal` in its attributes, and its `score` is the hybrid score.
    """
    w = weights or RankingWeights()
    causal = causal or {}
    multipliers = multipliers or {}
    total = w.vector + w.graph + w.causal
    best_graph = max((n.score for n in nodes), default=0.0)
    q = query_vector
    if q is not None:
        norm = float(np.linalg.norm(q))
        q = q / norm if norm > 0 else None
    # Each candidate's scores beside it; only the nodes kept are copied with them (a
    # budget of a few dozen out of every candidate).
    scored: list[tuple[float, ContextNode, tuple[float, float, float]]] = []
    for n in nodes:
        vec = _cosine(q, embeddings.get(n.uuid))
        if vec is None:
            vec = n.score if n.views == ["semantic"] else 0.0
        graph = n.score / best_graph if best_graph > 0 else 0.0
        cause = causal.get(n.uuid, 0.0)
        hybrid = (w.vector * vec + w.graph * graph + w.causal * cause) / total
        hybrid *= multipliers.get(n.uuid, 1.0)
        scored.append((hybrid, n, (vec, graph, cause)))
    scored.sort(key=lambda item: (-item[0], item[1].text))
    out = Ranked(mode=mode, candidates=len(scored))
    kept: list[ContextNode] = []
    kept_vecs: list[Vector] = []
    budget = BUDGETS[mode]
    for hybrid, node, (vec, graph, cause) in scored:
        if hybrid < w.threshold:
            out.below_threshold += 1
            continue
        emb = embeddings.get(node.uuid)
        if emb is not None and any(
            float(np.dot(emb, other)) >= w.duplicate_cosine for other in kept_vecs
        ):
            out.duplicates += 1
            continue
        attrs = {
            **node.attributes,
            "hybrid": round(hybrid, 4),
            "vector": round(vec, 4),
            "graph": round(graph, 4),
            "causal": round(cause, 4),
        }
        kept.append(node.model_copy(update={"score": hybrid, "attributes": attrs}))
        if emb is not None:
            kept_vecs.append(emb)
        if len(kept) >= budget.core + budget.extended:
            break
    out.core = kept[: budget.core]
    out.extended = kept[budget.core :]
    return out
