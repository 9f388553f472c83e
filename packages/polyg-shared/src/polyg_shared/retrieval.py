"""Models of the MAGMA retrieval pipeline: views, the merged subgraph, context, synthesis."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# WrittenNode is a write model; remember's result re-exports it where it always was.
from polyg_shared.results import WrittenNode as WrittenNode

ViewName = Literal["semantic", "entity", "temporal", "causal", "ppr"]
ViewStatus = Literal["ok", "failed", "timeout", "skipped"]
RetrieverName = Literal["lexical", "dense", "entity", "time", "neighbours", "graph"]
RETRIEVERS: tuple[RetrieverName, ...] = (
    "lexical",
    "dense",
    "entity",
    "time",
    "neighbours",
    "graph",
)


class ContextNode(BaseModel):
    """A node as the pipeline sees it: identity, display text, score and the views that found it."""

    model_config = ConfigDict(extra="forbid")

    uuid: str
    label: str = Field(description="E_Entity, T_Event, T_Fact, C_Node, S_Concept or S_Memory.")
    graph: str = Field(description="semantic, temporal, causal or entity.")
    text: str = Field(description="Name, description or 'subject predicate object'.")
    score: float = Field(ge=0.0)
    views: list[str] = Field(default_factory=list)
    attributes: dict[str, Any] = Field(
        default_factory=dict,
        description="Display attributes: entity_type, occurred_at, valid_from/valid_to, ...",
    )


class ContextEdge(BaseModel):
    """An edge between two context nodes."""

    model_config = ConfigDict(extra="forbid")

    source: str
    target: str
    type: str = Field(description="Relationship type, e.g. C_CAUSES, E_RELATES, X_INVOLVES.")
    label: str | None = Field(default=None, description="User relation name for E_RELATES.")
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)


class ViewResult(BaseModel):
    """What one expansion view found, and whether it ran."""

    model_config = ConfigDict(extra="forbid")

    view: ViewName
    status: ViewStatus = "ok"
    error: str | None = None
    elapsed_ms: float = 0.0
    nodes: list[ContextNode] = Field(default_factory=list[ContextNode])
    edges: list[ContextEdge] = Field(default_factory=list[ContextEdge])


class MergedSubgraph(BaseModel):
    """One node per uuid with `score = mean × boost^(views − 1)`, and the union of edges."""

    model_config = ConfigDict(extra="forbid")

    nodes: list[ContextNode] = Field(default_factory=list[ContextNode])
    edges: list[ContextEdge] = Field(default_factory=list[ContextEdge])
    views: dict[str, ViewStatus] = Field(default_factory=dict)


class LinearizedContext(BaseModel):
    """The merged subgraph written out in intent order within a token budget."""

    model_config = ConfigDict(extra="forbid")

    strategy: Literal["topological", "chronological", "relevance", "frequency"]
    text: str
    node_ids: list[str] = Field(description="The nodes included, in order.")
    nodes_total: int
    tokens: int
    max_tokens: int
    truncated: bool


class CausalStep(BaseModel):
    """One hop of a causal chain."""

    model_config = ConfigDict(extra="forbid")

    cause: str
    effect: str
    confidence: float = Field(ge=0.0, le=1.0)


class Reasoning(BaseModel):
    """Why the answer is what it is."""

    model_config = ConfigDict(extra="forbid")

    causal_chain: list[CausalStep] = Field(default_factory=list[CausalStep])
    temporal_context: list[str] = Field(default_factory=list)
    entities_involved: list[str] = Field(default_factory=list)
    semantic_matches: list[str] = Field(default_factory=list)


class Synthesis(BaseModel):
    """The answer to a recall question."""

    model_config = ConfigDict(extra="forbid")

    answer: str
    confidence: float = Field(ge=0.0, le=1.0)
    reasoning: Reasoning = Field(default_factory=Reasoning)
    sources: list[str] = Field(default_factory=list, description="uuids of the nodes used.")
    follow_ups: list[str] = Field(default_factory=list)


class UsageReport(BaseModel):
    """LLM tokens and cost spent by one call of recall or remember (zero without an LLM)."""

    model_config = ConfigDict(extra="forbid")

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    llm_calls: int = 0


class ViewSummary(BaseModel):
    """How one view of a recall went."""

    model_config = ConfigDict(extra="forbid")

    view: str
    status: ViewStatus
    nodes: int
    elapsed_ms: float
    error: str | None = None


class RankingReport(BaseModel):
    """What the hybrid ranking did: weights, filters, and what each dropped."""

    model_config = ConfigDict(extra="forbid")

    weights: dict[str, float] = Field(description="vector, graph and causal weights.")
    threshold: float
    candidates: int
    below_threshold: int
    duplicates_removed: int
    decay: bool = Field(description="Whether memories' scores were decayed by age.")
    filters: dict[str, Any] = Field(
        default_factory=dict, description="category / tags / project / who filters applied."
    )
    memories_filtered_out: int = 0


class RecalledMemory(BaseModel):
    """A stored memory that recall ranked as evidence for the question, best first."""

    model_config = ConfigDict(extra="forbid")

    uuid: str
    content: str
    source_id: str | None = Field(
        default=None, description="The caller's id for the text (a turn, a message, a file)."
    )
    created_at: str | None = Field(default=None, description="When it happened (ISO 8601, UTC).")
    score: float = Field(ge=0.0, description="The fused score the list is ordered by.")
    retrievers: dict[str, float] = Field(
        default_factory=dict,
        description=(
            "The retrievers that found it and their normalised scores in [0, 1]: lexical, "
            "dense, entity, time, neighbours, graph."
        ),
    )


class AnswerSource(BaseModel):
    """A node an answer rests on, with its text (a reader never has to look a uuid up)."""

    model_config = ConfigDict(extra="forbid")

    uuid: str
    label: str = Field(description="E_Entity, T_Event, T_Fact, C_Node, S_Concept or S_Memory.")
    text: str = Field(description="Name, description, memory text or 'subject predicate object'.")
    when: str | None = Field(
        default=None, description="When it happened or held from (ISO 8601, UTC), if dated."
    )


class PackedEvidence(BaseModel):
    """What a recall with `max_tokens` returned within the budget, and what it left out."""

    model_config = ConfigDict(extra="forbid")

    max_tokens: int = Field(description="The budget asked for.")
    tokens: int = Field(description="Estimated tokens of the memories and nodes returned.")
    memories_kept: int
    nodes_kept: int
    left_out: list[AnswerSource] = Field(
        default_factory=list[AnswerSource],
        description=(
            "Memories and nodes that did not fit, best first (uuid, label, the start of the text)."
        ),
    )


class RecallResult(BaseModel):
    """The answer to a question about memory, with the evidence and how it was found."""

    model_config = ConfigDict(extra="forbid")

    question: str
    graph: str
    answer: str
    confidence: float = Field(ge=0.0, le=1.0)
    reasoning: Reasoning
    sources: list[str]
    source_nodes: list[AnswerSource] = Field(
        default_factory=list[AnswerSource],
        description="The sources with their text and time, in the order of `sources`.",
    )
    confidence_factors: dict[str, float] = Field(
        default_factory=dict,
        description=(
            "What the confidence was computed from: match (question words found in the "
            "evidence, 0-1), margin over the runner-up, agreement (pieces of evidence that "
            "agree), entity_found and time_found (when asked), chain (WHY), found."
        ),
    )
    follow_ups: list[str] = Field(default_factory=list)
    intent: dict[str, Any] = Field(
        description="The classified intent (type, entities, timeframe, depths)."
    )
    context: LinearizedContext
    memories: list[RecalledMemory] = Field(
        default_factory=list[RecalledMemory],
        description="The stored memories that answer the question, best first (the evidence).",
    )
    nodes: list[ContextNode] = Field(description="The merged subgraph's top nodes, best first.")
    edges: list[ContextEdge] = Field(default_factory=list[ContextEdge])
    views: list[ViewSummary]
    fallback: str | None = Field(
        default=None, description="'semantic_only' when the graph views found too little."
    )
    degraded: bool = Field(description="True when a rule-based step stood in for the LLM.")
    degraded_reasons: list[str] = Field(default_factory=list)
    usage: UsageReport = Field(default_factory=UsageReport)
    timings_ms: dict[str, float] = Field(default_factory=dict)
    mode: str | None = Field(
        default=None,
        description="Query mode: execution (5 core), planning (5 + 15) or brainstorming (5 + 25).",
    )
    core: list[ContextNode] = Field(
        default_factory=list[ContextNode],
        description="Best nodes by hybrid score (0.4 vector + 0.4 graph + 0.2 causal).",
    )
    extended: list[ContextNode] = Field(
        default_factory=list[ContextNode], description="Further nodes within the mode's budget."
    )
    packed: PackedEvidence | None = Field(
        default=None,
        description=(
            "With max_tokens: the memories and nodes were packed into that many tokens, best "
            "evidence first; what did not fit is listed here."
        ),
    )
    ranking: RankingReport | None = Field(
        default=None, description="How the hybrid ranking filtered the candidates."
    )
    truncated: bool = Field(
        default=False,
        description="True when parts were left out to keep the answer within max_tokens.",
    )
    omitted: list[str] = Field(
        default_factory=list[str],
        description="What was left out or cut for max_tokens, in that order.",
    )


class CausalPathProbability(BaseModel):
    """One chain from cause to effect and the product of its link confidences."""

    model_config = ConfigDict(extra="forbid")

    nodes: list[str]
    probability: float = Field(ge=0.0, le=1.0)


class CausalProbabilityResult(BaseModel):
    """P(cause leads to effect) under a noisy-OR model over the causal graph."""

    model_config = ConfigDict(extra="forbid")

    cause: str
    effect: str
    cause_uuid: str
    effect_uuid: str
    probability: float = Field(ge=0.0, le=1.0)
    model: str = Field(description="The model: 'noisy-OR over independent links'.")
    method: Literal["exact", "monte_carlo", "trivial"] = Field(
        description="exact (all link subsets, factored), monte_carlo (sampled) or trivial."
    )
    exact: bool
    relevant_links: int = Field(description="Links lying on some cause -> effect path.")
    samples: int = Field(default=0, description="Monte Carlo draws (0 when exact).")
    error_bound: float = Field(
        default=0.0, description="Half-width of the 95% interval of a sampled estimate."
    )
    truncated: bool = Field(
        description="True when the link search hit its cap: the value is then a lower bound."
    )
    paths: list[CausalPathProbability] = Field(default_factory=list[CausalPathProbability])
    explanation: str


class RememberResult(BaseModel):
    """What remember stored: every node created or reused, and facts it invalidated."""

    model_config = ConfigDict(extra="forbid")

    graph: str
    memory_uuid: str
    created: bool = Field(description="False when the same content was already remembered.")
    category: str
    entities: list[WrittenNode] = Field(default_factory=list[WrittenNode])
    relations: list[str] = Field(default_factory=list)
    events: list[WrittenNode] = Field(default_factory=list[WrittenNode])
    facts: list[WrittenNode] = Field(default_factory=list[WrittenNode])
    invalidated_facts: list[WrittenNode] = Field(default_factory=list[WrittenNode])
    causal_links: list[str] = Field(default_factory=list)
    concepts: list[WrittenNode] = Field(default_factory=list[WrittenNode])
    degraded: bool = False
    degraded_reasons: list[str] = Field(default_factory=list)
    usage: UsageReport = Field(default_factory=UsageReport)
    timings_ms: dict[str, float] = Field(default_factory=dict)
