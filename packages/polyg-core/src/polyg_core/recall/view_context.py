"""What the expansion views share: where they start (`Seeds`), what each needs
(`ViewContext`), and how one gathers its nodes (`ViewCollector`).

Kept apart from the views themselves so that the PPR view and the graph retriever can
use them without importing the views (and the views can import the PPR view).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime

from polyg_shared.intents import Intent
from polyg_shared.retrieval import ContextEdge, ViewResult
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
    """The nodes one view found (best score per uuid, at most `cap`) and its edges.

    The view's walks name nodes by uuid; a node's properties are read once, for the nodes
    the view keeps (`result`): a walk meets most nodes again, or after the view is full.
    """

    def __init__(self, view: str, cap: int) -> None:
        self.view = view
        self.cap = cap
        self.found: dict[str, tuple[str, float]] = {}
        """uuid -> (label, best score), in the order the nodes joined the view."""
        self.edges: list[ContextEdge] = []

    @property
    def full(self) -> bool:
        return len(self.found) >= self.cap

    def __contains__(self, uuid: object) -> bool:
        return uuid in self.found

    def score(self, uuid: str) -> float:
        """The best score of a node the view holds."""
        return self.found[uuid][1]

    def uuids(self, label: str) -> list[str]:
        """The view's nodes of `label`, in the order they joined."""
        return [u for u, (lab, _) in self.found.items() if lab == label]

    def labels(self) -> set[str]:
        """The labels of the view's nodes."""
        return {lab for lab, _ in self.found.values()}

    def add(self, label: str, uuid: str, score: float) -> bool:
        """Add a node (or raise its score); False when it was known or the view is full."""
        score = max(0.0, float(score))  # a node's score is never negative (`to_context`)
        known = self.found.get(uuid)
        if known is not None:
            if known[1] < score:
                self.found[uuid] = (known[0], score)
            return False
        if self.full:
            return False
        self.found[uuid] = (label, score)
        return True

    def can_take(self, labels: Collection[str]) -> bool:
        """Whether a read of nodes of `labels` could change the view: it has room for
        another node, or holds one of those labels whose score a row may raise (an edge
        to a node left out is dropped with it)."""
        return not self.full or not self.labels().isdisjoint(labels)

    async def result(self, walks: GraphWalks, namespace: str) -> ViewResult:
        """The nodes, their properties read once for all, and the edges between them,
        each edge once: a walk meets an edge from both of its ends (hop 1 from `a`, hop 2
        from `b`). A node deleted since the walk met it is left out with its edges."""
        by_label: dict[str, list[str]] = {}
        for uuid, (label, _) in self.found.items():
            by_label.setdefault(label, []).append(uuid)
        stored = await walks.properties(namespace, by_label) if by_label else {}
        nodes = [
            to_context(label, clean(stored[label, uuid]), score)
            for uuid, (label, score) in self.found.items()
            if (label, uuid) in stored
        ]
        keep = {n.uuid for n in nodes}
        edges: list[ContextEdge] = []
        seen: set[tuple[str, str, str, str | None]] = set()
        for e in self.edges:
            key = (e.source, e.target, e.type, e.label)
            if e.source in keep and e.target in keep and key not in seen:
                seen.add(key)
                edges.append(e)
        return ViewResult(view=self.view, nodes=nodes, edges=edges)  # type: ignore[arg-type]
