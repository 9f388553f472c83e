"""What the classifier makes of a question, and what the extractor makes of free text."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from polyg_shared.nodes import MemoryCategory
from polyg_shared.types import MAX_TEXT, Confidence, Name, Text, Timestamp

MIN_DEPTH = 1
MAX_DEPTH = 5

Depth = Annotated[int, Field(ge=MIN_DEPTH, le=MAX_DEPTH)]
"""A traversal depth hint, 1..5."""


class IntentType(StrEnum):
    """The kind of question: it decides how far each graph is followed and the order of the context."""

    WHY = "WHY"
    WHEN = "WHEN"
    WHO = "WHO"
    WHAT = "WHAT"
    EXPLORE = "EXPLORE"


class CausalDirection(StrEnum):
    """Which way to walk the causal graph: towards causes, towards effects, or both."""

    UPSTREAM = "upstream"
    DOWNSTREAM = "downstream"
    BOTH = "both"


class Timeframe(BaseModel):
    """A resolved time window; either bound may be open. `end` is inclusive."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    start: Timestamp | None = None
    end: Timestamp | None = None
    phrase: str | None = Field(
        default=None, max_length=MAX_TEXT, description="The words the window was read from."
    )

    @model_validator(mode="after")
    def _ordered(self) -> Timeframe:
        if self.start is not None and self.end is not None and self.start > self.end:
            raise ValueError(
                f"timeframe start {self.start.isoformat()} is after its end "
                f"{self.end.isoformat()}; swap them"
            )
        return self


class DepthHints(BaseModel):
    """How deep to expand each graph view (1..5)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    semantic: Depth = 1
    entity: Depth = 1
    temporal: Depth = 1
    causal: Depth = 1


_DEFAULT_DEPTHS: dict[IntentType, tuple[int, int, int, int]] = {
    # (semantic, entity, temporal, causal), seed 001's intent-adaptive depth table.
    IntentType.WHY: (1, 1, 1, 3),
    IntentType.WHEN: (1, 1, 3, 1),
    IntentType.WHO: (1, 2, 1, 1),
    IntentType.WHAT: (1, 2, 1, 1),
    IntentType.EXPLORE: (2, 2, 2, 2),
}


def default_depth_hints(intent_type: IntentType) -> DepthHints:
    """Seed 001's default depths for a question type."""
    semantic, entity, temporal, causal = _DEFAULT_DEPTHS[intent_type]
    return DepthHints(semantic=semantic, entity=entity, temporal=temporal, causal=causal)


class Intent(BaseModel):
    """The classified question: what kind, about whom, when, and how deep to look."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: IntentType = IntentType.EXPLORE
    entities: list[Name] = Field(
        default_factory=list, description="Entity names mentioned (canonical when known)."
    )
    timeframe: Timeframe | None = None
    causal_direction: CausalDirection = CausalDirection.BOTH
    depth_hints: DepthHints = Field(default_factory=DepthHints)
    semantic_query: str = Field(
        default="", max_length=MAX_TEXT, description="The question reworded for vector search."
    )
    confidence: Confidence = 0.5
    multi_hop: bool = False
    inferential: bool = Field(
        default=False,
        description="The question asks what would or might be (an inference from what was "
        "said), not for something stated.",
    )
    history: bool = Field(
        default=False,
        description="The question asks how something changed over time (its history, what "
        "it was before), answered from the facts' versions in order.",
    )


class ExtractedEntity(BaseModel):
    """An entity named in remembered text."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Name
    entity_type: Name = "entity"


class ExtractedRelation(BaseModel):
    """A relation between two extracted (or known) entities, by name."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: Name
    target: Name
    relationship_type: Name
    valid_from: Timestamp | None = Field(
        default=None, description="When it began (joined, moved); None: not dated."
    )
    valid_to: Timestamp | None = Field(
        default=None, description="When it ended (left), exclusive; None: not ended."
    )


class ExtractedEvent(BaseModel):
    """Something that happened, with its resolved time and the entities involved."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    description: Text
    occurred_at: Timestamp
    entities: list[Name] = Field(default_factory=list)


class ExtractedFact(BaseModel):
    """A subject-predicate-object statement, valid from a time."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    subject: Name
    predicate: Name
    object: Text
    valid_from: Timestamp
    valid_to: Timestamp | None = None
    cardinality: Literal["single", "multi"] | None = Field(
        default=None,
        description="single: a new value ends the old (team); multi: values accumulate "
        "(skills). None: the predicate's known kind, else single.",
    )

    @model_validator(mode="after")
    def _ordered(self) -> ExtractedFact:
        if self.valid_to is not None and self.valid_to < self.valid_from:
            raise ValueError("a fact's valid_to is before its valid_from; swap or drop valid_to")
        return self


class ExtractedCausalLink(BaseModel):
    """A cause-effect pair read from the text."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cause: Text
    effect: Text
    confidence: Confidence = 0.7
    evidence: str | None = Field(default=None, max_length=MAX_TEXT)
    entities: list[Name] = Field(default_factory=list)


class ExtractedConcept(BaseModel):
    """A salient idea worth a semantic-graph concept."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Name
    description: str | None = Field(default=None, max_length=MAX_TEXT)


class Extraction(BaseModel):
    """Everything the extractor found in one piece of text."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    entities: list[ExtractedEntity] = Field(default_factory=list[ExtractedEntity])
    relations: list[ExtractedRelation] = Field(default_factory=list[ExtractedRelation])
    events: list[ExtractedEvent] = Field(default_factory=list[ExtractedEvent])
    facts: list[ExtractedFact] = Field(default_factory=list[ExtractedFact])
    causal_links: list[ExtractedCausalLink] = Field(default_factory=list[ExtractedCausalLink])
    concepts: list[ExtractedConcept] = Field(default_factory=list[ExtractedConcept])
    category: MemoryCategory = MemoryCategory.EPISODIC
