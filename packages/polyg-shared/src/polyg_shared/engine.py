"""Inputs and outputs of the graph thinking tool (seed 002): named scratch graphs and analysis.

Every input takes an optional `graph`; omitted, the scratch graph `default` is
used. Nodes are named by `label` (their display name); names given to tools are
matched exactly, then normalised (case, spaces, punctuation), then by meaning.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, Field, field_validator

from polyg_shared.pages import PageInput, PageOutput
from polyg_shared.types import (
    Name,
    Properties,
    StrictInput,
    check_graph_name,
    graph_argument,
)

DEFAULT_SCRATCH_GRAPH = "default"
"""The graph engine tools use when a call names none."""

MAX_BATCH = 10_000
MAX_ADD_BATCH = 500
"""Most nodes one add_nodes call (or edges one add_edges call) takes: each new label is
looked up by meaning, one query per label. import_graph takes larger graphs."""
MAX_IMPORT_CHARS = 20_000_000

Direction = Literal["in", "out", "both"]
MatchHow = Literal["uuid", "exact", "normalized", "embedding", "created"]
GraphFormat = Literal["dot", "csv", "tsv", "graphml", "json", "mermaid", "cypher"]


class EngineInput(StrictInput):
    """Base of every engine tool input: unknown arguments are errors, `graph` picks the graph."""

    graph: str | None = graph_argument(
        "Scratch graph to use; omit for 'default'. A new name creates one."
    )

    @field_validator("graph")
    @classmethod
    def _valid_graph(cls, value: str | None) -> str | None:
        return check_graph_name(value, "for example 'codebase' or 'research'")


# -- shared pieces -----------------------------------------------------------------------------


class NodeSpec(StrictInput):
    """A node to add."""

    label: Name = Field(description="The node's name, e.g. 'AuthService'.")
    type: str | None = Field(default=None, max_length=128, description="e.g. 'class', 'paper'.")
    properties: Properties = Field(default_factory=dict)


class EdgeSpec(StrictInput):
    """An edge to add; `source` and `target` are node names (matched fuzzily)."""

    source: Name
    target: Name
    relation: Name = Field(description="e.g. 'depends_on', 'calls', 'cites'.")
    properties: Properties = Field(default_factory=dict)


class NodeOut(BaseModel):
    """A node as the engine returns it."""

    label: str
    type: str | None = None
    properties: dict[str, Any] = Field(default_factory=dict)


class EdgeOut(BaseModel):
    """An edge as the engine returns it (endpoints by name)."""

    source: str
    target: str
    relation: str
    properties: dict[str, Any] = Field(default_factory=dict)


class CandidateOut(BaseModel):
    """A node a name might refer to."""

    label: str
    similarity: float


# -- graph management --------------------------------------------------------------------------


class ScratchGraphSummary(BaseModel):
    """One graph: kind, counts and times (ISO 8601 UTC)."""

    name: str
    kind: Literal["memory", "scratch"]
    node_count: int
    edge_count: int
    created_at: str | None = None
    last_used_at: str | None = None


class ListScratchGraphsOutput(BaseModel):
    """Every graph on the server."""

    graphs: list[ScratchGraphSummary]


class GraphInfoInput(EngineInput):
    """Arguments of the graph summary tool."""


class GraphInfoOutput(BaseModel):
    """Structure of a graph: counts, density, connectivity, node and relation types."""

    name: str
    kind: Literal["memory", "scratch"]
    node_count: int
    edge_count: int
    is_directed: bool
    density: float
    is_connected: bool
    is_dag: bool
    component_count: int
    node_types: dict[str, int]
    relation_types: dict[str, int]


# -- nodes -------------------------------------------------------------------------------------


class AddNodeInput(EngineInput, NodeSpec):
    """Arguments of add_node."""


class AddNodeOutput(BaseModel):
    """The node added, or the existing node the label matched (`created: false`)."""

    node: NodeOut
    created: bool
    matched: MatchHow = Field(
        description="How the label matched an existing node, or 'created' for a new one."
    )
    similarity: float = 1.0


class AddNodesInput(EngineInput):
    """Arguments of add_nodes."""

    nodes: list[NodeSpec] = Field(
        min_length=1,
        max_length=MAX_ADD_BATCH,
        description=f"At most {MAX_ADD_BATCH} nodes; split larger sets into several calls.",
    )


class AddNodesOutput(BaseModel):
    """How many nodes were new and how many existed, with each one's outcome in input order."""

    added: int
    existing: int
    results: list[AddNodeOutput]


class FindNodeInput(EngineInput, PageInput):
    """Arguments of find_node."""

    query: Name
    limit: int = Field(default=5, ge=1, le=50)


class NodeMatch(BaseModel):
    """A node found for a query, with how similar its name is (1.0 = same name)."""

    label: str
    similarity: float
    type: str | None = None
    properties: dict[str, Any] = Field(default_factory=dict)


class FindNodeOutput(PageOutput):
    """Nodes matching a query, best first (empty when nothing is close)."""

    matches: list[NodeMatch]


class RemoveNodeInput(EngineInput):
    """Arguments of remove_node: the exact name (case and spacing may differ)."""

    label: Name


class RemoveNodeOutput(BaseModel):
    """The node removed and how many edges went with it."""

    success: bool
    label: str
    edges_removed: int


class ListNodesInput(EngineInput, PageInput):
    """Arguments of list_nodes."""

    type: str | None = Field(default=None, max_length=128)
    limit: int = Field(default=100, ge=1, le=MAX_BATCH)


class ListNodesOutput(PageOutput):
    """Nodes in name order; `total` counts all that match the type filter."""

    nodes: list[NodeOut]
    total: int


# -- edges -------------------------------------------------------------------------------------


class AddEdgeInput(EngineInput, EdgeSpec):
    """Arguments of add_edge."""


class AddEdgeOutput(BaseModel):
    """The edge and what each endpoint name matched."""

    edge: EdgeOut
    created: bool
    source_matched: str
    target_matched: str
    source_match: MatchHow
    target_match: MatchHow


class EdgeFailure(BaseModel):
    """An edge of a batch that could not be added, why, and names it might have meant."""

    edge: EdgeSpec
    reason: str
    candidates: list[CandidateOut] = Field(default_factory=list[CandidateOut])


class AddEdgesInput(EngineInput):
    """Arguments of add_edges."""

    edges: list[EdgeSpec] = Field(
        min_length=1,
        max_length=MAX_ADD_BATCH,
        description=f"At most {MAX_ADD_BATCH} edges; split larger sets into several calls.",
    )


class AddEdgesOutput(BaseModel):
    """New edges, edges that already existed, and the failures (the good edges are added)."""

    added: int
    existing: int
    failed: list[EdgeFailure]
    results: list[AddEdgeOutput]


class FindEdgesInput(EngineInput, PageInput):
    """Arguments of find_edges; every filter is optional."""

    source: Name | None = None
    target: Name | None = None
    relation: Name | None = None
    limit: int = Field(default=100, ge=1, le=MAX_BATCH)


class FindEdgesOutput(PageOutput):
    """Edges matching the filters."""

    edges: list[EdgeOut]


class RemoveEdgeInput(EngineInput):
    """Arguments of remove_edge; without `relation` every edge source→target goes."""

    source: Name
    target: Name
    relation: Name | None = None


class RemoveEdgeOutput(BaseModel):
    """Whether anything was removed."""

    success: bool
    removed: int


class GetNeighborsInput(EngineInput, PageInput):
    """Arguments of get_neighbors."""

    node: Name
    direction: Direction = "both"
    relation: Name | None = None
    limit: int = Field(default=100, ge=1, le=10_000)


class NeighborOut(BaseModel):
    """A neighbour, the relation joining it and the direction seen from the node."""

    label: str
    relation: str
    direction: Literal["in", "out"]


class GetNeighborsOutput(PageOutput):
    """Neighbours of the node `node_matched`."""

    node_matched: str
    neighbors: list[NeighborOut]


# -- analysis ----------------------------------------------------------------------------------


class ShortestPathInput(EngineInput):
    """Arguments of shortest_path."""

    source: Name
    target: Name


class ShortestPathOutput(BaseModel):
    """The path (node names) and its length in edges, or no path and the reason."""

    path: list[str] | None
    length: int | None = None
    relations: list[str] = Field(default_factory=list)
    reason: str | None = None
    source_matched: str
    target_matched: str


class AllPathsInput(EngineInput, PageInput):
    """Arguments of all_paths."""

    source: Name
    target: Name
    max_length: int = Field(default=6, ge=1, le=20)
    limit: int = Field(default=100, ge=1, le=10_000)


class AllPathsOutput(PageOutput):
    """Simple paths, shortest first."""

    paths: list[list[str]]
    count: int
    source_matched: str
    target_matched: str


class TopNInput(EngineInput, PageInput):
    """Arguments of a ranking tool."""

    top_n: int = Field(default=10, ge=1, le=10_000, validation_alias=AliasChoices("top_n", "limit"))


class RankedOut(BaseModel):
    """A node and its score."""

    label: str
    score: float


class RankingOutput(PageOutput):
    """Nodes by score, best first."""

    rankings: list[RankedOut]
    total_nodes: int
    method: str = Field(description="Which implementation computed the scores.")


class DegreeOut(BaseModel):
    """A node's degrees."""

    label: str
    in_degree: int
    out_degree: int
    total: int


class DegreeCentralityOutput(PageOutput):
    """Nodes by total degree, highest first."""

    rankings: list[DegreeOut]


class ComponentsInput(EngineInput, PageInput):
    """Arguments of connected_components."""

    strong: bool = Field(default=False, description="Strongly connected components if true.")
    limit: int = Field(default=100, ge=1, le=10_000)


class ComponentsOutput(PageOutput):
    """Components (node names), largest first; `count` is the number of all of them."""

    components: list[list[str]]
    count: int
    method: str


class FindCyclesInput(EngineInput, PageInput):
    """Arguments of find_cycles."""

    limit: int = Field(default=100, ge=1, le=10_000)
    max_length: int | None = Field(default=None, ge=1, le=100)


class CyclesOutput(PageOutput):
    """Directed cycles (node names, first node not repeated)."""

    cycles: list[list[str]]
    has_cycles: bool


class TransitiveReductionInput(EngineInput):
    """Arguments of transitive_reduction."""

    in_place: bool = Field(default=False, description="Remove the redundant edges if true.")


class TransitiveReductionOutput(BaseModel):
    """Edges implied by longer paths; removed only when `in_place`."""

    edges_removed: int
    redundant: list[EdgeOut]
    in_place: bool
    note: str


class SubgraphInput(EngineInput):
    """Arguments of subgraph."""

    nodes: list[Name] = Field(min_length=1, max_length=1_000)
    hops: int = Field(default=0, ge=0, le=5, description="Also take neighbours this far away.")
    include_edges: bool = True


class SubgraphOutput(BaseModel):
    """The chosen nodes (and neighbours) with the edges among them."""

    nodes: list[NodeOut]
    edges: list[EdgeOut]
    truncated: bool = False


# -- import / export ---------------------------------------------------------------------------


class ImportGraphInput(EngineInput):
    """Arguments of import_graph: the text of a graph in one of the formats."""

    format: GraphFormat
    content: str = Field(min_length=1, max_length=MAX_IMPORT_CHARS)


class LineProblem(BaseModel):
    """A part of the input that could not be read."""

    line: int | None = None
    message: str


class ImportGraphOutput(BaseModel):
    """What the import added (merged into the graph); `unparseable` lists what was skipped."""

    nodes_added: int
    edges_added: int
    nodes_existing: int
    edges_existing: int
    unparseable: list[LineProblem] = Field(default_factory=list[LineProblem])
    embedded: bool = Field(
        description="Whether new nodes got embeddings (for matching names by meaning)."
    )


class ExportGraphInput(EngineInput):
    """Arguments of export_graph."""

    format: GraphFormat


class ExportGraphOutput(BaseModel):
    """The graph as text in the asked format."""

    format: str
    content: str
    node_count: int
    edge_count: int
