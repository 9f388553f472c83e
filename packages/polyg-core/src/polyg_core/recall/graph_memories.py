"""What the graph side reached, as memories: the graph retriever's candidates for fusion.

The expansion views and personalized PageRank return nodes of every graph: memories,
the concepts memories are about, entities, events. Fusion ranks memories, so what the
graph side found has to be said in memories to survive it:

* a memory node counts with its own score;
* a concept counts for every memory about it, weighted by the concept's specificity
  (a concept nearly every memory is about says little), its score shared among them;

Scores are scaled by the best, so this is one more signal in [0, 1] beside the others.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from polyg_shared.retrieval import ContextNode, ViewResult

from polyg_core.recall.catalogue import NamespaceCatalogue
from polyg_core.recall.view_context import Seeds
from polyg_core.storage.schema import CONCEPT, MEMORY

MAX_MEMORIES_PER_CONCEPT = 40
"""A concept more memories than this are about spreads to none of them (a hub)."""


def memories_reached(
    catalogue: NamespaceCatalogue, nodes: Iterable[ContextNode]
) -> dict[str, float]:
    """Memory uuid -> activation in [0, 1] from the graph side's nodes (see module doc)."""
    activation: dict[str, float] = defaultdict(float)
    for node in nodes:
        if node.score <= 0:
            continue
        if node.label == MEMORY and catalogue.get(node.uuid) is not None:
            activation[node.uuid] = max(activation[node.uuid], node.score)
        elif node.label == CONCEPT:
            about = catalogue.about(node.uuid)
            if not about or len(about) > MAX_MEMORIES_PER_CONCEPT:
                continue
            weight = catalogue.concept_specificity(node.uuid) * node.score
            for entry in about:
                activation[entry.uuid] += weight
    return scaled_by_max(activation)


def scaled_by_max(scores: Mapping[str, float]) -> dict[str, float]:
    """Scores divided by the best one (empty when none is positive)."""
    hi = max(scores.values(), default=0.0)
    return {u: s / hi for u, s in scores.items()} if hi > 0 else {}


def graph_reach(seeds: Seeds, views: Sequence[ViewResult]) -> list[ContextNode]:
    """The nodes the graph side found: the concept seeds and what the views reached."""
    out = [n for n in seeds.semantic.nodes if n.label == CONCEPT]
    for view in views:
        if view.status == "ok":
            out.extend(view.nodes)
    return out
