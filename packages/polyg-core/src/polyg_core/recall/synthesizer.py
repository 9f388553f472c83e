"""Step 7 of MAGMA: the answer — written by an LLM, or extracted from the subgraph without one.

Both paths answer the same way for a question type (see `polyg_core.recall.answer.extractive`),
and both report a confidence computed from the evidence (`polyg_core.recall.answer.confidence`):
the LLM's own figure can lower it, never raise it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from polyg_shared.intents import Intent, IntentType
from polyg_shared.retrieval import LinearizedContext, MergedSubgraph, Synthesis

from polyg_core.errors import ProviderError
from polyg_core.providers.llm.base import LLM, Usage
from polyg_core.recall.answer.calibration import calibrated_confidence
from polyg_core.recall.answer.calibration_features import memory_lead, weekday_day_answer
from polyg_core.recall.answer.confidence import factors_of
from polyg_core.recall.answer.extractive import Answer, extractive_answer
from polyg_core.recall.answer.shapes import asks_previous

logger = logging.getLogger(__name__)

SYSTEM_PROMPT = """You answer questions about an agent's memory using ONLY the context given.
The context lists nodes of four graphs (entity, temporal, causal, semantic) and the edges
between them. Causal edges carry a confidence; a chain's confidence is the product of its hops.
Facts show their validity interval; only facts valid "→ now" are current.
Answer the question that was asked, in the shape its type calls for (the user message says
which), in one to three sentences.
Reply with JSON matching the schema: answer, confidence (0-1: how sure the context makes
you; for a causal answer, at most the chain's confidence), reasoning.causal_chain
(cause, effect, confidence per hop, causes first), reasoning.temporal_context (dated events in
order), reasoning.entities_involved, reasoning.semantic_matches, sources (uuids of the nodes
you used, from the context's ids), follow_ups (up to three useful next questions).
If the context does not contain the answer, say so and give a low confidence."""

SHAPES: dict[IntentType, str] = {
    IntentType.WHEN: (
        "WHEN: answer with the date (and time when known) of the asked event first, then "
        "a few words naming the event; a relative phrase in the evidence ('yesterday', "
        "'last week') is resolved against the time that evidence was stated. 'How long' "
        "asks for the stated duration. For 'what happened in/to/during ...' list those "
        "events in time order."
    ),
    IntentType.WHO: (
        "WHO: answer about the entity the question names, with its facts and relations "
        "that answer it; facts valid now unless the question asks about another time."
    ),
    IntentType.WHAT: (
        "WHAT: answer about the entity the question names, with its facts and relations "
        "that answer it; facts valid now unless the question asks about another time, "
        "then the facts valid then. When a short phrase or a number answers it, give that "
        "phrase first."
    ),
    IntentType.WHY: (
        "WHY: give the causal chain from the root cause forwards to the asked effect "
        "('A led to B, which led to C'), with the chain's confidence."
    ),
    IntentType.EXPLORE: "EXPLORE: summarise the most relevant memories in a few sentences.",
}


def answer_shape(intent: Intent) -> str:
    """The instruction for the LLM on how an answer of this question type looks."""
    shape = SHAPES[intent.type]
    if intent.timeframe is not None and intent.timeframe.phrase:
        shape += f" The question asks about {intent.timeframe.phrase!r}"
        if intent.timeframe.start or intent.timeframe.end:
            lo = intent.timeframe.start.isoformat() if intent.timeframe.start else "…"
            hi = intent.timeframe.end.isoformat() if intent.timeframe.end else "…"
            shape += f" ({lo} to {hi})"
        shape += ": use what held then."
    if intent.entities:
        shape += " Asked about: " + ", ".join(intent.entities) + "."
    return shape


def rests_on_superseded(
    question: str, intent: Intent, sub: MergedSubgraph, sources: list[str]
) -> bool:
    """Whether the answer's first source is a memory that a later one changed
    (`superseded_by`, marked by recall for a question about now) while the question asks
    about now, not about a past time or the value before: the answer quotes what no
    longer holds. Not for WHEN or WHY: when something happened, or what caused it, stays
    true after a later memory changes the value."""
    if intent.type in (IntentType.WHEN, IntentType.WHY):
        return False
    if not sources or intent.timeframe is not None or asks_previous(question):
        return False
    first = next((n for n in sub.nodes if n.uuid == sources[0]), None)
    return (
        first is not None
        and first.label == "S_Memory"
        and bool(first.attributes.get("superseded_by"))
    )


@dataclass
class SynthesisOutcome:
    """The synthesis, whether it is the degraded (extractive) one, and what it cost."""

    synthesis: Synthesis
    degraded: bool = False
    reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    factors: dict[str, float] = field(default_factory=dict[str, float])


def synthesize_extractive(
    question: str, intent: Intent, sub: MergedSubgraph, now_ms: int | None = None
) -> tuple[Synthesis, dict[str, float]]:
    """Answer from the merged subgraph alone (see `polyg_core.recall.answer.extractive`), with the
    confidence its evidence gives and those evidence factors."""
    answer: Answer = extractive_answer(question, intent, sub, now_ms)
    if rests_on_superseded(question, intent, sub, answer.sources):
        answer.evidence.stale = True
    if weekday_day_answer(question, intent, sub, answer):
        answer.evidence.weekday = True
    reasoning = answer.reasoning
    semantic = [n.text for n in sub.nodes if n.graph == "semantic"][:5]
    if semantic and not reasoning.semantic_matches:
        reasoning = reasoning.model_copy(update={"semantic_matches": semantic})
    follow = [f"What else is connected to {n.text}?" for n in sub.nodes if n.label == "E_Entity"][
        :2
    ]
    synthesis = Synthesis(
        answer=answer.text,
        confidence=calibrated_confidence(answer.evidence),
        reasoning=reasoning,
        sources=list(dict.fromkeys(answer.sources)),
        follow_ups=follow,
    )
    factors = factors_of(answer.evidence)
    if (lead := memory_lead(sub)) is not None:
        factors["lead"] = lead
    return synthesis, factors


@dataclass
class Synthesizer:
    """LLM synthesis when an LLM is configured, the extractive answer otherwise or on failure."""

    llm: LLM | None = None
    max_tokens: int = 1000

    async def synthesize(
        self,
        question: str,
        intent: Intent,
        sub: MergedSubgraph,
        context: LinearizedContext,
        now_ms: int | None = None,
    ) -> SynthesisOutcome:
        extractive, factors = synthesize_extractive(question, intent, sub, now_ms)
        if self.llm is None:
            return SynthesisOutcome(
                extractive,
                degraded=True,
                reason=(
                    "no LLM configured (LLM_MODEL unset and no client model lent through "
                    "MCP sampling)"
                ),
                factors=factors,
            )
        ids = "\n".join(
            f"- {n.uuid}: {n.text}" for n in sub.nodes if n.uuid in set(context.node_ids)
        )
        user = (
            f"Question: {question}\nQuestion type: {intent.type.value}\n"
            f"Answer shape: {answer_shape(intent)}\n\nContext:\n{context.text}\n\n"
            f"Node ids:\n{ids}"
        )
        try:
            result = await self.llm.complete_json(
                system=SYSTEM_PROMPT, user=user, schema=Synthesis, max_tokens=self.max_tokens
            )
        except ProviderError as exc:
            logger.warning("synthesis fell back to the extractive answer: %s", exc)
            return SynthesisOutcome(
                extractive, degraded=True, reason=f"LLM synthesis failed: {exc}", factors=factors
            )
        known = {n.uuid for n in sub.nodes}
        value = result.value
        sources = [s for s in value.sources if s in known] or extractive.sources
        # The evidence bounds the confidence; the model may only say it is less sure.
        stated = max(0.0, min(1.0, value.confidence))
        synthesis = value.model_copy(
            update={"sources": sources, "confidence": min(stated, extractive.confidence)}
        )
        return SynthesisOutcome(
            synthesis, usage=result.usage, factors={**factors, "llm_stated": round(stated, 3)}
        )
