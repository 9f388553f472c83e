"""The graph engine: one object bundling named graphs, nodes/edges, analysis and import/export."""

from __future__ import annotations

from dataclasses import dataclass, field

from polyg_core.providers.embeddings.base import Embedder
from polyg_core.scratch.analysis import GraphAnalyzer
from polyg_core.scratch.exchange import GraphIO
from polyg_core.scratch.nodes import ScratchGraphs
from polyg_core.scratch.registry import DEFAULT_TTL_S, GraphManager
from polyg_core.storage.store import FalkorStore


@dataclass
class GraphEngine:
    """Everything the thinking-tool tools call, built once per server.

    Args:
        store: the FalkorDB store.
        embedder: for matching names by meaning (None: exact and normalised names only).
        ttl_s: scratch graphs idle longer than this are removed (0 = never).
    """

    store: FalkorStore
    embedder: Embedder | None = None
    ttl_s: float = DEFAULT_TTL_S
    graphs: GraphManager = field(init=False)
    nodes: ScratchGraphs = field(init=False)
    analysis: GraphAnalyzer = field(init=False)
    io: GraphIO = field(init=False)

    def __post_init__(self) -> None:
        self.graphs = GraphManager(self.store, self.embedder, ttl_s=self.ttl_s)
        self.nodes = ScratchGraphs(self.store, self.embedder, graphs=self.graphs)
        self.analysis = GraphAnalyzer(self.nodes)
        self.io = GraphIO(self.nodes)
