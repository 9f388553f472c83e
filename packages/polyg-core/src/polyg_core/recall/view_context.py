"""What the expansion views share: where they start (`Seeds`), what each needs
(`ViewContext`), and how one gathers its nodes (`ViewCollector`).

Kept apart from the views themselves so that the PPR view and the graph retriever can
use them without importing the views (and the views can import the PPR view).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from polyg_shared.intents import Intent
from polyg_shared.retrieval import ContextEdge, ContextNode, ViewResult
from polyg_shared.timeutil import to_epoch_ms, utc_now

from polyg_core.graphs.walks import GraphWalks
from polyg_core.recall.context_nodes import to_context
from polyg_core.storage.cypher import clean
from polyg_core.storage.store import FalkorStore
from polyg_core.storage.write_stamp import StampedReads

MAX_VIEW_NODES = 50


@dataclass
class Seeds:
    """Where expansion starts: node uuids with their seed scores, per graph."""

    entities: dict[str, float] = field(default_factory=dict[str, float])
    events: dict[str, float] = field(default_factory=dict[str, float])
    facts: dict[str, float] = field(default_factory=dict[str, float])
    causal: dict[str, float] = field(default_factory=dict[str, float])
    semantic: ViewResult = field(default_factory=lambda: ViewResult(view="semantic"))

    def empty(self) -> bool:
        return not (self.entities or self.events or self.facts or self.causal)


def bump(target: dict[str, float], uuid: str, score: float) -> None:
    """Keep the better of `target[uuid]` and `score`."""
    if score > target.get(uuid, -1.0):
        target[uuid] = score


@dataclass
class ViewContext:
    """What every expansion view needs."""

    store: FalkorStore
    namespace: str
    intent: Intent
    seeds: Seeds
    max_nodes: int = MAX_VIEW_NODES
    now: datetime = field(default_factory=utc_now)
    reads: StampedReads | None = None
    """Replies kept under the write stamp this recall read (`FalkorStore.stamped_reads`)."""

    @property
    def walks(self) -> GraphWalks:
        """The graphs' read steps over this context's store."""
        return GraphWalks(self.store, self.reads)

    def window(self) -> tuple[int | None, int | None]:
        tf = self.intent.timeframe
        if tf is None:
            return None, None
        start = to_epoch_ms(tf.start) if tf.start else None
        end = to_epoch_ms(tf.end) if tf.end else None
        return start, end


class ViewCollector:
    """The nodes one view found (best score per uuid, at most `cap`) and its edges."""

    def __init__(self, view: str, cap: int) -> None:
        self.view = view
        self.cap = cap
        self.nodes: dict[str, ContextNode] = {}
        self.edges: list[ContextEdge] = []

    @property
    def full(self) -> bool:
        return len(self.nodes) >= self.cap

    def add(self, label: str, raw: dict[str, Any], score: float) -> bool:
        """Add a node (or raise its score); False when it was known or the view is full.

        A node is built only when it joins the view: most rows a walk reads name a node
        the view holds already, or come once it is full."""
        uuid = str(raw.get("uuid", ""))
        score = max(0.0, float(score))  # as `to_context` keeps it
        known = self.nodes.get(uuid)
        if known is not None:
            if known.score < score:
                self.nodes[uuid] = known.model_copy(update={"score": score})
            return False
        if self.full:
            return False
        self.nodes[uuid] = to_context(label, clean(raw), score)
        return True

    def can_take(self, labels: Collection[str]) -> bool:
        """Whether a read of nodes of `labels` could change the view: it has room for
        another node, or holds one of those labels whose score a row may raise (an edge
        to a node left out is dropped with it)."""
        return not self.full or any(n.label in labels for n in self.nodes.values())

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
