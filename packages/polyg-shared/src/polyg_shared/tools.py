"""Inputs and outputs of the memory, direct-read, admin and MAGMA-step MCP tools.

Every input takes an optional `graph` (the namespace; omitted: the default memory
graph). Wherever a tool takes a node, a uuid or a name (description, for events and
causal nodes) is accepted. No output carries an embedding.
"""

from __future__ import annotations

from typing import Annotated, Literal, cast

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from polyg_shared.causal import CausalChain
from polyg_shared.edges import EntityRelation
from polyg_shared.intents import CausalDirection, IntentType
from polyg_shared.nodes import CausalNode, Concept, Entity, Event, Fact, MemoryCategory
from polyg_shared.pages import PageInput, PageOutput
from polyg_shared.results import (
    CREATED_ENTITIES,
    ClearResult,
    NameMatch,
    SimilarNode,
    WrittenNode,
)
from polyg_shared.retrieval import (
    ContextEdge,
    ContextNode,
    RetrieverName,
    ViewName,
    ViewResult,
    ViewStatus,
)
from polyg_shared.types import (
    MAX_TEXT,
    Confidence,
    Content,
    Name,
    Properties,
    StrictInput,
    Text,
    check_graph_name,
    graph_argument,
)

MAX_REFS = 50
"""Most node references one call takes."""
MAX_IMPORT_CHARS = 5_000_000
"""Largest JSONL text import_graph takes in one call."""
MAX_EXPORT_RECORDS = 100_000

Ref = Annotated[str, Field(min_length=1, max_length=MAX_TEXT)]
"""A node reference: a uuid, a name, or a description."""
TimeText = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        description="ISO 8601 timestamp with any offset (e.g. 2026-01-07T14:05:00Z) or a date.",
    ),
]
Depth = Annotated[int, Field(ge=1, le=5)]
GraphPart = Literal["semantic", "temporal", "causal", "entity", "all"]


def spec_alias(name: str, *spec_names: str) -> AliasChoices:
    """Accept seed 000's argument names for a field (its schema keeps `name`).

    Clients written against the specification's tool surface (`get_entity` with
    `name`, `recall` with `query`, `query_timeline` with `from`/`to`, ...) work as is;
    the advertised schema and the documentation name polyg's field first.
    """
    return AliasChoices(name, *spec_names)


class MemoryInput(StrictInput):
    """Base of every memory tool input: unknown arguments are errors, `graph` picks the graph."""

    graph: str | None = graph_argument("Namespace to use; omit for the default memory.")

    @field_validator("graph")
    @classmethod
    def _valid_graph(cls, value: str | None) -> str | None:
        return check_graph_name(value, "list_graphs shows the existing graphs")


# -- recall / remember -------------------------------------------------------------------------


class RecallInput(MemoryInput):
    """Arguments of recall."""

    question: Text = Field(
        validation_alias=spec_alias("question", "query"),
        description="A question in plain language, e.g. 'Why did X fail?' (also: `query`).",
    )
    reference_time: TimeText | None = Field(
        default=None,
        description="What 'now' is for relative phrases like 'yesterday' (default: now).",
    )
    max_tokens: int | None = Field(
        default=None,
        ge=100,
        le=32_000,
        description=(
            "Token budget of this answer (default 4000): the memories and the answer's nodes "
            "are packed into it best first (`packed` lists what did not fit), then details "
            "are left out (`omitted`)."
        ),
    )
    mode: Literal["auto", "execution", "planning", "brainstorming"] = Field(
        default="auto",
        description=(
            "Result budget: execution (5 core nodes), planning (5 core + 15 extended), "
            "brainstorming (5 + 25); auto reads it from the question's wording."
        ),
    )
    decay: bool = Field(
        default=True, description="False ignores memories' age (no e^(-days/30) weight)."
    )
    ppr: bool | None = Field(
        default=None,
        description=(
            "Personalized-PageRank multi-hop view: true/false forces it; omitted runs it "
            "for multi-hop questions."
        ),
    )
    category: MemoryCategory | None = Field(
        default=None, description="Only memories of this category (procedural/episodic/semantic)."
    )
    tags: list[Annotated[str, Field(min_length=1, max_length=64)]] = Field(
        default_factory=list, max_length=32, description="Only memories carrying all these tags."
    )
    project: Name | None = Field(
        default=None, description="Only memories tagged project:<project>."
    )
    who: Name | None = Field(default=None, description="Only memories tagged who:<who>.")
    retrievers: list[RetrieverName] | None = Field(
        default=None,
        min_length=1,
        description=(
            "Which memory retrievers to fuse (default all): lexical (BM25), dense (vector "
            "k-NN), entity (the question's names), time (its timeframe), neighbours "
            "(memories next to a hit), graph (shared concepts)."
        ),
    )
    memory_limit: int = Field(
        default=20,
        ge=1,
        le=200,
        validation_alias=spec_alias("memory_limit", "max_results"),
        description="How many ranked memories `memories` holds (also: `max_results`).",
    )
    include_reasoning: bool = Field(
        default=True,
        description="False leaves `reasoning` empty (the causal chain and context lists).",
    )


class RememberInput(MemoryInput):
    """Arguments of remember."""

    content: Content = Field(description="Free text to remember (up to 100,000 characters).")
    reference_time: TimeText | None = Field(
        default=None, description="When the text was written, for relative times (default: now)."
    )
    category: MemoryCategory | None = Field(
        default=None, description="episodic, semantic or procedural (default: inferred)."
    )
    tags: list[Annotated[str, Field(min_length=1, max_length=64)]] = Field(
        default_factory=list, max_length=32, description="Labels such as 'WHO:alice'."
    )
    source_id: str | None = Field(
        default=None, max_length=256, description="Where the text came from (a document id)."
    )
    who: Name | None = Field(
        default=None, description="WHO: the agent or user it came from (stored as who:<who>)."
    )
    project: Name | None = Field(
        default=None, description="PROJECT it belongs to (stored as the tag project:<project>)."
    )
    why: Text | None = Field(
        default=None,
        validation_alias=spec_alias("why", "context"),
        description=(
            "WHY it was remembered, the context it comes from (stored as the tag why:<why>; "
            "also: `context`)."
        ),
    )


# -- writes ------------------------------------------------------------------------------------


class AddEntityInput(MemoryInput):
    """Arguments of add_entity."""

    name: Name
    entity_type: Name = Field(default="entity", description="e.g. Service, Person, Deployment.")
    properties: Properties = Field(default_factory=dict, description="Scalar key/values.")


class EntityWriteOutput(BaseModel):
    """An entity that was created or updated."""

    entity: Entity
    created: bool = Field(description="False when an entity of that name and type existed.")
    similar_existing: list[SimilarNode] = Field(
        default_factory=list[SimilarNode],
        description="For a new entity: stored entities whose names are close in meaning "
        "(a typo or a duplicate?). Nothing was merged; merge_entities merges on purpose.",
    )


class UpdateEntityInput(MemoryInput):
    """Arguments of update_entity."""

    entity: Ref = Field(description="The entity's uuid or name.")
    properties: Properties | None = Field(default=None, description="Properties to set.")
    mode: Literal["merge", "replace"] = Field(
        default="merge", description="merge into the old properties, or replace them all."
    )
    new_name: Name | None = None
    entity_type: Name | None = None


class EntityOutput(BaseModel):
    """One entity."""

    entity: Entity


class LinkEntitiesInput(MemoryInput):
    """Arguments of link_entities."""

    source: Ref = Field(description="uuid or name of the entity the relation starts at.")
    target: Ref = Field(description="uuid or name of the entity the relation points to.")
    relationship_type: Name = Field(
        validation_alias=spec_alias("relationship_type", "relationship"),
        description="e.g. owns, depends_on, deployed_to (also: `relationship`).",
    )
    properties: Properties = Field(default_factory=dict)
    valid_from: TimeText | None = Field(
        default=None, description="When the relation began (joined, moved); default: undated."
    )
    valid_to: TimeText | None = Field(
        default=None, description="When it ended (left), exclusive; a date alone includes it."
    )


class AddEventInput(MemoryInput):
    """Arguments of add_event."""

    description: Text
    occurred_at: TimeText
    duration_ms: int | None = Field(default=None, ge=0)
    entities: list[Ref] = Field(
        default_factory=list,
        max_length=MAX_REFS,
        description="Entity names or uuids involved (created if unknown; linked X_INVOLVES).",
    )


class UpdateEventInput(MemoryInput):
    """Arguments of update_event (omitted fields stay as they are)."""

    event: Ref = Field(description="The event's uuid or exact description.")
    description: Text | None = None
    occurred_at: TimeText | None = None
    duration_ms: int | None = Field(default=None, ge=0)
    entities: list[Ref] | None = Field(
        default=None,
        max_length=MAX_REFS,
        description="Replaces the entities the event involves (created if unknown).",
    )


class AddFactInput(MemoryInput):
    """Arguments of add_fact."""

    subject: Name
    predicate: Name
    object: Text
    valid_from: TimeText | None = Field(default=None, description="Default: now.")
    valid_to: TimeText | None = Field(
        default=None,
        description="When it stopped holding (exclusive); a date alone includes that day.",
    )
    entities: list[Ref] = Field(
        default_factory=list,
        max_length=MAX_REFS,
        description="More entities the fact involves (the subject always is one).",
    )
    source: Name | None = Field(
        default=None, description="Who or what stated the fact (a person, a document)."
    )
    cardinality: Literal["single", "multi"] | None = Field(
        default=None,
        description="single: a new value ends the old (team, city); multi: values "
        "accumulate (skills, likes). Default: known predicates' kind, else single.",
    )


class InvalidateFactInput(MemoryInput):
    """Arguments of invalidate_fact: a fact uuid, or subject + predicate of current facts."""

    fact: Ref | None = Field(default=None, description="The fact's uuid.")
    subject: Name | None = Field(default=None, description="With predicate: its current facts.")
    predicate: Name | None = None
    at: TimeText | None = Field(default=None, description="When it stopped holding (now).")


class InvalidateFactOutput(BaseModel):
    """The facts whose validity was ended."""

    invalidated: list[Fact]


class AddConceptInput(MemoryInput):
    """Arguments of add_concept."""

    name: Name
    description: str | None = Field(default=None, max_length=MAX_TEXT)
    entities: list[Ref] = Field(
        default_factory=list,
        max_length=MAX_REFS,
        description="Entity names or uuids the concept represents (linked X_REPRESENTS).",
    )


class ConceptWriteOutput(BaseModel):
    """A concept that was created or updated."""

    concept: Concept
    created: bool
    created_entities: list[WrittenNode] = Field(
        default_factory=list[WrittenNode], description=CREATED_ENTITIES
    )


class AddCausalLinkInput(MemoryInput):
    """Arguments of add_causal_link."""

    cause: Ref = Field(description="Description (or uuid) of the cause; matched to known nodes.")
    effect: Ref = Field(description="Description (or uuid) of the effect.")
    confidence: Confidence = Field(default=0.8, description="How sure the link is, 0-1.")
    evidence: str | None = Field(default=None, max_length=MAX_TEXT)
    entities: list[Ref] = Field(
        default_factory=list, max_length=MAX_REFS, description="Affected entities (X_AFFECTS)."
    )
    events: list[Ref] = Field(
        default_factory=list,
        max_length=MAX_REFS,
        description="uuids or descriptions of existing events (X_REFERS_TO).",
    )


class DeleteNodeInput(MemoryInput):
    """Arguments of delete_node."""

    node: Ref = Field(
        description="uuid of any memory node, or the exact name of an entity, causal node, "
        "concept or event."
    )
    confirm: bool = Field(default=False, description="Must be true (deleting is irreversible).")
    delete_facts: bool = Field(
        default=False,
        description="For an entity: delete the facts involving it instead of ending their "
        "validity (by default they stay in history, no longer current).",
    )


class DeleteRelationInput(MemoryInput):
    """Arguments of delete_relation."""

    source: Ref = Field(description="uuid or exact name of the entity the relation starts at.")
    target: Ref = Field(description="uuid or exact name of the entity the relation points to.")
    relationship_type: Name | None = Field(
        default=None, description="Only relations of this type; omitted: every relation."
    )
    confirm: bool = Field(default=False, description="Must be true (deleting is irreversible).")


class DeleteRelationOutput(BaseModel):
    """What delete_relation removed."""

    deleted: int = Field(description="How many relations were removed (0: none existed).")


class MergeEntitiesInput(MemoryInput):
    """Arguments of merge_entities."""

    source: Ref = Field(description="uuid or exact name of the entity merged away.")
    target: Ref = Field(description="uuid or exact name of the entity that stays.")
    confirm: bool = Field(default=False, description="Must be true (the source is deleted).")


class MergeEntitiesOutput(BaseModel):
    """The entity that stayed after merge_entities."""

    entity: Entity
    merged_from: list[str] = Field(description="Names of every entity merged into this one.")


class DeleteCausalLinkInput(MemoryInput):
    """Arguments of delete_causal_link."""

    cause: Ref = Field(description="uuid or exact description of the cause.")
    effect: Ref = Field(description="uuid or exact description of the effect.")
    confirm: bool = Field(default=False, description="Must be true (deleting is irreversible).")


class DeleteCausalLinkOutput(BaseModel):
    """What delete_causal_link removed."""

    deleted: bool = Field(description="False when the two nodes were not linked.")


class DeleteNodeOutput(BaseModel):
    """What delete_node removed."""

    deleted: bool
    uuid: str
    label: str
    name: str
    message: str


# -- direct reads ------------------------------------------------------------------------------


class GetEntityInput(MemoryInput, PageInput):
    """Arguments of get_entity."""

    entity: Ref = Field(
        validation_alias=spec_alias("entity", "name"),
        description="The entity's uuid or name (also: `name`).",
    )
    limit: int = Field(default=50, ge=1, le=1000, description="Most relationships returned.")
    include_relationships: bool = Field(
        default=True, description="False answers the entity alone (no relationships)."
    )


class EntityDetail(PageOutput):
    """An entity with its relationships (both directions)."""

    entity: Entity
    relationships: list[EntityRelation]
    match: NameMatch | None = Field(
        default=None,
        description="How the requested name was matched; by_meaning=true when no entity "
        "has that name and the closest one by meaning answers instead.",
    )


class QueryTimelineInput(MemoryInput, PageInput):
    """Arguments of query_timeline."""

    start: TimeText | None = Field(
        default=None,
        validation_alias=spec_alias("start", "from"),
        description="Earliest time (inclusive; also: `from`).",
    )
    end: TimeText | None = Field(
        default=None,
        validation_alias=spec_alias("end", "to"),
        description="Latest time (inclusive; a date alone includes that day; also: `to`).",
    )
    entity: Ref | None = Field(default=None, description="Only events involving this entity.")
    limit: int = Field(default=50, ge=1, le=1000)
    order: Literal["asc", "desc"] = "asc"


class QueryFactsInput(MemoryInput, PageInput):
    """Arguments of query_facts."""

    subject: Name | None = Field(default=None, description="Only facts about this subject.")
    predicate: Name | None = Field(default=None, description="Only facts with this predicate.")
    entity: Ref | None = Field(default=None, description="Only facts involving this entity.")
    as_of: TimeText | None = Field(
        default=None,
        description="Facts valid at this time (a date alone: at the end of that day).",
    )
    start: TimeText | None = Field(
        default=None, description="With end: facts valid at some time in [start, end]."
    )
    end: TimeText | None = Field(
        default=None, description="With start: facts valid at some time in [start, end]."
    )
    history: bool = Field(default=False, description="Every version, ended ones included.")
    limit: int = Field(default=50, ge=1, le=1000)


class FactsOutput(PageOutput):
    """Facts with their valid time, record time and, once ended, when and by what."""

    facts: list[Fact]
    count: int


class FactHistoryInput(MemoryInput, PageInput):
    """Arguments of fact_history: a fact uuid, or its subject and predicate."""

    fact: Ref | None = Field(default=None, description="A fact's uuid.")
    subject: Name | None = Field(default=None, description="With predicate: that statement.")
    predicate: Name | None = None
    limit: int = Field(default=100, ge=1, le=1000)


class FactHistoryOutput(PageOutput):
    """Every version of one subject+predicate, oldest validity first."""

    subject: str
    predicate: str
    versions: list[Fact]
    current: Fact | None = Field(description="The version valid now, if one is.")


class TimelineOutput(PageOutput):
    """Events in time order."""

    events: list[Event]
    count: int


class GetCausalChainInput(MemoryInput, PageInput):
    """Arguments of get_causal_chain."""

    node: Ref = Field(
        validation_alias=spec_alias("node", "event"),
        description="uuid or description of a causal node (also: `event`).",
    )
    direction: Literal["upstream", "downstream", "both"] = Field(
        default="upstream", description="upstream: causes; downstream: effects."
    )
    depth: int = Field(default=3, ge=1, le=10)
    max_paths: int = Field(default=20, ge=1, le=200)


class CausalChainOutput(PageOutput):
    """The causal chains from one node."""

    root: CausalNode
    chains: list[CausalChain]


class ExplainWhyInput(MemoryInput, PageInput):
    """Arguments of explain_why."""

    effect: Ref = Field(
        validation_alias=spec_alias("effect", "event"),
        description=(
            "What to explain: a causal node's description or uuid, or an entity name "
            "(also: `event`)."
        ),
    )
    depth: int = Field(default=3, ge=1, le=10)
    max_paths: int = Field(default=5, ge=1, le=50)


class ExplanationStep(BaseModel):
    """One hop of an explanation."""

    cause: str
    effect: str
    confidence: float = Field(ge=0.0, le=1.0)


class Explanation(BaseModel):
    """One chain from a root cause to the effect, with the product of its hop confidences."""

    steps: list[ExplanationStep]
    confidence: float = Field(ge=0.0, le=1.0)
    node_ids: list[str]


class ExplainWhyOutput(PageOutput):
    """Why something happened: upstream chains, best first, and an answer sentence."""

    answer: str
    effects: list[CausalNode] = Field(description="The causal nodes explained.")
    root_causes: list[str]
    explanations: list[Explanation]


# -- admin -------------------------------------------------------------------------------------


class ClearGraphInput(MemoryInput):
    """Arguments of clear_graph."""

    which: GraphPart = Field(
        description=(
            "semantic, temporal, causal, entity, or all (also: `graph` with one of these values)."
        )
    )
    confirm: bool = Field(default=False, description="Must be true (irreversible).")

    @model_validator(mode="before")
    @classmethod
    def _spec_graph_part(cls, data: object) -> object:
        if not isinstance(data, dict):
            return data
        fields = cast(dict[str, object], data)
        part = fields.get("graph")
        if "which" not in fields and part in ("semantic", "temporal", "causal", "entity", "all"):
            rest = {k: v for k, v in fields.items() if k != "graph"}
            return {**rest, "which": part}
        return fields


class ClearGraphOutput(ClearResult):
    """What clear_graph removed."""

    which: str


class ExportGraphInput(MemoryInput):
    """Arguments of export_graph."""

    max_records: int = Field(default=10_000, ge=1, le=MAX_EXPORT_RECORDS)
    max_chars: int = Field(default=2_000_000, ge=1_000, le=MAX_IMPORT_CHARS)
    format: Literal["jsonl", "json", "cypher"] = Field(
        default="jsonl",
        description=(
            "jsonl: one record per line (import_graph reads it); json: the same records as "
            "one JSON array; cypher: one Cypher statement per line, each replayable with "
            "GRAPH.QUERY (as `polyg export --format cypher` writes)."
        ),
    )


class ExportGraphOutput(BaseModel):
    """A graph's memory as polyg JSONL records (one per line, importable by import_graph)."""

    graph: str
    format: Literal["jsonl", "json", "cypher"] = "jsonl"
    records: int
    truncated: bool = Field(description="True when max_records or max_chars cut the export.")
    text: str


class ImportGraphInput(MemoryInput):
    """Arguments of import_graph."""

    text: str = Field(
        min_length=1,
        max_length=MAX_IMPORT_CHARS,
        description="polyg JSONL records, one JSON object per line (export_graph's format).",
    )
    strict: bool = Field(default=False, description="Write nothing if any record is bad.")
    dry_run: bool = Field(default=False, description="Only validate.")


class KindCountsOut(BaseModel):
    """Records of one kind."""

    created: int
    merged: int
    failed: int


class LineErrorOut(BaseModel):
    """A record that could not be imported."""

    line: int
    message: str


class ImportGraphOutput(BaseModel):
    """What import_graph did."""

    graph: str
    records: int
    created: int
    merged: int
    skipped: int
    failed: int
    dry_run: bool
    aborted: bool
    kinds: dict[str, KindCountsOut]
    errors: list[LineErrorOut]


# -- MAGMA steps -------------------------------------------------------------------------------


class SemanticSearchInput(MemoryInput, PageInput):
    """Arguments of semantic_search."""

    query: Text = Field(description="What to look for, in plain language.")
    k: int = Field(
        default=10,
        ge=1,
        le=100,
        validation_alias=spec_alias("k", "limit"),
        description="Most hits answered, best first across node kinds (also: `limit`).",
    )
    min_score: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="Lowest similarity kept (default 0.3 unless the server sets another).",
    )


class SemanticHit(BaseModel):
    """A node similar to the query."""

    uuid: str
    label: str
    graph: str
    text: str
    score: float
    linked_entity_ids: list[str] = Field(default_factory=list)


class SemanticSearchOutput(PageOutput):
    """Seed entity ids first (pass them on), then every hit."""

    seed_entity_ids: list[str] = Field(
        description="Entity uuids to pass to entity_lookup, temporal_expand, causal_expand."
    )
    seed_entity_count: int
    instruction: str
    seed_event_ids: list[str] = Field(default_factory=list)
    seed_causal_ids: list[str] = Field(default_factory=list)
    hits: list[SemanticHit]
    view: ViewResult = Field(description="The semantic view, for subgraph_merge.")


class EntityLookupInput(MemoryInput):
    """Arguments of entity_lookup."""

    entities: list[Ref] = Field(
        min_length=1, max_length=MAX_REFS, description="Entity uuids (seed_entity_ids) or names."
    )
    depth: Depth = 2


class TemporalExpandInput(MemoryInput):
    """Arguments of temporal_expand."""

    entities: list[Ref] = Field(
        default_factory=list, max_length=MAX_REFS, description="Entity uuids or names."
    )
    start: TimeText | None = None
    end: TimeText | None = None
    depth: Depth = 2


class CausalExpandInput(MemoryInput):
    """Arguments of causal_expand."""

    nodes: list[Ref] = Field(
        min_length=1,
        max_length=MAX_REFS,
        description="Entity uuids/names (causal nodes affecting them are the start) or causal "
        "node uuids/descriptions.",
    )
    direction: CausalDirection = CausalDirection.UPSTREAM
    depth: Depth = 3


class ViewOutput(BaseModel):
    """What one expansion step found; pass `view` to subgraph_merge."""

    next_step: str
    seeds: list[str] = Field(description="The uuids the expansion started from.")
    view: ViewResult


class ViewIn(StrictInput):
    """A view as returned by a step tool (extra keys are ignored)."""

    model_config = ConfigDict(extra="ignore")

    view: ViewName
    status: ViewStatus = "ok"
    nodes: list[ContextNode] = Field(default_factory=list[ContextNode])
    edges: list[ContextEdge] = Field(default_factory=list[ContextEdge])


class SubgraphMergeInput(MemoryInput):
    """Arguments of subgraph_merge."""

    views: list[ViewIn] = Field(
        min_length=1, max_length=10, description="The `view` objects of the step tools."
    )
    boost: float = Field(default=1.5, ge=1.0, le=5.0, description="Multi-view boost.")


class SubgraphIn(StrictInput):
    """A merged subgraph as subgraph_merge returned it (extra keys are ignored)."""

    model_config = ConfigDict(extra="ignore")

    nodes: list[ContextNode] = Field(default_factory=list[ContextNode])
    edges: list[ContextEdge] = Field(default_factory=list[ContextEdge])
    views: dict[str, ViewStatus] = Field(default_factory=dict)


class LinearizeContextInput(MemoryInput):
    """Arguments of linearize_context."""

    subgraph: SubgraphIn = Field(description="subgraph_merge's output.")
    intent_type: IntentType = Field(
        default=IntentType.EXPLORE,
        description="WHY (causes first), WHEN (by time), WHO/WHAT (relevance), EXPLORE.",
    )
    max_tokens: int = Field(default=4000, ge=50, le=32_000)
