"""Step 7 of MAGMA: the answer — written by an LLM, or extracted from the subgraph without one."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from polyg_core.errors import ProviderError
from polyg_core.providers.llm.base import LLM, Usage
from polyg_core.text import normalize_name
from polyg_shared.intents import Intent, IntentType
from polyg_shared.retrieval import (
    CausalStep,
    ContextEdge,
    ContextNode,
    LinearizedContext,
    MergedSubgraph,
    Reasoning,
    Synthesis,
)

logger = logging.getLogger(__name__)

SYSTEM_PROMPT = """You answer questions about an agent's memory using ONLY the context given.
The context lists nodes of four graphs (entity, temporal, causal, semantic) and the edges
between them. Causal edges carry a confidence; a chain's confidence is the product of its hops.
Facts show their validity interval; only facts valid "→ now" are current.
Reply with JSON matching the schema: answer (a direct answer in one to three sentences),
confidence (0-1; for a causal answer, the chain's confidence), reasoning.causal_chain
(cause, effect, confidence per hop, causes first), reasoning.temporal_context (dated events in
order), reasoning.entities_involved, reasoning.semantic_matches, sources (uuids of the nodes
you used, from the context's ids), follow_ups (up to three useful next questions).
If the context does not contain the answer, say so and give a low confidence."""


@dataclass
class SynthesisOutcome:
    """The synthesis, whether it is the degraded (extractive) one, and what it cost."""

    synthesis: Synthesis
    degraded: bool = False
    reason: str | None = None
    usage: Usage = field(default_factory=Usage)


def _fmt_time(node: ContextNode) -> str:
    iso = node.attributes.get("occurred_at_iso") or node.attributes.get("valid_from_iso")
    return str(iso)[:16].replace("T", " ") if iso else "undated"


def _best_chain(sub: MergedSubgraph) -> tuple[list[ContextNode], list[float]]:
    by_id = {n.uuid: n for n in sub.nodes}
    incoming: dict[str, list[ContextEdge]] = {}
    for e in sub.edges:
        if e.type == "C_CAUSES" and e.source in by_id and e.target in by_id:
            incoming.setdefault(e.target, []).append(e)
    effects = [n for n in sub.nodes if n.label == "C_Node" and n.uuid in incoming]
    if not effects:
        return [], []
    # The effect the question is about: the best-scored causal node that has causes.
    target = max(effects, key=lambda n: n.score)
    chain = [target]
    confidences: list[float] = []
    seen = {target.uuid}
    current = target.uuid
    while current in incoming:
        options = [e for e in incoming[current] if e.source not in seen]
        if not options:
            break
        edge = max(options, key=lambda e: e.confidence or 0.0)
        chain.append(by_id[edge.source])
        confidences.append(edge.confidence if edge.confidence is not None else 0.5)
        seen.add(edge.source)
        current = edge.source
    chain.reverse()
    confidences.reverse()
    return chain, confidences


def _focus_entity(intent: Intent, sub: MergedSubgraph) -> ContextNode | None:
    entities = [n for n in sub.nodes if n.label == "E_Entity"]
    if not entities:
        return None
    wanted = {normalize_name(e) for e in intent.entities}
    named = [n for n in entities if normalize_name(n.text) in wanted] or entities
    # Of several named entities, the question is about the one current facts describe
    # ("which Python version does orders-service run": orders-service, not Python).
    subjects: dict[str, int] = {}
    for n in sub.nodes:
        if n.label == "T_Fact" and n.attributes.get("valid_to") is None:
            key = normalize_name(str(n.attributes.get("subject", "")))
            subjects[key] = subjects.get(key, 0) + 1
    return max(named, key=lambda n: (subjects.get(normalize_name(n.text), 0), n.score))


def _why(sub: MergedSubgraph) -> tuple[str, float, Reasoning, list[str]]:
    chain, confs = _best_chain(sub)
    if not chain:
        causal = [n for n in sub.nodes if n.label == "C_Node"]
        if causal:
            top = causal[0]
            return (
                f"No recorded cause leads to this; the closest causal record is: {top.text}.",
                min(0.3, top.score),
                Reasoning(),
                [top.uuid],
            )
        return ("No causal chain in memory explains this.", 0.0, Reasoning(), [])
    confidence = 1.0
    for c in confs:
        confidence *= c
    steps = [
        CausalStep(cause=chain[i].text, effect=chain[i + 1].text, confidence=confs[i])
        for i in range(len(confs))
    ]
    path = chain[0].text + "".join(
        f" → ({confs[i]:.2f}) {chain[i + 1].text}" for i in range(len(confs))
    )
    answer = (
        f"{chain[-1].text} traces back to {chain[0].text}: {path}. "
        f"Chain confidence {confidence:.3f} (product of the hop confidences)."
    )
    entities = [n.text for n in sub.nodes if n.label == "E_Entity"][:5]
    return (
        answer,
        confidence,
        Reasoning(causal_chain=steps, entities_involved=entities),
        [n.uuid for n in chain],
    )


def _when(sub: MergedSubgraph) -> tuple[str, float, Reasoning, list[str]]:
    # Events answer "when"; facts only when no event is known. The best-scored ones are
    # kept, then shown in time order.
    events = [n for n in sub.nodes if n.label == "T_Event"] or [
        n for n in sub.nodes if n.label == "T_Fact"
    ]
    events = sorted(events, key=lambda n: -n.score)[:12]
    events.sort(key=lambda n: n.attributes.get("occurred_at", n.attributes.get("valid_from", 0)))
    if not events:
        return ("Nothing in memory is dated for this question.", 0.0, Reasoning(), [])
    lines = [f"{_fmt_time(n)}: {n.text}" for n in events[:12]]
    answer = "Timeline: " + "; ".join(lines) + "."
    confidence = min(1.0, sum(n.score for n in events[:5]) / min(len(events), 5))
    return answer, confidence, Reasoning(temporal_context=lines), [n.uuid for n in events[:12]]


def _who_what(intent: Intent, sub: MergedSubgraph) -> tuple[str, float, Reasoning, list[str]]:
    focus = _focus_entity(intent, sub)
    if focus is None:
        return _explore(sub)
    key = normalize_name(focus.text)
    names = {n.uuid: n.text for n in sub.nodes}
    statements: list[str] = []
    sources = [focus.uuid]
    facts = [
        n
        for n in sub.nodes
        if n.label == "T_Fact"
        and key
        in (
            normalize_name(str(n.attributes.get("subject", ""))),
            normalize_name(str(n.attributes.get("object", ""))),
        )
        and n.attributes.get("valid_to") is None
    ]
    for f in sorted(facts, key=lambda n: -n.score):
        since = f.attributes.get("valid_from_iso")
        statements.append(f"{f.text}" + (f" (since {str(since)[:10]})" if since else ""))
        sources.append(f.uuid)
    for e in sub.edges:
        if e.type == "E_RELATES" and focus.uuid in (e.source, e.target):
            statements.append(f"{names[e.source]} {e.label or 'relates to'} {names[e.target]}")
            sources.append(e.target if e.source == focus.uuid else e.source)
    entity_type = focus.attributes.get("entity_type")
    head = f"{focus.text}" + (
        f" ({entity_type})" if entity_type and entity_type != "entity" else ""
    )
    if not statements:
        related = [n.text for n in sub.nodes if n.uuid != focus.uuid][:5]
        answer = f"{head}: no current facts or relations recorded" + (
            f"; related: {', '.join(related)}." if related else "."
        )
        return answer, min(0.4, focus.score), Reasoning(entities_involved=[focus.text]), sources
    answer = f"{head}: " + "; ".join(statements[:8]) + "."
    confidence = min(1.0, max(0.5, focus.score))
    entities = [focus.text, *[names[s] for s in sources[1:] if s in names]][:8]
    return answer, confidence, Reasoning(entities_involved=entities), sources


def _explore(sub: MergedSubgraph) -> tuple[str, float, Reasoning, list[str]]:
    top = sub.nodes[:8]
    if not top:
        return ("Memory has nothing on this yet.", 0.0, Reasoning(), [])
    answer = "Related memory: " + "; ".join(f"{n.text} [{n.graph}]" for n in top) + "."
    confidence = min(1.0, top[0].score)
    return (
        answer,
        confidence,
        Reasoning(semantic_matches=[n.text for n in top if n.graph == "semantic"]),
        [n.uuid for n in top],
    )


def synthesize_extractive(intent: Intent, sub: MergedSubgraph) -> Synthesis:
    """Answer from the merged subgraph alone: the causal chain with its confidences for WHY,
    the timeline for WHEN, the entity with its current facts and relations for WHO/WHAT."""
    if intent.type == IntentType.WHY:
        answer, confidence, reasoning, sources = _why(sub)
    elif intent.type == IntentType.WHEN:
        answer, confidence, reasoning, sources = _when(sub)
    elif intent.type in (IntentType.WHO, IntentType.WHAT):
        answer, confidence, reasoning, sources = _who_what(intent, sub)
    else:
        answer, confidence, reasoning, sources = _explore(sub)
    semantic = [n.text for n in sub.nodes if n.graph == "semantic"][:5]
    if semantic and not reasoning.semantic_matches:
        reasoning = reasoning.model_copy(update={"semantic_matches": semantic})
    follow = [f"What else is connected to {n.text}?" for n in sub.nodes if n.label == "E_Entity"][
        :2
    ]
    return Synthesis(
        answer=answer,
        confidence=max(0.0, min(1.0, confidence)),
        reasoning=reasoning,
        sources=list(dict.fromkeys(sources)),
        follow_ups=follow,
    )


@dataclass
class Synthesizer:
    """LLM synthesis when an LLM is configured, the extractive answer otherwise or on failure."""

    llm: LLM | None = None
    max_tokens: int = 1000

    async def synthesize(
        self, question: str, intent: Intent, sub: MergedSubgraph, context: LinearizedContext
    ) -> SynthesisOutcome:
        extractive = synthesize_extractive(intent, sub)
        if self.llm is None:
            return SynthesisOutcome(
                extractive, degraded=True, reason="no LLM configured (LLM_MODEL unset)"
            )
        ids = "\n".join(
            f"- {n.uuid}: {n.text}" for n in sub.nodes if n.uuid in set(context.node_ids)
        )
        user = (
            f"Question: {question}\nQuestion type: {intent.type.value}\n\nContext:\n{context.text}\n\n"
            f"Node ids:\n{ids}"
        )
        try:
            result = await self.llm.complete_json(
                system=SYSTEM_PROMPT, user=user, schema=Synthesis, max_tokens=self.max_tokens
            )
        except ProviderError as exc:
            logger.warning("synthesis fell back to the extractive answer: %s", exc)
            return SynthesisOutcome(
                extractive, degraded=True, reason=f"LLM synthesis failed: {exc}"
            )
        known = {n.uuid for n in sub.nodes}
        value = result.value
        sources = [s for s in value.sources if s in known] or extractive.sources
        synthesis = value.model_copy(
            update={"sources": sources, "confidence": max(0.0, min(1.0, value.confidence))}
        )
        return SynthesisOutcome(synthesis, usage=result.usage)
