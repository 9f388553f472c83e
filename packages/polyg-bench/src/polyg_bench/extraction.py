"""Extraction quality: the rule-based extractor against labelled notes.

A labelled set is a JSON file::

    {"reference": "2026-01-07T16:00:00Z",
     "notes": [{"id", "kind", "text", "known": [names already in memory],
                "entities": [[name, type]], "relations": [[source, type, target]],
                "facts": [[subject, predicate, object, from, to]],
                "causal": [[cause, effect]], "forbidden": [words]}]}

Scoring, per kind of output:
- entities: a name matches when its normalised key (case, spaces, punctuation, a
  leading "the" ignored) equals the label's; mention detection is the recall of the
  labelled entities, type accuracy the share of matched entities with the labelled
  type, resolution the share of labelled entities that are known (`known`) which come
  out with the known spelling;
- relations: (source, type, target) by key;
- facts: (subject, predicate, object) by key, and the date of `from` / `to` when the
  label gives one;
- causal links: cause and effect each share at least half of their content words
  with the label's.
`forbidden` words must not be, or be a word of, an entity or a concept.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from polyg_core.errors import InvalidInput
from polyg_core.remember.extractor import RuleExtractor
from polyg_core.text.normalize import normalize_name
from polyg_shared.intents import ExtractedFact, Extraction
from polyg_shared.timeutil import parse_timestamp
from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = [
    "ExtractionReport",
    "LabelledNote",
    "LabelledSet",
    "Score",
    "evaluate_extraction",
    "load_labelled_set",
]

KINDS = ("entities", "relations", "facts", "causal links")


class LabelledNote(BaseModel):
    """One note and what should be extracted from it."""

    model_config = ConfigDict(extra="forbid")

    id: str
    kind: str = "note"
    split: str = "dev"
    text: str
    reference: str | None = None
    known: list[str] = Field(default_factory=list)
    entities: list[tuple[str, str]] = Field(default_factory=list[tuple[str, str]])
    relations: list[tuple[str, str, str]] = Field(default_factory=list[tuple[str, str, str]])
    facts: list[tuple[str, str, str, str | None, str | None]] = Field(
        default_factory=list[tuple[str, str, str, str | None, str | None]]
    )
    causal: list[tuple[str, str]] = Field(default_factory=list[tuple[str, str]])
    forbidden: list[str] = Field(default_factory=list)

    @property
    def empty(self) -> bool:
        """True when nothing should be extracted from the note."""
        return not (self.entities or self.relations or self.facts or self.causal)


class LabelledSet(BaseModel):
    """Labelled notes and the reference time their relative dates are read against."""

    model_config = ConfigDict(extra="ignore")

    reference: str = "2026-01-07T16:00:00Z"
    notes: list[LabelledNote]


def load_labelled_set(path: Path) -> LabelledSet:
    """Read a labelled set.

    Raises:
        InvalidInput: the file is missing, is not JSON, or is not in the format above.
    """
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InvalidInput(
            f"no labelled set at {path}; pass the path of one (the repository's is "
            "packages/polyg-core/tests/remember/data/extraction_notes.json)"
        ) from None
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{path} is not JSON: {exc}") from None
    try:
        return LabelledSet.model_validate(raw)
    except ValidationError as exc:
        raise InvalidInput(f"{path} is not a labelled set: {exc}") from None


@dataclass
class Score:
    """True positives, false positives and false negatives of one kind of output."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def add(self, tp: int, fp: int, fn: int) -> None:
        self.tp += tp
        self.fp += fp
        self.fn += fn


@dataclass
class ExtractionReport:
    """Scores over a labelled set, plus what was missed or wrong per note."""

    notes: int = 0
    scores: dict[str, Score] = field(default_factory=lambda: {k: Score() for k in KINDS})
    entities_by_note_kind: dict[str, Score] = field(default_factory=lambda: {})
    typed: int = 0
    typed_right: int = 0
    resolvable: int = 0
    resolved: int = 0
    empty_notes: int = 0
    empty_kept_empty: int = 0
    forbidden: list[tuple[str, str, str]] = field(default_factory=lambda: [])
    mistakes: dict[str, list[str]] = field(default_factory=lambda: {})

    @property
    def mention_detection(self) -> float:
        return self.scores["entities"].recall

    @property
    def type_accuracy(self) -> float:
        return self.typed_right / self.typed if self.typed else 1.0

    @property
    def resolution(self) -> float:
        return self.resolved / self.resolvable if self.resolvable else 1.0

    def table(self) -> list[dict[str, Any]]:
        """Precision, recall and F1 per kind of output."""
        return [
            {
                "kind": kind,
                "labelled": s.tp + s.fn,
                "extracted": s.tp + s.fp,
                "precision": round(s.precision, 3),
                "recall": round(s.recall, 3),
                "f1": round(s.f1, 3),
            }
            for kind, s in self.scores.items()
        ]

    def note_kind_table(self) -> list[dict[str, Any]]:
        """Entity precision and recall per kind of note."""
        return [
            {
                "notes": kind,
                "entities": s.tp + s.fn,
                "precision": round(s.precision, 3),
                "recall": round(s.recall, 3),
            }
            for kind, s in sorted(self.entities_by_note_kind.items())
        ]

    def seed_table(self) -> list[dict[str, Any]]:
        """Seed 000's entity extraction table: metric, target, measured."""
        ent = self.scores["entities"]
        return [
            {
                "metric": "Entity mention detection",
                "target": ">90%",
                "actual": f"{self.mention_detection:.1%}",
                "of": f"{ent.tp + ent.fn} labelled entities",
            },
            {
                "metric": "Entity type classification",
                "target": ">85%",
                "actual": f"{self.type_accuracy:.1%}",
                "of": f"{self.typed} entities found",
            },
            {
                "metric": "Entity resolution (to existing)",
                "target": ">80%",
                "actual": f"{self.resolution:.1%}",
                "of": f"{self.resolvable} labelled entities already known (mostly spelt otherwise)",
            },
        ]

    def data(self) -> dict[str, Any]:
        """Everything, for --json."""
        return {
            "notes": self.notes,
            "kinds": self.table(),
            "note_kinds": self.note_kind_table(),
            "seed_000": self.seed_table(),
            "type_accuracy": self.type_accuracy,
            "resolution": self.resolution,
            "empty_notes": self.empty_notes,
            "empty_kept_empty": self.empty_kept_empty,
            "forbidden": self.forbidden,
            "mistakes": self.mistakes,
        }


_LEADING_THE = re.compile(r"^\s*the\s+", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9_]+")
_LIGHT = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "by",
        "was",
        "were",
        "is",
        "are",
        "be",
        "been",
        "it",
        "its",
    ]
)


def _key(name: str) -> str:
    return normalize_name(_LEADING_THE.sub("", name))


def _content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _LIGHT}


def _similar(a: str, b: str) -> bool:
    wa, wb = _content_words(a), _content_words(b)
    if not wa or not wb:
        return False
    return len(wa & wb) / max(len(wa), len(wb)) >= 0.5


def _day(value: datetime | None) -> str | None:
    return value.astimezone(UTC).date().isoformat() if value is not None else None


def _match(
    gold: Sequence[Any], found: Sequence[Any], same: Callable[[Any, Any], bool]
) -> tuple[list[Any], list[Any], list[Any]]:
    """(matched gold, missed gold, unmatched found), each found item matching at most once."""
    left = list(found)
    hit: list[Any] = []
    missed: list[Any] = []
    for g in gold:
        j = next((i for i, f in enumerate(left) if same(g, f)), None)
        if j is None:
            missed.append(g)
        else:
            hit.append(g)
            left.pop(j)
    return hit, missed, left


def _forbidden_hits(note: LabelledNote, ex: Extraction) -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = []
    named = [("entity", e.name) for e in ex.entities] + [("concept", c.name) for c in ex.concepts]
    for word in note.forbidden:
        key = normalize_name(word)
        single = len(word.split()) == 1
        for where, name in named:
            words = {normalize_name(w) for w in re.split(r"[\s\-_/]+", name)}
            if normalize_name(name) == key or (single and key in words):
                out.append((note.id, word, f"{where} {name!r}"))
    return out


def score_note(note: LabelledNote, ex: Extraction, report: ExtractionReport) -> None:
    """Add one note's extraction to the report."""
    mistakes = _score_entities(note, ex, report)
    mistakes += _score_relations(note, ex, report)
    mistakes += _score_facts(note, ex, report)
    mistakes += _score_causal_links(note, ex, report)
    if note.empty:
        report.empty_notes += 1
        if not (ex.entities or ex.relations or ex.facts or ex.causal_links):
            report.empty_kept_empty += 1
    hits = _forbidden_hits(note, ex)
    report.forbidden += hits
    mistakes += [f"forbidden {w!r} as {where}" for _, w, where in hits]
    report.notes += 1
    if mistakes:
        report.mistakes[note.id] = mistakes


def _score_entities(note: LabelledNote, ex: Extraction, report: ExtractionReport) -> list[str]:
    """Entities found, their types, and known ones resolved; the mistakes."""
    found = {_key(e.name): e for e in ex.entities}
    gold_entities = {_key(n): (n, t) for n, t in note.entities}
    hit = [k for k in gold_entities if k in found]
    missed = [gold_entities[k][0] for k in gold_entities if k not in found]
    extra = [found[k].name for k in found if k not in gold_entities]
    report.scores["entities"].add(len(hit), len(extra), len(missed))
    report.entities_by_note_kind.setdefault(note.kind, Score()).add(
        len(hit), len(extra), len(missed)
    )
    mistakes: list[str] = []
    for k in hit:
        report.typed += 1
        if found[k].entity_type == gold_entities[k][1]:
            report.typed_right += 1
        else:
            mistakes.append(
                f"type of {gold_entities[k][0]}: {found[k].entity_type} "
                f"(labelled {gold_entities[k][1]})"
            )
    mistakes += _score_resolution(note, ex, report)
    return (
        mistakes + [f"missed entity {n!r}" for n in missed] + [f"extra entity {n!r}" for n in extra]
    )


def _score_resolution(note: LabelledNote, ex: Extraction, report: ExtractionReport) -> list[str]:
    """Labelled entities the note already knew: found under their known spelling?"""
    mistakes: list[str] = []
    known = {normalize_name(n) for n in note.known}
    for name, _ in note.entities:
        if normalize_name(name) in known:
            report.resolvable += 1
            if any(e.name == name for e in ex.entities):
                report.resolved += 1
            else:
                mistakes.append(f"not resolved to known {name!r}")
    return mistakes


def _score_relations(note: LabelledNote, ex: Extraction, report: ExtractionReport) -> list[str]:
    rel_hit, rel_missed, rel_extra = _match(
        note.relations,
        [(r.source, r.relationship_type, r.target) for r in ex.relations],
        lambda g, f: (_key(g[0]), g[1], _key(g[2])) == (_key(f[0]), f[1], _key(f[2])),
    )
    report.scores["relations"].add(len(rel_hit), len(rel_extra), len(rel_missed))
    return [f"missed relation {r}" for r in rel_missed] + [f"extra relation {r}" for r in rel_extra]


def _same_fact(g: tuple[str, str, str, str | None, str | None], f: ExtractedFact) -> bool:
    return (
        (_key(g[0]), g[1], _key(g[2])) == (_key(f.subject), f.predicate, _key(f.object))
        and (g[3] is None or g[3] == _day(f.valid_from))
        and (g[4] is None or g[4] == _day(f.valid_to))
    )


def _score_facts(note: LabelledNote, ex: Extraction, report: ExtractionReport) -> list[str]:
    fact_hit, fact_missed, fact_extra = _match(note.facts, ex.facts, _same_fact)
    report.scores["facts"].add(len(fact_hit), len(fact_extra), len(fact_missed))
    return [f"missed fact {f}" for f in fact_missed] + [
        f"extra fact {(f.subject, f.predicate, f.object, _day(f.valid_from), _day(f.valid_to))}"
        for f in fact_extra
    ]


def _score_causal_links(note: LabelledNote, ex: Extraction, report: ExtractionReport) -> list[str]:
    causal_hit, causal_missed, causal_extra = _match(
        note.causal,
        [(c.cause, c.effect) for c in ex.causal_links],
        lambda g, f: _similar(g[0], f[0]) and _similar(g[1], f[1]),
    )
    report.scores["causal links"].add(len(causal_hit), len(causal_extra), len(causal_missed))
    return [f"missed causal link {c}" for c in causal_missed] + [
        f"extra causal link {c}" for c in causal_extra
    ]


def evaluate_extraction(
    labelled: LabelledSet, extractor: RuleExtractor | None = None
) -> ExtractionReport:
    """Run the rule-based extractor on every note and score it against the labels."""
    rules = extractor or RuleExtractor()
    report = ExtractionReport()
    default_ref = parse_timestamp(labelled.reference)
    for note in labelled.notes:
        ref = parse_timestamp(note.reference) if note.reference else default_ref
        score_note(note, rules.extract(note.text, note.known, ref), report)
    return report
