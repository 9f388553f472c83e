"""The graph thinking tool (seed 002) on FalkorDB: named scratch graphs, fuzzy names, analysis, import/export."""

from polyg_core.scratch.analysis import GraphAnalyzer
from polyg_core.scratch.exchange import GraphIO
from polyg_core.scratch.nodes import NameNotExact, ScratchGraphs, embedding_text
from polyg_core.scratch.registry import DEFAULT_TTL_S, GraphManager
from polyg_core.scratch.service import GraphEngine

__all__ = [
    "DEFAULT_TTL_S",
    "GraphAnalyzer",
    "GraphEngine",
    "GraphIO",
    "GraphManager",
    "NameNotExact",
    "ScratchGraphs",
    "embedding_text",
]
