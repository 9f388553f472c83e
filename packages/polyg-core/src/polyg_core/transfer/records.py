"""The records of polyg's native memory format, one JSON object per line (docs/import-format.md).

Every record has a `kind`; the other fields are those of the graph write it
becomes. Records name their endpoints (entity names, causal descriptions,
concept names) rather than uuids, so a file can be imported into any namespace
and imported twice without creating duplicates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from polyg_shared.nodes import CausalNodeType
from polyg_shared.types import (
    Confidence,
    Content,
    Name,
    Properties,
    Text,
    Timestamp,
    control_char_error,
)
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from polyg_core.errors import InvalidInput
from polyg_core.graphs.temporal_queries import is_date_only, parse_bound

KINDS = (
    "entity",
    "relation",
    "event",
    "fact",
    "causal_node",
    "causal_link",
    "solution",
    "concept",
    "memory",
)
"""Record kinds, in the order an import writes them."""

Stored = Annotated[dict[str, Any], Field(max_length=64)]
"""A node's or edge's stored properties that the record's other fields do not carry:
its uuid, record times (`created_at`, `recorded_at`, `updated_at` and their ISO
forms), normalised keys and bookkeeping (`origin`, `merged_from`, `invalidated_by`).
Export fills it; an import that creates the node or edge restores them, so an
export imported into an empty namespace is the same graph. A write that merges
into something already stored ignores it (what is stored wins)."""


LinksStored = Annotated[dict[str, dict[str, dict[str, Any]]], Field(max_length=8)]
"""The stored properties of a node's cross-links that have any (a cross-link made on
purpose carries `created_at`): link type, then the uuid of the linked node as
exported, then the properties. Export fills it; an import that creates the node
restores them on the links it wrote, as `stored` on the node."""


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class EntityRecord(_Record):
    """An entity (`E_Entity`); deduplicated on normalised name and type."""

    kind: Literal["entity"] = "entity"
    name: Name
    type: Name = Field(default="entity", validation_alias="entity_type")
    properties: Properties = Field(default_factory=dict)
    stored: Stored = Field(default_factory=dict)


def _inclusive_day_end(value: Any) -> Any:
    # A date without a time includes that day, as add_fact and link_entities read it.
    if value is not None and not isinstance(value, bool) and is_date_only(value):
        try:
            return parse_bound(value, "valid_to", "exclusive_end")
        except InvalidInput as exc:
            raise ValueError(str(exc)) from exc
    return value


class RelationRecord(_Record):
    """A typed relation between two entities (`E_RELATES`)."""

    kind: Literal["relation"] = "relation"
    source: Name
    target: Name
    type: Name
    source_type: Name | None = None
    target_type: Name | None = None
    properties: Properties = Field(default_factory=dict)
    valid_from: Timestamp | None = None
    valid_to: Timestamp | None = None
    stored: Stored = Field(default_factory=dict)

    @field_validator("valid_to", mode="before")
    @classmethod
    def _whole_last_day(cls, value: Any) -> Any:
        return _inclusive_day_end(value)


class EventRecord(_Record):
    """An event at a point in time, involving entities (`T_Event`)."""

    kind: Literal["event"] = "event"
    description: Text
    occurred_at: Timestamp
    duration_ms: int | None = Field(default=None, ge=0)
    entities: list[Name] = Field(default_factory=list)
    links_stored: LinksStored = Field(default_factory=dict)
    stored: Stored = Field(default_factory=dict)


class FactRecord(_Record):
    """A subject-predicate-object fact valid over `[valid_from, valid_to)` (`T_Fact`).

    A fact is the same fact as a stored one with its uuid (`stored.uuid`, which export
    writes) or, for a record without one, with the same subject, predicate, object and
    `valid_from`: such a record is merged, never written twice. `valid_to` equal to
    `valid_from` is an empty validity: a fact replaced or ended the instant it began,
    kept as history in record time.
    """

    kind: Literal["fact"] = "fact"
    subject: Name
    predicate: Name
    object: Text
    valid_from: Timestamp | None = None
    valid_to: Timestamp | None = None
    cardinality: Literal["single", "multi"] | None = None
    entities: list[Name] = Field(default_factory=list)
    link_subject: bool = True
    """The subject names an entity the fact involves, found or created as `add_fact`
    does. False: the subject is kept as text only (export writes false for a fact whose
    subject entity was deleted, so an import does not bring it back; `entities` then
    lists every entity the fact involves)."""
    links_stored: LinksStored = Field(default_factory=dict)
    stored: Stored = Field(default_factory=dict)

    @field_validator("valid_to", mode="before")
    @classmethod
    def _whole_last_day(cls, value: Any) -> Any:
        return _inclusive_day_end(value)

    @model_validator(mode="after")
    def _interval(self) -> FactRecord:
        if self.valid_from and self.valid_to and self.valid_to < self.valid_from:
            raise ValueError("valid_to must not be before valid_from")
        return self


class CausalNodeRecord(_Record):
    """A causal node (`C_Node`) with the entities it affects (`X_AFFECTS`) and the events
    it refers to (`X_REFERS_TO`).

    Export writes one per node (isolated nodes included), before the links; the
    entities and events here belong to this node only. A node is matched by uuid or
    normalised description, never by meaning: two stored nodes stay two nodes.
    """

    kind: Literal["causal_node"] = "causal_node"
    description: Text
    node_type: CausalNodeType = CausalNodeType.EVENT
    entities: list[Name] = Field(default_factory=list)
    events: list[Text] = Field(default_factory=list)
    links_stored: LinksStored = Field(default_factory=dict)
    stored: Stored = Field(default_factory=dict)


class CausalLinkRecord(_Record):
    """`cause` leads to `effect` with a confidence (`C_CAUSES`).

    `entities` and `events` here are linked to both ends (what `add_causal_link`
    does); to link one end only, give that node its own `causal_node` record.
    """

    kind: Literal["causal_link"] = "causal_link"
    cause: Text
    effect: Text
    confidence: Confidence = 0.8
    evidence: str | None = Field(default=None, max_length=4096)
    entities: list[Name] = Field(default_factory=list)
    events: list[Text] = Field(default_factory=list)
    stored: Stored = Field(default_factory=dict)


class SolutionRecord(_Record):
    """`problem` is solved by `solution` (`C_SOLVED_BY`)."""

    kind: Literal["solution"] = "solution"
    problem: Text
    solution: Text
    evidence: str | None = Field(default=None, max_length=4096)
    stored: Stored = Field(default_factory=dict)


class ConceptRecord(_Record):
    """A named idea of the semantic graph (`S_Concept`)."""

    kind: Literal["concept"] = "concept"
    name: Name
    description: str | None = Field(default=None, max_length=4096)
    entities: list[Name] = Field(default_factory=list)
    similar: dict[str, float] | None = None
    """Concepts this one is similar to (`S_SIMILAR_TO`, name to score). None: found by
    embedding similarity on write; given (export writes it): exactly these."""
    links_stored: LinksStored = Field(default_factory=dict)
    stored: Stored = Field(default_factory=dict)


class MemoryRecord(_Record):
    """A piece of remembered text (`S_Memory`), stored as is (no extraction)."""

    kind: Literal["memory"] = "memory"
    content: Content
    category: Literal["episodic", "semantic", "procedural"] = "episodic"
    tags: list[str] = Field(default_factory=list)
    concepts: list[Name] = Field(default_factory=list)
    created_at: Timestamp | None = None
    source_id: str | None = None
    stored: Stored = Field(default_factory=dict)


Record = Annotated[
    EntityRecord
    | RelationRecord
    | EventRecord
    | FactRecord
    | CausalNodeRecord
    | CausalLinkRecord
    | SolutionRecord
    | ConceptRecord
    | MemoryRecord,
    Field(discriminator="kind"),
]
"""Any record of the native format."""

RECORD: TypeAdapter[Record] = TypeAdapter(Record)


MAX_LINE_BYTES = 1 << 20
"""Longest accepted JSONL line (1 MiB); longer lines are reported and skipped."""


@dataclass(frozen=True)
class LineError:
    """A record that could not be read: where it is and what is wrong with it."""

    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


Item = tuple[int, Record | LineError]


def explain(exc: ValidationError) -> str:
    """A one-line account of what is wrong with a record, naming the fields."""
    parts: list[str] = []
    for err in exc.errors()[:3]:
        loc = [str(p) for p in err["loc"] if p not in KINDS]
        field = ".".join(loc)
        msg = str(err["msg"])
        if err["type"] == "union_tag_invalid":
            got = (err.get("ctx") or {}).get("tag", "?")
            msg = f"unknown kind {got!r}; use one of {', '.join(KINDS)}"
            field = ""
        elif err["type"] == "union_tag_not_found":
            msg = f"the record has no 'kind'; add one of {', '.join(KINDS)}"
            field = ""
        elif err["type"] == "extra_forbidden":
            msg = "unknown field (check its spelling against docs/import-format.md)"
        elif err["type"] == "missing":
            msg = "required field is missing"
        parts.append(f"{field}: {msg}" if field else msg)
    more = len(exc.errors()) - 3
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


def parse_record(data: Any, line: int, *, unescaped: bool = False) -> Record | LineError:
    """Validate one decoded record.

    `unescaped`: the record was decoded from JSON text without a `\\u` escape, so none
    of its strings can hold a character the tools refuse (JSON forbids raw control
    characters in strings, and a lone surrogate can only be written as an escape):
    the walk over its strings is skipped.
    """
    if not isinstance(data, dict):
        return LineError(line, f"expected a JSON object, got {type(data).__name__}")
    # A JSON escape ("\u0000") decodes to the characters the tools refuse: same rule.
    bad = None if unescaped else control_char_error(data)
    if bad is not None:
        loc, _, message = bad
        where = ".".join(str(p) for p in loc)
        return LineError(line, f"{where}: {message}" if where else message)
    try:
        return RECORD.validate_python(data)
    except ValidationError as exc:
        return LineError(line, explain(exc))
