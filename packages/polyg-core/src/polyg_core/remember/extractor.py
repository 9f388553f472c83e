"""Memory extraction for `remember`: entities, events, facts, causal links and concepts in text.

`RuleExtractor` needs no model; `LLMExtractor` asks one and checks its answer;
`extract()` uses the LLM when given and falls back to the rules, saying so.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from polyg_shared.intents import (
    ExtractedCausalLink,
    ExtractedConcept,
    ExtractedEntity,
    ExtractedEvent,
    ExtractedFact,
    ExtractedRelation,
    Extraction,
)
from polyg_shared.nodes import MemoryCategory
from polyg_shared.timeutil import parse_timestamp
from polyg_shared.types import MAX_CONTENT, MAX_NAME, MAX_TEXT
from pydantic import BaseModel, ConfigDict, ValidationError

from polyg_core.errors import ProviderError
from polyg_core.providers.llm.base import LLM, Usage
from polyg_core.remember.extract_rules import (
    CHAINED_CONFIDENCE,
    EXPLICIT_CONFIDENCE,
    category_of,
    causal_spans,
    concepts_of,
    fact_spans,
    is_event_sentence,
    is_name,
    sentence_spans,
    settled_facts,
    strip_times,
)
from polyg_core.remember.extraction_prompt import EXTRACTOR_SYSTEM, extractor_user
from polyg_core.remember.membership import membership_spans
from polyg_core.text.names import (
    EntityMatcher,
    KnownEntities,
    NameMention,
    find_names,
    guess_entity_type,
)
from polyg_core.text.normalize import normalize_name
from polyg_core.text.timeparse import match_times, parse_timeframe

logger = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_EXTRACTOR_MAX_TOKENS",
    "ExtractOutcome",
    "ExtractionDraft",
    "LLMExtractor",
    "RuleExtractor",
    "check_extraction",
    "extract",
]

DEFAULT_EXTRACTOR_MAX_TOKENS = 2000
UNKNOWN_START = datetime(1970, 1, 1, tzinfo=UTC)
"""Marks a fact whose start the text does not give ("moved from X" ends one): `remember`
ends the stored fact it names instead of writing it (see `Memory._end_stated_fact`)."""
_MAX_LLM_TEXT = 24_000  # characters of a note sent to the LLM


def _clip(text: str, limit: int) -> str:
    return " ".join(text.split())[:limit].strip()


def _matcher(known: KnownEntities | EntityMatcher) -> EntityMatcher:
    return known if isinstance(known, EntityMatcher) else EntityMatcher.from_known(known)


def _unique_names(names: list[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for raw in names:
        name = _clip(raw, MAX_NAME)
        key = normalize_name(name)
        if name and key and key not in seen:
            seen.add(key)
            out.append(name)
    return out


@dataclass(frozen=True)
class RuleExtractor:
    """Extracts memory from text with patterns; no LLM. Never raises on any text.

    Entities are known names (any spelling) and name-like words. Every sentence
    with a time or an event verb becomes an event, at its own time, else at the
    last time named before it, else at the reference time. "X works on / owns /
    is Y" gives facts (and relations when Y is an entity); moves, joins,
    departures, work and home ("moved from A to B", "joined", "left", "works at",
    "lives in") give member_of / works_at / works_on / lives_in facts that start
    or end at the clause's time (see `membership`). because / caused /
    led to / due to / resulted in / so / therefore give causal links (0.7; "so"
    0.6); a "because" cause that the previous sentence's event seems to explain
    (they share an entity) is chained to it at 0.5.
    """

    max_concepts: int = 5

    def extract(
        self,
        text: str,
        known_entities: KnownEntities | EntityMatcher = (),
        reference: datetime | None = None,
    ) -> Extraction:
        """Extract from one note against the reference time (now, UTC, when not given)."""
        matcher = _matcher(known_entities)
        ref = (reference or datetime.now(UTC)).astimezone(UTC)
        text = text[:MAX_CONTENT]
        times = match_times(text, ref)
        mentions = [m for m in find_names(text, matcher) if is_name(m, times)]
        speaker = next(
            (m.name for m in mentions if m.span[0] == 0 and text[m.span[1] :].startswith(":")),
            None,
        )
        entities: dict[str, ExtractedEntity] = {}
        for m in mentions:
            name = _clip(m.name, MAX_NAME)
            entities.setdefault(
                normalize_name(name), ExtractedEntity(name=name, entity_type=m.entity_type)
            )

        events: list[ExtractedEvent] = []
        facts: list[ExtractedFact] = []
        relations: dict[tuple[str, str, str], ExtractedRelation] = {}
        links: list[ExtractedCausalLink] = []
        context_time: datetime | None = None
        previous: tuple[str, list[NameMention], bool] | None = None
        spans = sentence_spans(text)
        for start, end in spans:
            sentence = text[start:end]
            local = [
                NameMention(m.name, (m.span[0] - start, m.span[1] - start), m.known, m.entity_type)
                for m in mentions
                if start <= m.span[0] and m.span[1] <= end
            ]
            own_times = [t for t in times if start <= t.span[0] and t.span[1] <= end]
            when = own_times[0].start if own_times else (context_time or ref)
            if own_times:
                context_time = own_times[-1].start
            names = _unique_names([m.name for m in local])
            event_like = bool(own_times) or is_event_sentence(sentence)
            description = _clip(sentence.rstrip(" .!?;:"), MAX_TEXT)
            if event_like and description:
                events.append(
                    ExtractedEvent(description=description, occurred_at=when, entities=names)
                )
            for fact in fact_spans(sentence, local):
                facts.append(
                    ExtractedFact(
                        subject=_clip(fact.subject, MAX_NAME),
                        predicate=fact.predicate,
                        object=_clip(fact.object, MAX_TEXT),
                        valid_from=when,
                    )
                )
                if fact.target and normalize_name(fact.target) != normalize_name(fact.subject):
                    key = (fact.subject, fact.target, fact.predicate)
                    relations[key] = ExtractedRelation(
                        source=_clip(fact.subject, MAX_NAME),
                        target=_clip(fact.target, MAX_NAME),
                        relationship_type=fact.predicate,
                    )
            for ms in membership_spans(sentence, local, speaker):
                subject, obj = _clip(ms.subject, MAX_NAME), _clip(ms.object, MAX_NAME)
                if normalize_name(subject) == normalize_name(obj):
                    continue
                at = next((t.start for t in own_times if t.span[0] - start >= ms.at), when)
                facts.append(
                    ExtractedFact(
                        subject=subject,
                        predicate=ms.predicate,
                        object=obj,
                        valid_from=UNKNOWN_START if ms.ends else at,
                        valid_to=at if ms.ends and at > UNKNOWN_START else None,
                    )
                )
                # The relation carries the membership's date: a join or move starts it
                # then (point-in-time questions read it). A departure writes no relation
                # (its fact ends then): the labelled extraction set counts an ended
                # relation as one the note does not state.
                if not ms.ends:
                    relations[(subject, obj, ms.predicate)] = ExtractedRelation(
                        source=subject, target=obj, relationship_type=ms.predicate, valid_from=at
                    )
            for span in causal_spans(sentence, previous[0] if previous else None):
                cause = _clip(strip_times(span.cause, own_times), MAX_TEXT)
                effect = _clip(strip_times(span.effect, own_times), MAX_TEXT)
                if not cause or not effect or normalize_name(cause) == normalize_name(effect):
                    continue
                involved = _unique_names(
                    [m.name for m in local if m.name.lower() in span.evidence.lower()]
                )
                if span.explainable and previous is not None and previous[2]:
                    prev_text, prev_mentions, _ = previous
                    shared = {normalize_name(m.name) for m in prev_mentions} & {
                        normalize_name(n) for n in _unique_names([m.name for m in local])
                    }
                    prev_cause = _clip(prev_text.rstrip(" .!?;:"), MAX_TEXT)
                    if (
                        shared
                        and prev_cause
                        and any(
                            normalize_name(m.name) in shared and m.name.lower() in cause.lower()
                            for m in local
                        )
                    ):
                        links.append(
                            ExtractedCausalLink(
                                cause=prev_cause,
                                effect=cause,
                                confidence=CHAINED_CONFIDENCE,
                                evidence=_clip(f"{prev_text} {sentence}", MAX_TEXT),
                                entities=_unique_names(
                                    [
                                        m.name
                                        for m in prev_mentions
                                        if normalize_name(m.name) in shared
                                    ]
                                    + [m.name for m in prev_mentions]
                                ),
                            )
                        )
                links.append(
                    ExtractedCausalLink(
                        cause=cause,
                        effect=effect,
                        confidence=span.confidence,
                        evidence=_clip(span.evidence, MAX_TEXT),
                        entities=involved,
                    )
                )
            previous = (sentence, local, event_like)
        facts = settled_facts(facts)
        concepts = [
            ExtractedConcept(name=_clip(name, MAX_NAME), description=_clip(desc, MAX_TEXT) or None)
            for name, desc in concepts_of(text, mentions, times, self.max_concepts)
        ]
        return Extraction(
            entities=list(entities.values()),
            relations=list(relations.values()),
            events=events,
            facts=facts,
            causal_links=links,
            concepts=concepts,
            category=category_of(text, [text[s:e] for s, e in spans], bool(events)),
        )


# --- the LLM's answer, before checking ----------------------------------------------------------


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class DraftEntity(_Lenient):
    name: str | None = None
    entity_type: str | None = None


class DraftRelation(_Lenient):
    source: str | None = None
    target: str | None = None
    relationship_type: str | None = None
    valid_from: str | None = None
    valid_to: str | None = None


class DraftEvent(_Lenient):
    description: str | None = None
    occurred_at: str | None = None
    entities: list[str] | None = None


class DraftFact(_Lenient):
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    valid_from: str | None = None
    valid_to: str | None = None
    cardinality: str | None = None


def _cardinality(value: str | None) -> Literal["single", "multi"] | None:
    """A model's cardinality when it is one of the two kinds; anything else is unsaid."""
    kind = (value or "").strip().lower()
    if kind == "single":
        return "single"
    return "multi" if kind == "multi" else None


class DraftCausalLink(_Lenient):
    cause: str | None = None
    effect: str | None = None
    confidence: float | None = None
    evidence: str | None = None
    entities: list[str] | None = None


class DraftConcept(_Lenient):
    name: str | None = None
    description: str | None = None


class ExtractionDraft(_Lenient):
    """The extractor's LLM output before checking: lenient, every field optional."""

    entities: list[DraftEntity] | None = None
    relations: list[DraftRelation] | None = None
    events: list[DraftEvent] | None = None
    facts: list[DraftFact] | None = None
    causal_links: list[DraftCausalLink] | None = None
    concepts: list[DraftConcept] | None = None
    category: str | None = None


def _relation_dates(
    r: DraftRelation, reference: datetime
) -> tuple[datetime | None, datetime | None]:
    """The dates the note gives a relation ("joined in June", "left in May"); an end not
    after the start is dropped, as for facts."""
    valid_from, valid_to = _when(r.valid_from, reference), _when(r.valid_to, reference)
    if valid_from is not None and valid_to is not None and valid_to <= valid_from:
        valid_to = None
    return valid_from, valid_to


def _when(value: str | None, reference: datetime) -> datetime | None:
    if not value or not value.strip():
        return None
    try:
        return parse_timestamp(value)
    except ValueError:
        frame = parse_timeframe(value, reference)
        return frame.start if frame is not None else None


def check_extraction(
    draft: ExtractionDraft, text: str, matcher: EntityMatcher, reference: datetime
) -> Extraction:
    """Turn an LLM draft into a valid Extraction.

    Items missing a required part are dropped; names are mapped to known names
    (any spelling); times are parsed (ISO, else read as a phrase against the
    reference, else the reference; a fact with an end and no start starts at
    `UNKNOWN_START`); confidences are clamped to 0..1 (0.7 when
    missing); every entity a relation, event or causal link names is listed;
    an unknown category is replaced by the rule extractor's.
    """
    ref = reference.astimezone(UTC)

    def canon(raw: str | None) -> str:
        name = _clip(raw or "", MAX_NAME)
        return matcher.by_key.get(normalize_name(name), name)

    entities: dict[str, ExtractedEntity] = {}

    def add_entity(name: str, entity_type: str | None = None) -> None:
        key = normalize_name(name)
        if not name or not key or key in entities:
            return
        etype = _clip((entity_type or "").lower(), MAX_NAME) or guess_entity_type(name)
        entities[key] = ExtractedEntity(name=name, entity_type=etype)

    for e in draft.entities or []:
        add_entity(canon(e.name), e.entity_type)
    relations: list[ExtractedRelation] = []
    for r in draft.relations or []:
        source, target = canon(r.source), canon(r.target)
        rel_type = _clip(r.relationship_type or "", MAX_NAME)
        if source and target and rel_type and normalize_name(source) and normalize_name(target):
            add_entity(source)
            add_entity(target)
            valid_from, valid_to = _relation_dates(r, ref)
            relations.append(
                ExtractedRelation(
                    source=source,
                    target=target,
                    relationship_type=rel_type,
                    valid_from=valid_from,
                    valid_to=valid_to,
                )
            )
    events: list[ExtractedEvent] = []
    for ev in draft.events or []:
        description = _clip(ev.description or "", MAX_TEXT)
        if not description:
            continue
        names = _unique_names([canon(n) for n in ev.entities or []])
        for n in names:
            add_entity(n)
        at = _when(ev.occurred_at, ref) or ref
        events.append(ExtractedEvent(description=description, occurred_at=at, entities=names))
    facts: list[ExtractedFact] = []
    for f in draft.facts or []:
        subject, predicate = canon(f.subject), _clip(f.predicate or "", MAX_NAME)
        obj = _clip(f.object or "", MAX_TEXT)
        if not (subject and predicate and obj):
            continue
        valid_to = _when(f.valid_to, ref)
        # A fact the note says ended, without saying since when ("moved from the payments
        # team"), has an unknown start, as on the rules path.
        default_from = UNKNOWN_START if valid_to is not None and not f.valid_from else ref
        valid_from = _when(f.valid_from, ref) or default_from
        if valid_to is not None and valid_to <= valid_from:
            valid_to = None
        facts.append(
            ExtractedFact(
                subject=subject,
                predicate=predicate,
                object=obj,
                valid_from=valid_from,
                valid_to=valid_to,
                cardinality=_cardinality(f.cardinality),
            )
        )
    links: list[ExtractedCausalLink] = []
    for c in draft.causal_links or []:
        cause, effect = _clip(c.cause or "", MAX_TEXT), _clip(c.effect or "", MAX_TEXT)
        if not cause or not effect:
            continue
        confidence = c.confidence
        if confidence is None or math.isnan(confidence):
            confidence = EXPLICIT_CONFIDENCE
        names = _unique_names([canon(n) for n in c.entities or []])
        for n in names:
            add_entity(n)
        links.append(
            ExtractedCausalLink(
                cause=cause,
                effect=effect,
                confidence=max(0.0, min(1.0, confidence)),
                evidence=_clip(c.evidence or "", MAX_TEXT) or None,
                entities=names,
            )
        )
    concepts: list[ExtractedConcept] = []
    for k in draft.concepts or []:
        name = _clip(k.name or "", MAX_NAME)
        if name:
            concepts.append(
                ExtractedConcept(
                    name=name, description=_clip(k.description or "", MAX_TEXT) or None
                )
            )
    try:
        category = MemoryCategory((draft.category or "").strip().lower())
    except ValueError:
        category = RuleExtractor().extract(text, matcher, ref).category
    return Extraction(
        entities=list(entities.values()),
        relations=relations,
        events=events,
        facts=facts,
        causal_links=links,
        concepts=concepts,
        category=category,
    )


@dataclass(frozen=True)
class ExtractOutcome:
    """An extraction, whether the rules made it instead of the LLM, and what it cost."""

    extraction: Extraction
    degraded: bool = False
    reason: str | None = None
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True)
class LLMExtractor:
    """Extracts with an LLM; its answer is checked by `check_extraction`."""

    llm: LLM
    max_tokens: int = DEFAULT_EXTRACTOR_MAX_TOKENS

    async def extract(
        self,
        text: str,
        known_entities: KnownEntities | EntityMatcher = (),
        reference: datetime | None = None,
    ) -> tuple[Extraction, Usage]:
        """Extract with the LLM.

        Raises:
            ProviderError: the LLM failed after its retries.
        """
        ref = (reference or datetime.now(UTC)).astimezone(UTC)
        matcher = _matcher(known_entities)
        result = await self.llm.complete_json(
            system=EXTRACTOR_SYSTEM,
            user=extractor_user(text[:_MAX_LLM_TEXT], list(matcher.by_key.values()), ref),
            schema=ExtractionDraft,
            max_tokens=self.max_tokens,
        )
        return check_extraction(result.value, text, matcher, ref), result.usage


async def extract(
    text: str,
    known_entities: KnownEntities = (),
    reference: datetime | None = None,
    *,
    llm: LLM | None = None,
    max_tokens: int = DEFAULT_EXTRACTOR_MAX_TOKENS,
) -> ExtractOutcome:
    """Extract memory from text with the LLM when one is given, else (or when it fails) with rules.

    Args:
        text: the note to remember.
        known_entities: (name, normalized key) pairs or names of entities in the memory.
        reference: the time relative phrases are resolved against (aware; now in UTC if None).
        llm: the model to ask; None uses the rule extractor and marks the outcome degraded.
        max_tokens: the LLM's output budget.

    Returns:
        The extraction; `degraded` is True with a `reason` whenever the rules answered.
    """
    ref = (reference or datetime.now(UTC)).astimezone(UTC)
    matcher = EntityMatcher.from_known(known_entities)
    if llm is None:
        return ExtractOutcome(
            RuleExtractor().extract(text, matcher, ref),
            degraded=True,
            reason=(
                "no LLM configured; set LLM_MODEL, or use an MCP client that supports "
                "sampling, to extract with one"
            ),
        )
    try:
        extraction, usage = await LLMExtractor(llm, max_tokens).extract(text, matcher, ref)
    except ProviderError as exc:
        logger.warning("LLM extraction failed, using rules: %s", exc)
        return ExtractOutcome(
            RuleExtractor().extract(text, matcher, ref),
            degraded=True,
            reason=f"LLM extraction failed ({exc}); used rules",
        )
    except ValidationError as exc:
        # The draft passed the LLM schema but holds values the graph models refuse
        # (e.g. a NUL in a name): the rules answer instead of the error escaping.
        logger.warning("LLM extraction unusable, using rules: %s", exc)
        return ExtractOutcome(
            RuleExtractor().extract(text, matcher, ref),
            degraded=True,
            reason=f"LLM extraction had invalid values ({exc.error_count()} errors); used rules",
        )
    return ExtractOutcome(extraction, usage=usage)
