"""The graph thinking tool (seed 002) on FalkorDB: named scratch graphs, fuzzy names, analysis, import/export."""

from polyg_core.engine.analysis import GraphAnalyzer
from polyg_core.engine.graphs import DEFAULT_TTL_S, GraphManager
from polyg_core.engine.io import GraphIO
from polyg_core.engine.scratch import NameNotExact, ScratchGraphs, embedding_text
from polyg_core.engine.service import GraphEngine

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
