"""Memory extraction for `remember`: entities, events, facts, causal links and concepts in text.

`RuleExtractor` needs no model; `LLMExtractor` asks one and checks its answer;
`extract()` uses the LLM when given and falls back to the rules, saying so.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal, TypeVar

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
from polyg_shared.types import MAX_NAME, MAX_TEXT
from pydantic import BaseModel, ConfigDict, ValidationError

from polyg_core.providers.llm.base import LLM, Usage
from polyg_core.providers.llm.fallback import StepWork, ask_or_rules
from polyg_core.remember.extract_rules import (
    EXPLICIT_CONFIDENCE,
)
from polyg_core.remember.extraction_prompt import EXTRACTOR_SYSTEM, extractor_user
from polyg_core.remember.rule_extractor import (
    UNKNOWN_START,
    RuleExtractor,
    as_matcher,
    clip,
    unique_names,
)
from polyg_core.text.names import (
    EntityMatcher,
    KnownEntities,
    guess_entity_type,
)
from polyg_core.text.normalize import normalize_name
from polyg_core.text.timeparse import parse_timeframe

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
_Draft = TypeVar("_Draft")
_Checked = TypeVar("_Checked")
_MAX_LLM_TEXT = 24_000  # characters of a note sent to the LLM


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
    check = _DraftCheck(matcher, reference.astimezone(UTC))
    for e in draft.entities or []:
        check.add_entity(check.canon(e.name), e.entity_type)
    relations = _kept(check.relation, draft.relations)
    events = _kept(check.event, draft.events)
    facts = _kept(check.fact, draft.facts)
    links = _kept(check.causal_link, draft.causal_links)
    return Extraction(
        entities=list(check.entities.values()),
        relations=relations,
        events=events,
        facts=facts,
        causal_links=links,
        concepts=_kept(_concept, draft.concepts),
        category=_category(draft.category, text, matcher, check.reference),
    )


def _kept(
    check: Callable[[_Draft], _Checked | None], drafts: list[_Draft] | None
) -> list[_Checked]:
    """The checked items of a draft's list, in order, without those the check dropped."""
    return [item for item in map(check, drafts or []) if item is not None]


@dataclass
class _DraftCheck:
    """Checks a draft's items one by one, listing every entity they name."""

    matcher: EntityMatcher
    reference: datetime
    entities: dict[str, ExtractedEntity] = field(default_factory=lambda: {})

    def canon(self, raw: str | None) -> str:
        """The known spelling of a name, else the name as given (clipped)."""
        name = clip(raw or "", MAX_NAME)
        return self.matcher.by_key.get(normalize_name(name), name)

    def add_entity(self, name: str, entity_type: str | None = None) -> None:
        key = normalize_name(name)
        if not name or not key or key in self.entities:
            return
        etype = clip((entity_type or "").lower(), MAX_NAME) or guess_entity_type(name)
        self.entities[key] = ExtractedEntity(name=name, entity_type=etype)

    def names(self, raw: list[str] | None) -> list[str]:
        names = unique_names([self.canon(n) for n in raw or []])
        for n in names:
            self.add_entity(n)
        return names

    def relation(self, r: DraftRelation) -> ExtractedRelation | None:
        source, target = self.canon(r.source), self.canon(r.target)
        rel_type = clip(r.relationship_type or "", MAX_NAME)
        if not (source and target and rel_type and normalize_name(source)):
            return None
        if not normalize_name(target):
            return None
        self.add_entity(source)
        self.add_entity(target)
        valid_from, valid_to = _relation_dates(r, self.reference)
        return ExtractedRelation(
            source=source,
            target=target,
            relationship_type=rel_type,
            valid_from=valid_from,
            valid_to=valid_to,
        )

    def event(self, ev: DraftEvent) -> ExtractedEvent | None:
        description = clip(ev.description or "", MAX_TEXT)
        if not description:
            return None
        names = self.names(ev.entities)
        at = _when(ev.occurred_at, self.reference) or self.reference
        return ExtractedEvent(description=description, occurred_at=at, entities=names)

    def fact(self, f: DraftFact) -> ExtractedFact | None:
        subject, predicate = self.canon(f.subject), clip(f.predicate or "", MAX_NAME)
        obj = clip(f.object or "", MAX_TEXT)
        if not (subject and predicate and obj):
            return None
        valid_to = _when(f.valid_to, self.reference)
        # A fact the note says ended, without saying since when ("moved from the payments
        # team"), has an unknown start, as on the rules path.
        default_from = (
            UNKNOWN_START if valid_to is not None and not f.valid_from else self.reference
        )
        valid_from = _when(f.valid_from, self.reference) or default_from
        if valid_to is not None and valid_to <= valid_from:
            valid_to = None
        return ExtractedFact(
            subject=subject,
            predicate=predicate,
            object=obj,
            valid_from=valid_from,
            valid_to=valid_to,
            cardinality=_cardinality(f.cardinality),
        )

    def causal_link(self, c: DraftCausalLink) -> ExtractedCausalLink | None:
        cause, effect = clip(c.cause or "", MAX_TEXT), clip(c.effect or "", MAX_TEXT)
        if not cause or not effect:
            return None
        confidence = c.confidence
        if confidence is None or math.isnan(confidence):
            confidence = EXPLICIT_CONFIDENCE
        return ExtractedCausalLink(
            cause=cause,
            effect=effect,
            confidence=max(0.0, min(1.0, confidence)),
            evidence=clip(c.evidence or "", MAX_TEXT) or None,
            entities=self.names(c.entities),
        )


def _concept(k: DraftConcept) -> ExtractedConcept | None:
    name = clip(k.name or "", MAX_NAME)
    if not name:
        return None
    return ExtractedConcept(name=name, description=clip(k.description or "", MAX_TEXT) or None)


def _category(
    given: str | None, text: str, matcher: EntityMatcher, reference: datetime
) -> MemoryCategory:
    """The draft's category when it is one, else the rule extractor's."""
    try:
        return MemoryCategory((given or "").strip().lower())
    except ValueError:
        return RuleExtractor().extract(text, matcher, reference).category


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
        matcher = as_matcher(known_entities)
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
    got = await ask_or_rules(
        _EXTRACT,
        llm,
        lambda model: LLMExtractor(model, max_tokens).extract(text, matcher, ref),
        lambda: RuleExtractor().extract(text, matcher, ref),
        unusable=_invalid_values,
    )
    return ExtractOutcome(got.value, got.degraded, got.reason, got.usage)


_EXTRACT = StepWork("extract", "extraction")


def _invalid_values(exc: Exception) -> str | None:
    # The draft passed the LLM schema but holds values the graph models refuse
    # (e.g. a NUL in a name): the rules answer instead of the error escaping.
    if isinstance(exc, ValidationError):
        return f"LLM extraction had invalid values ({exc.error_count()} errors); used rules"
    return None
