"""Step 5 of MAGMA: merge the views into one subgraph with the multi-view boost."""

from __future__ import annotations

from collections.abc import Sequence

from polyg_shared.retrieval import ContextEdge, ContextNode, MergedSubgraph, ViewResult

DEFAULT_BOOST = 1.5


def merge_views(views: Sequence[ViewResult], *, boost: float = DEFAULT_BOOST) -> MergedSubgraph:
    """One node per uuid; `score = mean(view scores) × boost^(views − 1)`.

    A node found several times by the same view counts once for that view (its best
    score there). Edges are deduplicated on (source, target, type, label).
    """
    per_node: dict[str, dict[str, float]] = {}
    first: dict[str, ContextNode] = {}
    for view in views:
        if view.status != "ok":
            continue
        for node in view.nodes:
            scores = per_node.setdefault(node.uuid, {})
            scores[view.view] = max(scores.get(view.view, 0.0), node.score)
            if node.uuid not in first:
                first[node.uuid] = node
            else:
                merged_attrs = {**node.attributes, **first[node.uuid].attributes}
                first[node.uuid] = first[node.uuid].model_copy(update={"attributes": merged_attrs})
    nodes: list[ContextNode] = []
    for uuid, scores in per_node.items():
        mean = sum(scores.values()) / len(scores)
        score = mean * boost ** (len(scores) - 1)
        nodes.append(first[uuid].model_copy(update={"score": score, "views": sorted(scores)}))
    nodes.sort(key=lambda n: (-n.score, n.text))
    edges: dict[tuple[str, str, str, str | None], ContextEdge] = {}
    for view in views:
        if view.status != "ok":
            continue
        for edge in view.edges:
            if edge.source in per_node and edge.target in per_node:
                edges.setdefault((edge.source, edge.target, edge.type, edge.label), edge)
    return MergedSubgraph(
        nodes=nodes, edges=list(edges.values()), views={v.view: v.status for v in views}
    )
