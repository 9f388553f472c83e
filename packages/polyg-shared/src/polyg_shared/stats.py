"""Statistics of a namespace."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class GraphCounts(BaseModel):
    """Node and edge counts of one of the four graphs."""

    model_config = ConfigDict(extra="forbid")

    nodes: int = 0
    edges: int = 0
    by_label: dict[str, int] = Field(default_factory=dict)
    by_relationship: dict[str, int] = Field(default_factory=dict)


class GraphStatistics(BaseModel):
    """Counts per graph and per cross-link type for one namespace."""

    model_config = ConfigDict(extra="forbid")

    namespace: str
    graphs: dict[str, GraphCounts] = Field(
        description="Keyed by graph: semantic, temporal, causal, entity."
    )
    cross_links: dict[str, int] = Field(description="Keyed by cross-link type, e.g. X_INVOLVES.")
    scratch_nodes: int = Field(default=0, description="Nodes of a scratch (thinking-tool) graph.")
    scratch_edges: int = 0
    total_nodes: int = 0
    total_edges: int = 0
    memory_bytes: int | None = Field(
        default=None,
        description="FalkorDB's GRAPH.MEMORY USAGE of the graph (whole-MB resolution).",
    )
