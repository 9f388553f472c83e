"""What an answer's confidence reads beyond its own evidence: facts about how its value was
reached that the answer routes do not report themselves.

* `day_from_weekday`: a WHEN answer whose day was read from a weekday name ("I went
  last Friday", said on a Sunday). Which Friday a speaker means is ambiguous (this week's
  or the one before), so the answer says the day as the speaker did ("the Friday before
  15 July 2023 (2023-07-14)"): the stated value with its ambiguity kept. Reported with the
  factors (`weekday`) so refits can tell these answers apart; they count as direct (on
  the dev conversation, once written that way, 6 of 7 were right, as often as days
  stated outright).
* `memory_lead`: how far recall's first memory leads its second (fused scores, 0-1), the
  ranking's own margin. Reported with the factors so refits can weigh it; the shipped
  model does not use it (on the team's data it did not separate right from wrong answers
  beyond what the answers' own margin does).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from polyg_shared.intents import Intent
from polyg_shared.retrieval import ContextNode, MergedSubgraph

from polyg_core.recall.answer.event_time import full_weekdays, weekday_in
from polyg_core.recall.answer.evidence import Answer, Question, unspoken
from polyg_core.recall.answer.words import best_sentence
from polyg_core.text.normalize import normalize_name
from polyg_core.text.timeparse import TimeMatch, match_times

__all__ = ["day_from_weekday", "memory_lead", "weekday_day_answer", "weekday_in"]

_ONE_DAY = timedelta(days=1)
_NOW_WINDOW = timedelta(minutes=1)


def _first_dating(sentence: str, stated: datetime) -> TimeMatch | None:
    """The time expression a WHEN answer dates its event by: the sentence's first one that
    names more than a clock time and does not end when the text was said (the rule
    `event_time.resolve` follows)."""
    full = full_weekdays(sentence)
    for match in match_times(full, stated):
        if match.clock is not None and match.day is None:
            continue
        if abs(match.end.astimezone(UTC) - stated) <= _NOW_WINDOW:
            continue
        return match
    return None


def day_from_weekday(sentence: str, stated_ms: int) -> datetime | None:
    """The day `sentence` dates its event by when that day was computed from a weekday
    name ("last Friday", "on Tues"), read against when the sentence was said; None when
    the sentence dates it otherwise (a stated date, "yesterday", "last week") or not at
    all."""
    stated = datetime.fromtimestamp(stated_ms / 1000, tz=UTC)
    match = _first_dating(sentence, stated)
    if match is None or not weekday_in(match.text):
        return None
    if match.end - match.start > _ONE_DAY:
        return None  # "the weekend" or a week: a period, not a computed day
    return match.start.astimezone(UTC)


def _said_at(node: ContextNode, sub: MergedSubgraph) -> int | None:
    """When the text of `node` was said: a memory's own time, else the time of the memory
    whose text holds the node's (an event read from a turn)."""
    if node.label == "S_Memory":
        value = node.attributes.get("created_at")
        return int(value) if isinstance(value, int | float) else None
    body = normalize_name(unspoken(node.text))
    if not body:
        return None
    for memory in sub.nodes:
        if memory.label == "S_Memory" and body in normalize_name(memory.text):
            value = memory.attributes.get("created_at")
            if isinstance(value, int | float):
                return int(value)
    return None


def weekday_day_answer(question: str, intent: Intent, sub: MergedSubgraph, answer: Answer) -> bool:
    """Whether a WHEN answer gives a day computed from a weekday name in the sentence it
    quotes (see `day_from_weekday`): the answer gives that day ("the Friday before 12 August
    2025 (2025-08-08)" says it as the speaker did, but the day in brackets is still read)."""
    if answer.evidence.route != "when" or not answer.sources or not answer.evidence.found:
        return False
    node = next((n for n in sub.nodes if n.uuid == answer.sources[0]), None)
    if node is None:
        return False
    said = _said_at(node, sub)
    if said is None:
        return False  # nothing to read the weekday against
    wanted = Question.of(question, intent).wanted
    sentence = unspoken(best_sentence(wanted, node.text))
    day = day_from_weekday(sentence, said)
    return day is not None and day.date().isoformat() in answer.text


def memory_lead(sub: MergedSubgraph) -> float | None:
    """How far the best memory's score leads the second's, as a share of the best (None
    with fewer than two memories)."""
    scores = sorted((n.score for n in sub.nodes if n.label == "S_Memory"), reverse=True)
    if len(scores) < 2 or scores[0] <= 0:
        return None
    return round(max(0.0, (scores[0] - scores[1]) / scores[0]), 3)
