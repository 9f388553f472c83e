"""The rule extractor: entities, events, facts, causal links and concepts without a model.

A note is read sentence by sentence (`extract_rules`, `membership`); each sentence adds
what it states to the note's findings, at its own time, else at the last time named
before it, else at the reference time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from polyg_shared.intents import (
    ExtractedCausalLink,
    ExtractedConcept,
    ExtractedEntity,
    ExtractedEvent,
    ExtractedFact,
    ExtractedRelation,
    Extraction,
)
from polyg_shared.types import MAX_CONTENT, MAX_NAME, MAX_TEXT

from polyg_core.remember.extract_rules import (
    CHAINED_CONFIDENCE,
    CausalSpan,
    FactSpan,
    category_of,
    causal_spans,
    concepts_of,
    fact_spans,
    is_event_sentence,
    is_name,
    names_are_not_times,
    sentence_spans,
    settled_facts,
    strip_times,
)
from polyg_core.remember.membership import MembershipSpan, membership_spans
from polyg_core.text.names import EntityMatcher, KnownEntities, NameMention, find_names
from polyg_core.text.normalize import normalize_name
from polyg_core.text.timeparse import TimeMatch, planned_times

UNKNOWN_START = datetime(1970, 1, 1, tzinfo=UTC)
"""Marks a fact whose start the text does not give ("moved from X" ends one): `remember`
ends the stored fact it names instead of writing it (see `Memory._end_stated_fact`)."""


def clip(text: str, limit: int) -> str:
    """`text` with its whitespace collapsed, cut to `limit` characters."""
    return " ".join(text.split())[:limit].strip()


def as_matcher(known: KnownEntities | EntityMatcher) -> EntityMatcher:
    """A matcher of the known entities (built once when a list is given)."""
    return known if isinstance(known, EntityMatcher) else EntityMatcher.from_known(known)


def unique_names(names: list[str]) -> list[str]:
    """The names clipped, first spelling of each normalised name kept, empty ones dropped."""
    seen: set[str] = set()
    out: list[str] = []
    for raw in names:
        name = clip(raw, MAX_NAME)
        key = normalize_name(name)
        if name and key and key not in seen:
            seen.add(key)
            out.append(name)
    return out


@dataclass(frozen=True)
class _Sentence:
    """One sentence of a note, with its mentions and times relative to it."""

    text: str
    start: int
    mentions: list[NameMention]
    times: list[TimeMatch]
    when: datetime
    event_like: bool

    def names(self) -> list[str]:
        return unique_names([m.name for m in self.mentions])

    def time_after(self, offset: int, default: datetime) -> datetime:
        """The first of the sentence's times at or after `offset`, else `default`."""
        return next((t.start for t in self.times if t.span[0] - self.start >= offset), default)


@dataclass(frozen=True)
class _Note:
    text: str
    reference: datetime
    times: list[TimeMatch]
    mentions: list[NameMention]
    speaker: str | None

    @classmethod
    def read(cls, text: str, matcher: EntityMatcher, reference: datetime) -> _Note:
        names = find_names(text, matcher)
        # A day planned ahead ("launch target: June 28") falls after the note, not before.
        times = names_are_not_times(planned_times(text, reference), names)
        mentions = [m for m in names if is_name(m, times)]
        return cls(text, reference, times, mentions, _speaker(text, mentions))

    def entities(self) -> list[ExtractedEntity]:
        found: dict[str, ExtractedEntity] = {}
        for m in self.mentions:
            name = clip(m.name, MAX_NAME)
            found.setdefault(
                normalize_name(name), ExtractedEntity(name=name, entity_type=m.entity_type)
            )
        return list(found.values())

    def sentence(self, start: int, end: int, context_time: datetime | None) -> _Sentence:
        text = self.text[start:end]
        local = [
            NameMention(m.name, (m.span[0] - start, m.span[1] - start), m.known, m.entity_type)
            for m in self.mentions
            if start <= m.span[0] and m.span[1] <= end
        ]
        own = [t for t in self.times if start <= t.span[0] and t.span[1] <= end]
        when = own[0].start if own else (context_time or self.reference)
        event_like = bool(own) or is_event_sentence(text)
        return _Sentence(text, start, local, own, when, event_like)


def _speaker(text: str, mentions: list[NameMention]) -> str | None:
    """The name a chat line starts with ("Ada: ..."), if any."""
    return next(
        (m.name for m in mentions if m.span[0] == 0 and text[m.span[1] :].startswith(":")),
        None,
    )


@dataclass
class _Findings:
    """What the sentences of one note state, gathered in reading order."""

    events: list[ExtractedEvent] = field(default_factory=lambda: [])
    facts: list[ExtractedFact] = field(default_factory=lambda: [])
    relations: dict[tuple[str, str, str], ExtractedRelation] = field(default_factory=lambda: {})
    links: list[ExtractedCausalLink] = field(default_factory=lambda: [])

    def add_event(self, sentence: _Sentence) -> None:
        description = clip(sentence.text.rstrip(" .!?;:"), MAX_TEXT)
        if sentence.event_like and description:
            self.events.append(
                ExtractedEvent(
                    description=description, occurred_at=sentence.when, entities=sentence.names()
                )
            )

    def add_facts(self, sentence: _Sentence) -> None:
        for fact in fact_spans(sentence.text, sentence.mentions):
            self.facts.append(
                ExtractedFact(
                    subject=clip(fact.subject, MAX_NAME),
                    predicate=fact.predicate,
                    object=clip(fact.object, MAX_TEXT),
                    valid_from=sentence.when,
                )
            )
            self._relate_fact(fact)

    def _relate_fact(self, fact: FactSpan) -> None:
        if fact.target and normalize_name(fact.target) != normalize_name(fact.subject):
            self.relations[(fact.subject, fact.target, fact.predicate)] = ExtractedRelation(
                source=clip(fact.subject, MAX_NAME),
                target=clip(fact.target, MAX_NAME),
                relationship_type=fact.predicate,
            )

    def add_memberships(self, sentence: _Sentence, speaker: str | None) -> None:
        for span in membership_spans(sentence.text, sentence.mentions, speaker):
            self._add_membership(sentence, span)

    def _add_membership(self, sentence: _Sentence, span: MembershipSpan) -> None:
        subject, obj = clip(span.subject, MAX_NAME), clip(span.object, MAX_NAME)
        if normalize_name(subject) == normalize_name(obj):
            return
        at = sentence.time_after(span.at, sentence.when)
        self.facts.append(
            ExtractedFact(
                subject=subject,
                predicate=span.predicate,
                object=obj,
                valid_from=UNKNOWN_START if span.ends else at,
                valid_to=at if span.ends and at > UNKNOWN_START else None,
            )
        )
        # The relation carries the membership's date: a join or move starts it then
        # (point-in-time questions read it). A departure writes no relation (its fact
        # ends then): the labelled extraction set counts an ended relation as one the
        # note does not state.
        if not span.ends:
            self.relations[(subject, obj, span.predicate)] = ExtractedRelation(
                source=subject, target=obj, relationship_type=span.predicate, valid_from=at
            )

    def add_causal_links(self, sentence: _Sentence, previous: _Sentence | None) -> None:
        for span in causal_spans(sentence.text, previous.text if previous else None):
            cause = clip(strip_times(span.cause, sentence.times), MAX_TEXT)
            effect = clip(strip_times(span.effect, sentence.times), MAX_TEXT)
            if not cause or not effect or normalize_name(cause) == normalize_name(effect):
                continue
            if span.explainable and previous is not None and previous.event_like:
                self._chain_to_previous(sentence, previous, cause)
            self.links.append(
                ExtractedCausalLink(
                    cause=cause,
                    effect=effect,
                    confidence=span.confidence,
                    evidence=clip(span.evidence, MAX_TEXT),
                    entities=_involved(sentence, span),
                )
            )

    def _chain_to_previous(self, sentence: _Sentence, previous: _Sentence, cause: str) -> None:
        """The previous sentence's event as the cause of this one's cause, when they share
        an entity that this cause names."""
        shared = {normalize_name(m.name) for m in previous.mentions} & {
            normalize_name(n) for n in sentence.names()
        }
        prev_cause = clip(previous.text.rstrip(" .!?;:"), MAX_TEXT)
        names_shared = any(
            normalize_name(m.name) in shared and m.name.lower() in cause.lower()
            for m in sentence.mentions
        )
        if not (shared and prev_cause and names_shared):
            return
        self.links.append(
            ExtractedCausalLink(
                cause=prev_cause,
                effect=cause,
                confidence=CHAINED_CONFIDENCE,
                evidence=clip(f"{previous.text} {sentence.text}", MAX_TEXT),
                entities=unique_names(
                    [m.name for m in previous.mentions if normalize_name(m.name) in shared]
                    + [m.name for m in previous.mentions]
                ),
            )
        )


def _involved(sentence: _Sentence, span: CausalSpan) -> list[str]:
    evidence = span.evidence.lower()
    return unique_names([m.name for m in sentence.mentions if m.name.lower() in evidence])


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
        ref = (reference or datetime.now(UTC)).astimezone(UTC)
        note = _Note.read(text[:MAX_CONTENT], as_matcher(known_entities), ref)
        spans = sentence_spans(note.text)
        found = self._read_sentences(note, spans)
        return Extraction(
            entities=note.entities(),
            relations=list(found.relations.values()),
            events=found.events,
            facts=settled_facts(found.facts),
            causal_links=found.links,
            concepts=self._concepts(note),
            category=category_of(note.text, [note.text[s:e] for s, e in spans], bool(found.events)),
        )

    @staticmethod
    def _read_sentences(note: _Note, spans: list[tuple[int, int]]) -> _Findings:
        found = _Findings()
        context_time: datetime | None = None
        previous: _Sentence | None = None
        for start, end in spans:
            sentence = note.sentence(start, end, context_time)
            if sentence.times:
                context_time = sentence.times[-1].start
            found.add_event(sentence)
            found.add_facts(sentence)
            found.add_memberships(sentence, note.speaker)
            found.add_causal_links(sentence, previous)
            previous = sentence
        return found

    def _concepts(self, note: _Note) -> list[ExtractedConcept]:
        return [
            ExtractedConcept(name=clip(name, MAX_NAME), description=clip(desc, MAX_TEXT) or None)
            for name, desc in concepts_of(note.text, note.mentions, note.times, self.max_concepts)
        ]
