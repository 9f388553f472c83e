"""What the analysis algorithms return: dataclasses naming nodes by id and name."""

from __future__ import annotations

from dataclasses import dataclass, field

from polyg_core.algorithms.model import GraphData, NodeRef


@dataclass(frozen=True)
class EdgeRef:
    """An edge as results name it: both endpoints and the relation."""

    source: NodeRef
    target: NodeRef
    relation: str


@dataclass
class PathResult:
    """One path from `path[0]` to `path[-1]`.

    Attributes:
        path: the nodes in order, source and target included.
        length: number of edges (hops).
        relations: for each hop, the relation of the edge taken (the lightest
            edge for a weighted path, else the first edge between the pair).
        total_weight: sum of the edge weights for a weighted search, else None.
    """

    path: list[NodeRef]
    length: int
    relations: list[str]
    total_weight: float | None = None


@dataclass
class AllPathsResult:
    """Simple paths, shortest first; `truncated` says a cap or the time budget stopped the search."""

    paths: list[list[NodeRef]]
    count: int
    truncated: bool = False
    reason: str | None = None


@dataclass(frozen=True)
class RankedNode:
    """A node and its score."""

    node: NodeRef
    score: float


@dataclass
class RankingResult:
    """Nodes ranked by a score, best first.

    Attributes:
        rankings: at most `top_n` nodes, highest score first (ties by node id).
        total_nodes: how many nodes were scored.
        iterations: power-iteration rounds (PageRank only; 0 otherwise).
        converged: False if the iteration stopped at `max_iter` or the time budget.
    """

    rankings: list[RankedNode]
    total_nodes: int
    iterations: int = 0
    converged: bool = True


@dataclass(frozen=True)
class DegreeRank:
    """A node's degrees; `score` is the chosen degree divided by `n - 1`."""

    node: NodeRef
    in_degree: int
    out_degree: int
    total: int
    score: float


@dataclass
class DegreeResult:
    """Nodes by degree, highest first (parallel edges counted one by one)."""

    rankings: list[DegreeRank]
    mode: str
    total_nodes: int


@dataclass
class ComponentsResult:
    """Connected components, largest first; `count` is the number of all of them."""

    components: list[list[NodeRef]]
    count: int
    strong: bool
    truncated: bool = False


@dataclass
class CyclesResult:
    """Directed simple cycles, each listed once without repeating its first node.

    `has_cycles` is exact (the graph is not a DAG) even when the caps found
    no cycle to list, e.g. because every cycle is longer than `max_length`.
    """

    cycles: list[list[NodeRef]]
    has_cycles: bool
    truncated: bool = False
    reason: str | None = None


@dataclass
class TransitiveReductionResult:
    """Edges that can go without changing which node reaches which.

    Attributes:
        removable: every edge (all relations) between pairs of nodes that a
            longer path also joins.
        is_dag: whether the graph had no cycle; if it had, the reduction was
            done on its condensation and `note` says so.
        note: how the result was obtained, for the reader.
    """

    removable: list[EdgeRef]
    is_dag: bool
    note: str = ""


@dataclass
class SubgraphResult:
    """A part of a graph: the chosen nodes, their neighbours to `hops`, and the edges among them."""

    graph: GraphData
    truncated: bool = False


@dataclass
class GraphInfo:
    """Summary of a graph (seed 002 `get_graph_info`)."""

    name: str | None
    node_count: int
    edge_count: int
    is_directed: bool
    density: float
    is_connected: bool
    is_dag: bool
    component_count: int
    self_loops: int
    node_types: dict[str, int] = field(default_factory=lambda: {})
    relation_types: dict[str, int] = field(default_factory=lambda: {})
