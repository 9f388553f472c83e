"""`GraphData` turned into integer-indexed arrays that scipy.sparse and rustworkx work on."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from functools import cached_property
from typing import cast

import numpy as np
import numpy.typing as npt
import rustworkx as rx
from scipy import sparse

from polyg_core.algorithms.model import EdgeData, GraphData, NodeRef
from polyg_core.errors import InvalidInput, NodeNotFound

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@dataclass
class Budget:
    """A wall-clock allowance for a search; `None` seconds means no limit."""

    seconds: float | None = None
    _deadline: float = field(init=False, default=math.inf)

    def __post_init__(self) -> None:
        if self.seconds is not None:
            if self.seconds <= 0:
                raise InvalidInput("time_budget must be a positive number of seconds.")
            self._deadline = time.monotonic() + self.seconds

    def expired(self) -> bool:
        """True once the allowance is used up."""
        return time.monotonic() > self._deadline


def edge_weight(edge: EdgeData, key: str, default: float) -> float:
    """The numeric weight of an edge under property `key`.

    `key == "weight"` reads `EdgeData.weight` first. A missing value gives
    `default`; numeric strings (as DOT and CSV import them) are accepted.

    Raises:
        InvalidInput: a value that is not a finite, non-negative number.
    """
    value: object = edge.weight if key == "weight" and edge.weight is not None else None
    if value is None:
        value = edge.properties.get(key)
    if value is None:
        return default
    number: float | None = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            number = None
    if number is None or not math.isfinite(number) or number < 0:
        raise InvalidInput(
            f"Edge {edge.source!r} -[{edge.relation}]-> {edge.target!r} has {key}={value!r}; "
            f"weights must be finite numbers >= 0. Fix that edge or search without weight."
        )
    return number


@dataclass
class IndexedGraph:
    """Nodes numbered 0..n-1 in `GraphData.nodes` order; one entry per edge in `src`/`dst`."""

    graph: GraphData
    ids: list[str]
    names: list[str]
    index: dict[str, int]
    src: IntArray
    dst: IntArray

    @classmethod
    def build(cls, graph: GraphData) -> IndexedGraph:
        """Index a graph.

        Raises:
            InvalidInput: duplicate node ids or edges naming unknown nodes.
        """
        ids = [node.id for node in graph.nodes]
        index = {node_id: i for i, node_id in enumerate(ids)}
        if len(index) != len(ids):
            graph.validate()  # raises with the duplicate id named
        try:
            src = np.fromiter((index[e.source] for e in graph.edges), np.int64, len(graph.edges))
            dst = np.fromiter((index[e.target] for e in graph.edges), np.int64, len(graph.edges))
        except KeyError:
            graph.validate()  # raises with the edge and the unknown node named
            raise
        return cls(graph, ids, [node.name for node in graph.nodes], index, src, dst)

    @property
    def n(self) -> int:
        """Number of nodes."""
        return len(self.ids)

    def position(self, node_id: str) -> int:
        """The index of a node id.

        Raises:
            NodeNotFound: no node has that id.
        """
        try:
            return self.index[node_id]
        except KeyError:
            raise NodeNotFound("graph", node_id) from None

    def ref(self, i: int) -> NodeRef:
        """The `NodeRef` of node number `i`."""
        return NodeRef(self.ids[i], self.names[i])

    def refs(self, indices: list[int]) -> list[NodeRef]:
        """`NodeRef`s of several node numbers, in order."""
        return [NodeRef(self.ids[i], self.names[i]) for i in indices]

    @cached_property
    def pairs(self) -> tuple[IntArray, IntArray]:
        """Distinct `(src, dst)` pairs as two arrays (parallel edges collapsed)."""
        if not len(self.src):
            return self.src, self.dst
        codes = np.unique(self.src * max(self.n, 1) + self.dst)
        return codes // max(self.n, 1), codes % max(self.n, 1)

    @cached_property
    def adjacency(self) -> sparse.csr_matrix:
        """`n x n` CSR matrix with 1.0 for every connected pair (parallel edges collapsed)."""
        rows, cols = self.pairs
        return sparse.csr_matrix(
            (np.ones(len(rows)), (rows, cols)), shape=(self.n, self.n), dtype=np.float64
        )

    @cached_property
    def successors(self) -> list[list[int]]:
        """Distinct successors of every node, in ascending order."""
        adj = self.adjacency
        indptr = cast("list[int]", adj.indptr.tolist())
        indices = cast("list[int]", adj.indices.tolist())
        return [sorted(indices[indptr[i] : indptr[i + 1]]) for i in range(self.n)]

    @cached_property
    def rx_graph(self) -> rx.PyDiGraph[int, None]:
        """A rustworkx digraph, node payload = index, one edge per connected pair."""
        rows, cols = self.pairs
        digraph: rx.PyDiGraph[int, None] = rx.PyDiGraph(multigraph=False)
        digraph.add_nodes_from(range(self.n))
        digraph.add_edges_from_no_data(list(zip(rows.tolist(), cols.tolist(), strict=True)))
        return digraph

    def first_relation(self) -> dict[tuple[int, int], str]:
        """The relation of the first edge between every connected pair."""
        out: dict[tuple[int, int], str] = {}
        for edge, u, v in zip(self.graph.edges, self.src.tolist(), self.dst.tolist(), strict=True):
            out.setdefault((u, v), edge.relation)
        return out

    def weighted_matrix(self, weight: str | None, default: float = 1.0) -> sparse.csr_matrix:
        """`n x n` CSR matrix of summed edge weights per pair (1.0 per edge if `weight` is None)."""
        if weight is None:
            values = np.ones(len(self.src))
        else:
            values = np.fromiter(
                (edge_weight(e, weight, default) for e in self.graph.edges),
                np.float64,
                len(self.graph.edges),
            )
        matrix = sparse.csr_matrix((values, (self.src, self.dst)), shape=(self.n, self.n))
        matrix.sum_duplicates()
        return matrix
