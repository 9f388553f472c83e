"""Results of graph operations: traversals, searches, writes and clean-ups."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from polyg_shared.edges import EntityRelation
from polyg_shared.nodes import Entity, GraphKind


class BfsNode(BaseModel):
    """An entity reached by a breadth-first walk and its distance (hops) from the start."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    entity: Entity
    distance: int = Field(ge=0, description="0 for a start node, 1 for its neighbours, ...")


class BfsResult(BaseModel):
    """Entities within `depth` hops of the start entities and the relations walked."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    starts: list[str] = Field(description="Uuids of the start entities that exist.")
    depth: int = Field(ge=0)
    nodes: list[BfsNode] = Field(description="Ordered by distance, start nodes first.")
    edges: list[EntityRelation] = Field(description="E_RELATES edges between returned nodes.")
    truncated: bool = Field(
        default=False, description="True when the node limit stopped the walk early."
    )


class SearchHit(BaseModel):
    """A node found by vector search, with its similarity to the query (1 = identical)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    uuid: str
    label: str = Field(description="The node's label, e.g. S_Concept or T_Event.")
    graph: GraphKind
    text: str = Field(description="Name, description, content or 'subject predicate object'.")
    similarity: float = Field(ge=0.0, le=1.0)
    properties: dict[str, Any] = Field(
        default_factory=dict, description="The node's stored properties (never the embedding)."
    )


class SimilarNode(BaseModel):
    """A stored node whose name is close in meaning to a newly written one.

    A write never merges by meaning; it reports these so a caller who meant the
    same thing can merge on purpose (`merge_entities`).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    uuid: str
    name: str
    label: str
    similarity: float = Field(ge=0.0, le=1.0)


class WrittenNode(BaseModel):
    """A node a write created or reused (remember's items, the entities a write created)."""

    model_config = ConfigDict(extra="forbid")

    uuid: str
    name: str
    label: str
    created: bool
    similar_existing: list[SimilarNode] = Field(
        default_factory=list[SimilarNode],
        description="For a new entity: stored entities whose names are close in meaning "
        "(a typo or a duplicate?). Nothing was merged; merge_entities merges on purpose.",
    )


CREATED_ENTITIES = (
    "Entities this write created because no stored entity has the name (uuid, exact or "
    "normalised name; never by meaning), each with `similar_existing`: stored entities "
    "whose names are close in meaning (a typo or a duplicate?). Nothing was merged; "
    "merge_entities merges on purpose."
)
"""The description of a write result's `created_entities`."""


class CreateResult(BaseModel):
    """What a write did: the node's uuid and whether it was new (False: it already existed)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    uuid: str
    label: str
    name: str
    created: bool


class ClearResult(BaseModel):
    """Counts of what clearing one or all graphs removed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    graph: str
    nodes_deleted: dict[str, int] = Field(default_factory=dict, description="Keyed by label.")
    relationships_deleted: int = 0


class NameMatch(BaseModel):
    """How a read's name was matched to the node it answers with.

    A read may match a name by meaning (embedding similarity), but then it says so:
    `by_meaning` is true, `matched` differs from `requested`, and `candidates` lists
    the other close names, so a caller can tell "host-99" from the "host-01" it got.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    requested: str = Field(description="The name or uuid the call asked for.")
    matched: str = Field(description="The name of the node the call answers with.")
    uuid: str
    how: Literal["uuid", "exact", "normalized", "embedding"] = Field(
        description="uuid, exact name, normalised name (case, spaces, punctuation), or "
        "embedding similarity (a different name close in meaning)."
    )
    score: float = Field(ge=0.0, le=1.0, description="1.0 unless matched by meaning.")
    by_meaning: bool = Field(description="True when no node has the requested name.")
    candidates: list[SimilarNode] = Field(
        default_factory=lambda: list[SimilarNode](),
        description="When matched by meaning: the next closest names, best first.",
    )
    note: str | None = Field(
        default=None, description="What to do when the match is not the node meant."
    )
