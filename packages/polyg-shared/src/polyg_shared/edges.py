"""Edges within a graph and the cross-links between graphs."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from polyg_shared.types import Confidence, Name, Properties, Text, Timestamp, Uuid


class EntityRelation(BaseModel):
    """A typed, directed relation between two entities (`E_RELATES`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: Uuid
    target: Uuid
    relationship_type: Name
    properties: Properties = Field(default_factory=dict)
    created_at: Timestamp
    source_name: str | None = None
    target_name: str | None = None
    valid_from: Timestamp | None = Field(
        default=None, description="When the relation began to hold (None: not dated)."
    )
    valid_to: Timestamp | None = Field(
        default=None, description="When it stopped holding, exclusive (None: still holds)."
    )


class CausalLink(BaseModel):
    """`C_CAUSES`: cause leads to effect with a confidence and optional evidence."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cause: Uuid
    effect: Uuid
    confidence: Confidence
    evidence: str | None = Field(default=None, max_length=4096)
    created_at: Timestamp
    cause_description: str | None = None
    effect_description: str | None = None


class CrossLinkType(StrEnum):
    """Typed links that join the four graphs."""

    REPRESENTS = "X_REPRESENTS"  # concept -> entity
    INVOLVES = "X_INVOLVES"  # event/fact -> entity
    AFFECTS = "X_AFFECTS"  # causal node -> entity
    REFERS_TO = "X_REFERS_TO"  # causal node -> event


class CrossLink(BaseModel):
    """A link between nodes of two different graphs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: CrossLinkType
    source: Uuid
    target: Uuid


class Similarity(BaseModel):
    """`S_SIMILAR_TO` between two concepts."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: Uuid
    target: Uuid
    score: Confidence


class CausalPath(BaseModel):
    """A chain of causal links with each hop's confidence and the product over the path."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    nodes: list[Text]
    node_ids: list[Uuid]
    confidences: list[Confidence]
    confidence: Confidence = Field(description="Product of the hop confidences.")
