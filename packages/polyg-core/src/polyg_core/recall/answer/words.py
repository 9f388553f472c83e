"""Words and sentences for extractive answers: terms of a question, their overlap with a
text, the best sentence of a stored text, and times as an answer writes them."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from datetime import UTC, datetime

from polyg_core.text.names import STOP_WORDS

_WORD = re.compile(r"[a-z0-9]+")
# Words that say what kind of answer is wanted, not what it is about.
_QUESTION_WORDS = frozenset({
    "what", "which", "who", "whom", "whose", "when", "why", "how", "where", "happen",
    "happened", "happens", "event", "events", "thing", "things", "anything", "everything",
    "tell", "know", "did", "does", "do", "is", "are", "was", "were", "time", "date", "day",
    "now", "currently", "current", "today",
})  # fmt: skip
# What is left of a possessive or a contraction ("sister's", "don't", "I'd"): no word.
_CONTRACTED = frozenset({"s", "t", "d", "ll", "ve", "re", "m"})
# Irregular past forms, so "leads" meets "led" and "joined" meets "join".
_IRREGULAR = {
    "led": "lead", "ran": "run", "began": "begin", "went": "go", "gone": "go", "made": "make",
    "took": "take", "taken": "take", "said": "say", "left": "leave", "met": "meet",
    "bought": "buy", "built": "build", "wrote": "write", "written": "write", "broke": "break",
    "broken": "break", "chose": "choose", "chosen": "choose", "saw": "see", "seen": "see",
    "gave": "give", "given": "give", "felt": "feel", "kept": "keep", "found": "find",
    "got": "get", "came": "come", "knew": "know", "known": "know",
}  # fmt: skip


def stem(word: str) -> str:
    """A crude English stem, enough to match "crashed" with "crash" and "teams" with "team"."""
    if word in _IRREGULAR:
        word = _IRREGULAR[word]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


def terms(text: str) -> set[str]:
    """Stemmed content words of `text` (no stop words, no question words)."""
    # A set of its own for each caller (some take words out of it).
    return set(_terms(text))


# An answer reads the same memories' words again for each sentence it weighs, and a
# process answers many questions from the same memories: kept per text, bounded.
@functools.lru_cache(maxsize=1 << 14)
def _terms(text: str) -> frozenset[str]:
    return frozenset(
        stem(w)
        for w in _WORD.findall(text.lower())
        if w not in STOP_WORDS and w not in _QUESTION_WORDS and w not in _CONTRACTED
    )


def overlap(wanted: set[str], text: str) -> float:
    """The share of `wanted` terms found in `text` (0 when nothing is wanted)."""
    if not wanted:
        return 0.0
    return len(wanted & terms(text)) / len(wanted)


def format_time(ms: int, with_clock: bool = True) -> str:
    """ "2026-01-07 14:05 UTC (7 January 2026)": sortable first, then as people write it."""
    dt = datetime.fromtimestamp(ms / 1000, tz=UTC)
    spoken = f"{dt.day} {dt.strftime('%B %Y')}"
    if not with_clock or (dt.hour, dt.minute) == (0, 0):
        return f"{dt:%Y-%m-%d} ({spoken})"
    return f"{dt:%Y-%m-%d %H:%M} UTC ({spoken})"


def short_time(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M")


# A title before a name ("Dr. Lindgren", "Mr. Osei") ends no sentence, nor "no." before a
# number ("new no. 07781 204 919").
_SENTENCE = re.compile(
    r"(?<=[.!?])(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bMrs\.)(?<!\bSt\.)(?<!\bProf\.)"
    r"(?!(?<=\b[Nn]o\.)\s+\d)\s+"
)
SPEAKER = re.compile(r"^([A-Z][\w .'-]{0,40}):\s+")


SHORT_SENTENCE = 3
"""A sentence of fewer words ("NEW PB!!!", "Thanks, Mel!") seldom holds the value: on a
tie, a longer one wins."""


def best_sentence(q_terms: set[str], text: str, prefer: Callable[[str], bool] | None = None) -> str:
    """The sentence of `text` that holds most of the question's terms (the whole text when
    it is one sentence), keeping a leading "Speaker: " so the reader sees who said it.
    `prefer` breaks a tie between statements that can hold a value (an update's sentence
    that says the change)."""
    speaker = SPEAKER.match(text)
    body = text[speaker.end() :] if speaker else text
    parts = [p for p in _SENTENCE.split(body.strip()) if p.strip()]
    if len(parts) <= 1 or not q_terms:
        return text.strip()
    # A sentence that asks something rarely answers: on a tie, a statement wins, and one
    # of a few words ("NEW PB!!!") gives way to one that can hold a value.
    best = max(
        parts,
        key=lambda p: (
            len(q_terms & terms(p)),
            not p.rstrip().endswith("?"),
            len(_WORD.findall(p.lower())) >= SHORT_SENTENCE,
            prefer is not None and prefer(p),
            -parts.index(p),
        ),
    )
    return (speaker.group(0) if speaker else "") + best.strip()


def as_sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?", "…")) else text + "."
