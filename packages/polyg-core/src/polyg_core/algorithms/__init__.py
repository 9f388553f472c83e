"""Graph analysis and import/export on in-memory graphs (no database).

`GraphData` is the exchange format: storage fetches a graph's adjacency into
one, the algorithms in `polyg_core.algorithms.operations` analyse it, and
`polyg_core.algorithms.formats` parses and writes it as DOT, CSV/TSV, GraphML,
JSON, Mermaid and Cypher.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from polyg_core.algorithms.model import DEFAULT_RELATION, EdgeData, GraphData, NodeData, NodeRef
from polyg_core.algorithms.results import (
    AllPathsResult,
    ComponentsResult,
    CyclesResult,
    DegreeRank,
    DegreeResult,
    EdgeRef,
    GraphInfo,
    PathResult,
    RankedNode,
    RankingResult,
    SubgraphResult,
    TransitiveReductionResult,
)

if TYPE_CHECKING:
    from polyg_core.algorithms.operations import (
        DegreeMode,
        all_paths,
        betweenness,
        connected_components,
        degree_centrality,
        find_cycles,
        graph_info,
        pagerank,
        personalized_pagerank,
        shortest_path,
        subgraph,
        transitive_reduction,
    )


# The algorithms need rustworkx and scipy (about a second to import): loaded on first use.
def __getattr__(name: str) -> Any:
    if not name.startswith("_"):
        algorithms = importlib.import_module("polyg_core.algorithms.operations")
        if name in algorithms.__all__:
            return getattr(algorithms, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_RELATION",
    "AllPathsResult",
    "ComponentsResult",
    "CyclesResult",
    "DegreeMode",
    "DegreeRank",
    "DegreeResult",
    "EdgeData",
    "EdgeRef",
    "GraphData",
    "GraphInfo",
    "NodeData",
    "NodeRef",
    "PathResult",
    "RankedNode",
    "RankingResult",
    "SubgraphResult",
    "TransitiveReductionResult",
    "all_paths",
    "betweenness",
    "connected_components",
    "degree_centrality",
    "find_cycles",
    "graph_info",
    "pagerank",
    "personalized_pagerank",
    "shortest_path",
    "subgraph",
    "transitive_reduction",
]
