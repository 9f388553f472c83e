"""Answers to history questions: how a subject's facts changed, each value with its
interval, oldest first ("team: Atlas, 2024-01 to 2025-03; Beacon, since 2025-03").

Recall asks this module when the classifier marks the question as a history
question (`Intent.history`); it reads the temporal graph's fact versions
(`TemporalGraph.facts(history=True)`) and writes nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from polyg_shared.intents import Intent
from polyg_shared.nodes import Fact
from polyg_shared.retrieval import Synthesis

from polyg_core.graphs.temporal import TemporalGraph
from polyg_core.recall.answer.shapes import asks_previous

_WORD = re.compile(r"[a-z0-9]+")
_MAX_VERSIONS = 100


@dataclass(frozen=True)
class HistoryAnswer:
    """The history told in one text, and the facts it tells (oldest validity first)."""

    text: str
    facts: list[Fact]


def _month(t: datetime) -> str:
    return t.strftime("%Y-%m")


def interval_text(fact: Fact) -> str:
    """`value, 2024-01 to 2025-03` for an ended fact, `value, since 2025-03` otherwise."""
    if fact.valid_to is None:
        return f"{fact.object}, since {_month(fact.valid_from)}"
    return f"{fact.object}, {_month(fact.valid_from)} to {_month(fact.valid_to)}"


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _asked_predicates(question: str, facts: list[Fact]) -> set[str]:
    """The predicates the question names ("which teams", "the manager"); all when none."""
    asked = _words(question)
    named = {
        f.predicate
        for f in facts
        if any(w in asked or w + "s" in asked for w in _words(f.predicate.replace("_", " ")))
    }
    return named or {f.predicate for f in facts}


def tell_history(subject: str, facts: list[Fact], question: str) -> HistoryAnswer | None:
    """The history of `subject`'s facts the question asks about, one line per predicate."""
    own = [f for f in facts if f.valid_to is None or f.valid_to > f.valid_from]
    if not own:
        return None
    chosen = _asked_predicates(question, own)
    if asks_previous(question):
        # "How did X take her tea before?": only a value that changed has a before.
        chosen = {p for p in chosen if sum(1 for f in own if f.predicate == p) > 1}
        if not chosen:
            return None
    told: list[Fact] = []
    lines: list[str] = []
    for predicate in sorted(
        chosen, key=lambda p: min(f.valid_from for f in own if f.predicate == p)
    ):
        versions = sorted(
            (f for f in own if f.predicate == predicate), key=lambda f: (f.valid_from, f.uuid)
        )
        told += versions
        name = predicate.replace("_", " ")
        lines.append(f"{subject} {name}: " + "; ".join(interval_text(f) for f in versions) + ".")
    return HistoryAnswer(" ".join(lines), told)


async def history_answer(
    temporal: TemporalGraph, namespace: str, intent: Intent, question: str
) -> HistoryAnswer | None:
    """The history of the question's entities' facts, or None when it asks none or they
    have no facts (recall's answer then stands)."""
    if not intent.history:
        return None
    texts: list[str] = []
    facts: list[Fact] = []
    for subject in intent.entities:
        versions = await temporal.facts(
            namespace, subject=subject, history=True, limit=_MAX_VERSIONS
        )
        told = tell_history(subject, versions, question)
        if told is not None:
            texts.append(told.text)
            facts += told.facts
    if not texts:
        return None
    return HistoryAnswer(" ".join(texts), facts)


def with_history(synthesis: Synthesis, told: HistoryAnswer | None) -> Synthesis:
    """The answer told as history when there is one, its facts first among the sources."""
    if told is None:
        return synthesis
    sources = list(dict.fromkeys([*(f.uuid for f in told.facts), *synthesis.sources]))
    return synthesis.model_copy(update={"answer": told.text, "sources": sources})
