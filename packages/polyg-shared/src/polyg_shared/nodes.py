"""Nodes of the four graphs as they are returned to callers (never with embeddings)."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from polyg_shared.types import Confidence, Content, Name, Properties, Text, Timestamp, Uuid


class GraphKind(StrEnum):
    """The four memory graphs."""

    SEMANTIC = "semantic"
    TEMPORAL = "temporal"
    CAUSAL = "causal"
    ENTITY = "entity"


class _Node(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    uuid: Uuid


class Entity(_Node):
    """A person, service, project, document, ... in the entity graph."""

    name: Name
    entity_type: Name = "entity"
    properties: Properties = Field(default_factory=dict)
    created_at: Timestamp
    updated_at: Timestamp


class Event(_Node):
    """Something that happened at a point in time (temporal graph)."""

    description: Text
    occurred_at: Timestamp
    duration_ms: int | None = Field(default=None, ge=0)
    recorded_at: Timestamp
    entities: list[str] = Field(default_factory=list, description="Names of involved entities.")


class Fact(_Node):
    """A subject-predicate-object statement with bi-temporal validity."""

    subject: Name
    predicate: Name
    object: Text
    valid_from: Timestamp
    valid_to: Timestamp | None = None
    recorded_at: Timestamp = Field(description="When polyg learnt the fact (record time).")
    invalidated_by: str | None = Field(
        default=None, description="uuid of the fact that superseded this one, if one did."
    )
    invalidated_at: Timestamp | None = Field(
        default=None, description="When polyg learnt the fact had ended (record time)."
    )
    source: str | None = Field(
        default=None, description="Who or what stated the fact (a person, a turn, a document)."
    )
    cardinality: Literal["single", "multi"] | None = Field(
        default=None,
        description="single: a new value ended the old one; multi: values accumulate.",
    )

    @property
    def is_current(self) -> bool:
        """True while the fact has no end of validity."""
        return self.valid_to is None


class CausalNodeType(StrEnum):
    """What a causal node stands for."""

    CAUSE = "cause"
    EFFECT = "effect"
    EVENT = "event"
    CONDITION = "condition"
    SOLUTION = "solution"


class CausalNode(_Node):
    """A cause, effect or condition in the causal graph."""

    description: Text
    node_type: CausalNodeType = CausalNodeType.EVENT


class Concept(_Node):
    """A named idea in the semantic graph."""

    name: Name
    description: str | None = Field(default=None, max_length=4096)


class MemoryCategory(StrEnum):
    """What kind of memory a text is: how to do something, something that happened, or a fact."""

    PROCEDURAL = "procedural"
    EPISODIC = "episodic"
    SEMANTIC = "semantic"


class Memory(_Node):
    """A piece of raw remembered text kept in the semantic graph."""

    content: Content
    category: MemoryCategory = MemoryCategory.EPISODIC
    tags: list[str] = Field(default_factory=list)
    created_at: Timestamp


class NodeRef(BaseModel):
    """A short reference to any node: enough to show and to pass to another tool."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    uuid: Uuid
    label: str = Field(description="The node's label, e.g. E_Entity or C_Node.")
    name: str = Field(description="Name or description shown to a reader.")
    graph: GraphKind | None = None
    score: Confidence | None = None
