"""Node and edge counts per graph and per cross-link type."""

from __future__ import annotations

from typing import TYPE_CHECKING

from polyg_shared.stats import GraphCounts, GraphStatistics

from polyg_core.storage.schema import (
    CROSS_LINKS,
    EDGES_OF_GRAPH,
    LABELS_OF_GRAPH,
    R_SCRATCH,
    SCRATCH,
)

if TYPE_CHECKING:
    from polyg_core.storage.store import FalkorStore


async def graph_statistics(store: FalkorStore, namespace: str) -> GraphStatistics:
    """Count nodes per label and edges per relationship type in one pass each.

    Raises:
        InvalidNamespace: the name is not a valid graph name.
        StorageUnavailable: FalkorDB cannot be reached.
    """
    labels = await store.query(
        namespace,
        "MATCH (n) UNWIND labels(n) AS l RETURN l, count(*)",
        read_only=True,
    )
    rels = await store.query(namespace, "MATCH ()-[r]->() RETURN type(r), count(r)", read_only=True)
    by_label = {str(label): int(n) for label, n in labels.rows}
    by_rel = {str(rel): int(n) for rel, n in rels.rows}
    graphs: dict[str, GraphCounts] = {}
    for graph, graph_labels in LABELS_OF_GRAPH.items():
        node_counts = {label: by_label.get(label, 0) for label in graph_labels}
        edge_counts = {rel: by_rel.get(rel, 0) for rel in EDGES_OF_GRAPH[graph]}
        graphs[graph] = GraphCounts(
            nodes=sum(node_counts.values()),
            edges=sum(edge_counts.values()),
            by_label=node_counts,
            by_relationship=edge_counts,
        )
    cross = {rel: by_rel.get(rel, 0) for rel in CROSS_LINKS}
    scratch_nodes = by_label.get(SCRATCH, 0)
    scratch_edges = by_rel.get(R_SCRATCH, 0)
    return GraphStatistics(
        namespace=namespace,
        graphs=graphs,
        cross_links=cross,
        scratch_nodes=scratch_nodes,
        scratch_edges=scratch_edges,
        total_nodes=sum(g.nodes for g in graphs.values()) + scratch_nodes,
        total_edges=sum(g.edges for g in graphs.values()) + sum(cross.values()) + scratch_edges,
        memory_bytes=await store.memory_usage(namespace),
    )
