"""What every extractive answer reads: the answer itself, the merged subgraph with the
lookups answers need (names, times, links), and the question's terms."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from polyg_shared.intents import Intent, Timeframe
from polyg_shared.retrieval import ContextNode, MergedSubgraph, Reasoning
from polyg_shared.timeutil import to_epoch_ms

from polyg_core.recall.answer.confidence import Evidence
from polyg_core.recall.answer.words import SPEAKER, terms
from polyg_core.text.normalize import normalize_name

MAX_LISTED = 8  # events, statements or nodes an answer lists at most


@dataclass
class Answer:
    """The extractive answer with its reasoning, sources and evidence."""

    text: str
    reasoning: Reasoning = field(default_factory=Reasoning)
    sources: list[str] = field(default_factory=list[str])
    evidence: Evidence = field(default_factory=Evidence)


@dataclass
class AnswerGraph:
    """The merged subgraph with lookups the answers need."""

    sub: MergedSubgraph
    now_ms: int
    by_id: dict[str, ContextNode] = field(init=False)
    involves: dict[str, set[str]] = field(init=False)

    def __post_init__(self) -> None:
        self.by_id = {n.uuid: n for n in self.sub.nodes}
        self.involves = {}
        for e in self.sub.edges:
            if e.type in ("X_INVOLVES", "X_AFFECTS") and e.target in self.by_id:
                self.involves.setdefault(e.source, set()).add(e.target)

    def of(self, label: str) -> list[ContextNode]:
        return [n for n in self.sub.nodes if n.label == label]

    def names_of(self, node: ContextNode) -> set[str]:
        """Normalised names of the entities a node involves (linked, or named in its text)."""
        return {normalize_name(self.by_id[u].text) for u in self.involves.get(node.uuid, set())}

    def mentions(self, node: ContextNode, key: str) -> bool:
        return key in self.names_of(node) or names_in(key, node.text)


_NAME_WORD = re.compile(r"[\w'’.-]+")
_NAME_WORDS = 4  # the longest name looked for in a text, in words


@lru_cache(maxsize=4096)
def names_of_text(text: str) -> frozenset[str]:
    """Every run of up to four words of `text`, normalised as names are ("auth service"
    and "auth-service" alike), so an asked name is found inside a sentence."""
    words = [w.strip(".'’-") for w in _NAME_WORD.findall(text)]
    words = [w for w in words if w]
    out: set[str] = set()
    for i in range(len(words)):
        for j in range(i + 1, min(i + _NAME_WORDS, len(words)) + 1):
            out.add(normalize_name(" ".join(words[i:j])))
    out.discard("")
    return frozenset(out)


def names_in(key: str, text: str) -> bool:
    return bool(key) and key in names_of_text(text)


# -- times ------------------------------------------------------------------------------------


def time_ms(node: ContextNode) -> int | None:
    for key in ("occurred_at", "valid_from", "created_at"):
        value = node.attributes.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return int(value)
    return None


def in_window(ms: int | None, tf: Timeframe | None) -> bool:
    if ms is None or tf is None:
        return False
    return (tf.start is None or ms >= to_epoch_ms(tf.start)) and (
        tf.end is None or ms <= to_epoch_ms(tf.end)
    )


def fact_valid(node: ContextNode, tf: Timeframe | None, now_ms: int) -> bool:
    """Valid at some time in the timeframe; without one, valid now."""
    begin = node.attributes.get("valid_from")
    stop = node.attributes.get("valid_to")
    begin = int(begin) if isinstance(begin, int | float) else None
    stop = int(stop) if isinstance(stop, int | float) else None
    if tf is None or (tf.start is None and tf.end is None):
        return (begin is None or begin <= now_ms) and (stop is None or stop > now_ms)
    lo = to_epoch_ms(tf.start) if tf.start else None
    hi = to_epoch_ms(tf.end) if tf.end else None
    return (hi is None or begin is None or begin <= hi) and (
        lo is None or stop is None or stop > lo
    )


# -- the question -----------------------------------------------------------------------------


@dataclass
class Question:
    """The question's text and intent, with the terms answers match evidence against."""

    text: str
    intent: Intent
    wanted: set[str]  # the question's content terms
    entity_keys: list[str]  # normalised asked entity names, in question order
    about: set[str]  # content terms that are not part of an asked entity's name

    @classmethod
    def of(cls, text: str, intent: Intent) -> Question:
        query = intent.semantic_query if intent.semantic_query.strip() else text
        wanted = terms(query) or terms(text)
        if intent.timeframe and intent.timeframe.phrase:
            wanted -= terms(intent.timeframe.phrase)
        keys = [normalize_name(e) for e in intent.entities if normalize_name(e)]
        name_terms: set[str] = set()
        for e in intent.entities:
            name_terms |= terms(e)
        return cls(text, intent, wanted, keys, wanted - name_terms)


def unspoken(sentence: str) -> str:
    """The sentence without its leading "Speaker: "."""
    speaker = SPEAKER.match(sentence)
    return sentence[speaker.end() :].strip() if speaker else sentence.strip()


def entity_found(q: Question, g: AnswerGraph, node: ContextNode) -> float | None:
    if not q.entity_keys:
        return None
    return sum(1 for k in q.entity_keys if g.mentions(node, k)) / len(q.entity_keys)
