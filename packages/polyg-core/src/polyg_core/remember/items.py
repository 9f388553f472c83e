"""The items of one extraction, checked before `remember` writes them.

What the graphs would refuse (a blank name, a bad time, a causal description without
letters or digits) is left out and logged; the memory and the other items are written.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from polyg_shared.intents import ExtractedFact, ExtractedRelation, Extraction

from polyg_core.errors import InvalidInput
from polyg_core.graphs.base import MAX_TEXT, check_text, name_key, type_key
from polyg_core.graphs.causal import Match
from polyg_core.graphs.entity_refs import epoch_ms
from polyg_core.graphs.temporal import fact_params, parse_time
from polyg_core.remember.rule_extractor import UNKNOWN_START
from polyg_core.text.normalize import normalize_description

logger = logging.getLogger(__name__)


@dataclass
class CausalItem:
    """A causal link of the extraction, checked, with its entity names."""

    cause: str
    effect: str
    confidence: float
    evidence: str | None
    entities: list[str]
    c: Match | None = None
    e: Match | None = None

    def text(self, end: str) -> str:
        return self.cause if end == "c" else self.effect

    def set(self, end: str, m: Match) -> None:
        if end == "c":
            self.c = m
        else:
            self.e = m

    def open_ends(self) -> list[str]:
        """The ends ("c", "e") no uuid or key matched."""
        return [end for end, m in (("c", self.c), ("e", self.e)) if m is None]

    def unmatched(self) -> list[str]:
        return [self.text(end) for end in self.open_ends()]


@dataclass
class Items:
    """The extraction's items, checked; what the graphs would refuse is left out."""

    entities: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])
    relations: list[ExtractedRelation] = field(default_factory=list[ExtractedRelation])
    events: list[tuple[str, int, list[str]]] = field(
        default_factory=list[tuple[str, int, list[str]]]
    )
    facts: list[tuple[ExtractedFact, dict[str, Any] | None]] = field(
        default_factory=list[tuple[ExtractedFact, dict[str, Any] | None]]
    )
    links: list[CausalItem] = field(default_factory=list[CausalItem])
    concepts: dict[str, tuple[str, str | None]] = field(
        default_factory=dict[str, tuple[str, str | None]]
    )

    @classmethod
    def of(cls, ex: Extraction, source: str | None) -> Items:
        """Check the extraction's items (`source`: who stated its facts)."""
        out = cls()
        seen: set[tuple[str, str]] = set()
        for e in ex.entities:
            try:
                name = check_text(e.name, "entity name")
                etype = type_key(e.entity_type or "entity")
            except InvalidInput as exc:
                logger.info("entity %s skipped: %s", e, exc)
                continue
            if (name_key(name), etype) not in seen:
                seen.add((name_key(name), etype))
                out.entities.append((name, etype))
        out.relations = list(ex.relations)
        for ev in ex.events:
            try:
                desc = check_text(ev.description, "description", 4096)
                t = epoch_ms(parse_time(ev.occurred_at, "occurred_at"))
            except InvalidInput as exc:
                logger.info("event %s skipped: %s", ev, exc)
                continue
            out.events.append((desc, t, list(ev.entities)))
        for f in ex.facts:
            if f.valid_from == UNKNOWN_START and f.valid_to is not None:
                out.facts.append((f, None))
                continue
            try:
                out.facts.append(
                    (
                        f,
                        fact_params(
                            f.subject,
                            f.predicate,
                            f.object,
                            f.valid_from,
                            f.valid_to,
                            source,
                            cardinality=f.cardinality,
                        ),
                    )
                )
            except InvalidInput as exc:
                logger.info("fact %s skipped: %s", f, exc)
        for link in ex.causal_links:
            try:
                cause = _causal_text(link.cause, "cause")
                effect = _causal_text(link.effect, "effect")
            except InvalidInput as exc:
                logger.info("causal link %s skipped: %s", link, exc)
                continue
            out.links.append(
                CausalItem(cause, effect, link.confidence, link.evidence, list(link.entities))
            )
        for c in ex.concepts:
            try:
                cname = check_text(c.name, "concept name")
                cdesc = (
                    check_text(c.description, "description", MAX_TEXT) if c.description else None
                )
            except InvalidInput as exc:
                logger.info("concept %s skipped: %s", c, exc)
                continue
            key = name_key(cname)
            if key in out.concepts:
                # As a second add_concept would: a new description replaces the old one.
                first, old = out.concepts[key]
                out.concepts[key] = (first, cdesc if cdesc is not None else old)
            else:
                out.concepts[key] = (cname, cdesc)
        return out


def _causal_text(value: str, what: str) -> str:
    text = check_text(value, what, MAX_TEXT)
    if not normalize_description(text):
        raise InvalidInput(f"{what} {text!r} has no letters or digits; describe it in words")
    return text
