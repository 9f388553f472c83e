"""Inputs and outputs of the explorer's JSON API (`/api/...`).

Inputs extend the MCP tools' `MemoryInput`: the same `graph` validation, unknown
arguments refused, and bounded limits, so a large namespace is paged, never sent whole.
"""

from __future__ import annotations

from typing import Any, Literal

from polyg_shared.tools import MemoryInput
from pydantic import BaseModel, Field

Layer = Literal["semantic", "temporal", "causal", "entity"]
EdgeLayer = Literal["semantic", "temporal", "causal", "entity", "cross"]
LAYERS: tuple[Layer, ...] = ("entity", "temporal", "causal", "semantic")

MAX_PAGE_NODES = 10_000
MAX_PAGE_EDGES = 50_000
MAX_NEIGHBOURS = 1_000
MAX_TIMELINE = 1_000
MAX_SEARCH = 50
MAX_QUERY_CHARS = 200
MAX_ID_CHARS = 200


class GraphPageInput(MemoryInput):
    """Query of GET /api/graph: one page of nodes (in storage order) and the edges among them."""

    limit: int = Field(default=2_000, ge=1, le=MAX_PAGE_NODES, description="Nodes per page.")
    offset: int = Field(default=0, ge=0, le=100_000_000, description="Nodes to skip.")
    layer: list[Layer] = Field(
        default_factory=lambda: list(LAYERS),
        description="Layers to include (repeat the parameter or separate with commas).",
    )
    max_edges: int = Field(
        default=20_000, ge=0, le=MAX_PAGE_EDGES, description="Most edges returned."
    )


class NodeInput(MemoryInput):
    """Query of GET /api/node/{id}."""

    limit: int = Field(default=100, ge=1, le=MAX_NEIGHBOURS, description="Most neighbours.")


class SearchInput(MemoryInput):
    """Query of GET /api/search."""

    q: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="A name to look for.")
    limit: int = Field(default=10, ge=1, le=MAX_SEARCH)


class TimelineInput(MemoryInput):
    """Query of GET /api/timeline: the latest events and facts."""

    limit: int = Field(default=200, ge=1, le=MAX_TIMELINE, description="Most events (and facts).")


class GraphsInput(MemoryInput):
    """Query of GET /api/graphs (takes no arguments besides the usual `graph`)."""


class UiNode(BaseModel):
    """A node as the explorer draws it."""

    id: str
    label: str = Field(description="E_Entity, T_Event, T_Fact, C_Node, S_Concept or S_Memory.")
    layer: Layer
    name: str = Field(description="Name, description, content or 'subject predicate object'.")
    kind: str | None = Field(default=None, description="entity_type, node_type or category.")
    time: int | None = Field(default=None, description="An event's occurred_at (epoch ms).")
    valid_from: int | None = None
    valid_to: int | None = None


class UiEdge(BaseModel):
    """An edge as the explorer draws it; cross-links have layer 'cross'."""

    source: str
    target: str
    type: str
    layer: EdgeLayer
    label: str | None = Field(default=None, description="The relation name of E_RELATES.")
    confidence: float | None = Field(default=None, description="C_CAUSES confidence.")


class GraphPage(BaseModel):
    """One page of a namespace's graph."""

    graph: str
    layers: list[Layer]
    offset: int
    limit: int
    total: int = Field(description="Nodes in the selected layers.")
    counts: dict[str, int] = Field(description="Nodes per layer.")
    next_offset: int | None = Field(description="Offset of the next page; null on the last.")
    nodes: list[UiNode]
    edges: list[UiEdge]
    edges_truncated: bool


class Neighbour(BaseModel):
    """A node next to the selected one, and the edge between them."""

    node: UiNode
    edge: UiEdge
    direction: Literal["out", "in"]


class NodeDetail(BaseModel):
    """A node's properties, neighbours and links."""

    graph: str
    node: UiNode
    properties: dict[str, Any]
    neighbours: list[Neighbour]
    truncated: bool


class SearchHit(BaseModel):
    """A node whose name matches a search."""

    id: str
    name: str
    label: str
    layer: Layer
    similarity: float
    how: str = Field(description="uuid, exact, normalized, embedding or partial.")


class SearchOutput(BaseModel):
    """Matches of GET /api/search, best first."""

    graph: str
    query: str
    hits: list[SearchHit]


class TimelineOutput(BaseModel):
    """Events (points) and facts (validity intervals) for the timeline strip."""

    graph: str
    events: list[UiNode]
    facts: list[UiNode]
    truncated: bool


class GraphsOutput(BaseModel):
    """The namespaces the switcher offers, their sizes, and the one the explorer opens on."""

    graphs: list[str]
    default: str
    nodes: dict[str, int | None] = Field(
        description="Memory nodes per namespace (None past the first MAX_SIZED_GRAPHS names)."
    )
    start: str | None = Field(
        description="The namespace to open: the default when it holds memory, else the only "
        "one that does; None when several do (the explorer asks which)."
    )
