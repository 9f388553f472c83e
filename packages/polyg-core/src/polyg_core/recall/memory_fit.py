"""How one memory's own sentences stand to a question: read sentence by sentence.

BM25 and the embedding score a memory as a whole. Which of its sentences holds the asked
words tells more:

* the matched sentence: the sentence holding the most of the question's word weight (idf;
  a sentence that asks counts half, it holds no answer);
* a plan is not a deed: asked what someone did ("When did Ilse go to the choir camp?",
  "Where has Bruno sailed?"), a memory whose matched sentence tells what they will do or
  think of doing ("We're thinking about going to choir camp next month") has not told
  that it happened, nor has one that says it was missed ("The camp was on Saturday, I
  missed it"); the memory that says it did ("I went to choir camp last week") answers.
  A question that asks about the plan itself ("What did Ilse plan to do?") is left alone.

Word weights count the namespace as at least `IDF_COLLECTION_FLOOR` memories (the caller's
`weight`), so that in a namespace of three memories a rare word still weighs as a rare
word: the rules read the same in three memories as in three thousand.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

__all__ = [
    "AskedWords",
    "asked_words",
    "asks_about_a_plan",
    "asks_what_was_done",
    "matched_sentence",
    "sentences_of",
    "tells_a_plan",
    "tells_it_was_missed",
]

QUESTION_SHARE = 0.5
"""The share of its words' weight a sentence that asks keeps."""

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\s*\[|\]\s*")
_SPEAKER_PREFIX = re.compile(r"^\s*[A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*){0,3}:\s+")

# Asked what happened: "did", "was", "were", "had", or a perfect ("has Bruno sailed",
# "have they bought").
_PARTICIPLE = (
    r"(?:\w+ed|been|gone|done|made|seen|taken|given|got|gotten|bought|brought|read|run|won|"
    r"met|written|drawn|found|had|sung|swum|ridden|flown|driven|built|held|told|taught|"
    r"thought|felt|left|lost|kept|begun|grown|known|worn|eaten|spent|sent|put|become)"
)
_ASKS_DONE = re.compile(
    rf"\b(?:did|was|were|had|didn't|wasn't|weren't)\b|\b(?:has|have)\s+(?:\w+\s+){{0,3}}?"
    rf"{_PARTICIPLE}\b",
    re.IGNORECASE,
)
# Words that make the plan itself what is asked ("What did Ilse plan to do?").
_ASKS_PLAN = re.compile(
    r"\b(?:plan\w*|intend\w*|hop(?:e|es|ed|ing)|want\w*|wish\w*|going\s+to|gonna|will|"
    r"would|goal\w*|dream\w*|aim\w*|decid\w*|think\w*\s+(?:about|of)|consider\w*|"
    r"look\w*\s+forward|excited\s+(?:about|for)|next|upcoming|future)\b",
    re.IGNORECASE,
)
# A sentence that tells what is still to come.
_PLAN = re.compile(
    r"\b(?:(?:am|'m|is|'s|are|'re)\s+(?:\w+\s+)?going\s+to|gonna|will|'ll|"
    r"plan(?:s|ning)?\s+(?:to|on)|(?:am|'m|are|'re|is|'s)\s+(?:\w+\s+)?"
    r"(?:thinking|planning|hoping)\s+(?:about|of|to|on)|"
    r"hop(?:e|ing)\s+to|can't\s+wait\s+to|next\s+(?:week|weekend|month|year|summer|time)|"
    r"tomorrow|this\s+coming)\b",
    re.IGNORECASE,
)
# A sentence that tells what happened: a past form of the common verbs of telling a deed.
_DONE = re.compile(
    r"\b(?:went|did|was|were|had|took|got|made|saw|met|ran|gave|bought|tried|visited|"
    r"joined|finished|started|signed|attended|ago|yesterday|last\s+\w+)\b",
    re.IGNORECASE,
)

# Telling that the deed did not happen: "I missed it", "we couldn't make it".
_MISSED = re.compile(
    r"\b(?:(?:I|we)\s+missed\s+(?:it|out|the\s+\w+)|(?:couldn't|could\s+not|didn't|did\s+not|"
    r"wasn't\s+able\s+to|weren't\s+able\s+to|never\s+got\s+to)\s+"
    r"(?:go|make\s+it|come|attend|join)|had\s+to\s+(?:skip|miss|cancel))\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class AskedWords:
    """The question's words (stems) with their weights, and the weights' sum."""

    weights: Mapping[str, float]
    total: float


def asked_words(
    question: str,
    tokens: Callable[[str], list[str]],
    weight: Callable[[str], float],
    leave_out: Iterable[str] = (),
) -> AskedWords:
    """The question's words that memories hold, each with its weight (`weight`, an idf).
    `leave_out` are words that say nothing about what is asked (the speakers' names,
    found in every turn)."""
    skip = set(leave_out)
    weights: dict[str, float] = {}
    for term in tokens(question):
        if term in skip or term in weights:
            continue
        w = weight(term)
        if w > 0:
            weights[term] = w
    return AskedWords(weights, sum(weights.values()))


def sentences_of(text: str) -> list[str]:
    """The sentences of a memory's text without a leading `Name: ` (who said it is not
    what was said); a bracketed caption ("[shares a photo of a red kite]") is a sentence
    of its own."""
    body = _SPEAKER_PREFIX.sub("", text.strip(), count=1)
    return [s.strip() for s in _SENTENCE_END.split(body) if s and s.strip()]


def matched_sentence(
    text: str, asked: AskedWords, tokens: Callable[[str], list[str]]
) -> tuple[str, float]:
    """The sentence holding the most of the asked words' weight (a sentence that asks
    counting `QUESTION_SHARE` of it) and that weight's share of all asked weight; the
    first sentence and 0 when none holds any."""
    sentences = sentences_of(text)
    best, best_held = (sentences[0] if sentences else ""), 0.0
    for sentence in sentences:
        held = sum(asked.weights.get(t, 0.0) for t in dict.fromkeys(tokens(sentence)))
        if sentence.rstrip().endswith("?"):
            held *= QUESTION_SHARE
        if held > best_held:
            best, best_held = sentence, held
    return best, (best_held / asked.total if asked.total > 0 else 0.0)


def asks_about_a_plan(question: str) -> bool:
    """Whether the question asks about a plan, a wish or what is to come ("What is Ilse
    hoping to do?", "Where does Bruno want to sail next?")."""
    return _ASKS_PLAN.search(question) is not None


def asks_what_was_done(question: str) -> bool:
    """Whether the question asks about something that happened ("When did Ilse go ...",
    "Where has Bruno sailed?"), not about a plan ("What did Ilse plan to do?")."""
    return _ASKS_DONE.search(question) is not None and not asks_about_a_plan(question)


def tells_it_was_missed(text: str) -> bool:
    """Whether a memory tells that the deed it speaks of did not happen for its author
    ("The fair was on Saturday. I missed it, sadly.", "We couldn't make it to the regatta")."""
    return _MISSED.search(text) is not None


def tells_a_plan(sentence: str) -> bool:
    """Whether a sentence tells what is still to come ("We're thinking about going to
    choir camp next month", "I'm going to a ceramics fair this month") and not also
    what happened ("I went last week and will go again")."""
    return _PLAN.search(sentence) is not None and _DONE.search(sentence) is None
