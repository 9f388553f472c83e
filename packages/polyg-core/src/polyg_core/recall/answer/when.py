"""The WHEN answer: the asked event's time as people write it, then only a short record
of it; "how long" gets the stated duration; "what happened in/to/during ..." lists the
events in time order. The events around the answer go to the reasoning."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from polyg_shared.retrieval import ContextNode, Reasoning

from polyg_core.recall.answer.confidence import Evidence
from polyg_core.recall.answer.current import asks_current_when
from polyg_core.recall.answer.event_time import (
    Dated,
    asks_time,
    duration_in,
    is_how_long,
    is_midnight,
    resolve,
)
from polyg_core.recall.answer.evidence import (
    MAX_LISTED,
    Answer,
    AnswerGraph,
    Question,
    entity_found,
    in_window,
    time_ms,
    unspoken,
)
from polyg_core.recall.answer.shapes import (
    frequency_in,
    interval_phrase,
    is_how_often,
    spoken_duration,
    states_schedule,
)
from polyg_core.recall.answer.words import (
    SPEAKER,
    as_sentence,
    best_sentence,
    format_time,
    overlap,
    short_time,
    terms,
)
from polyg_core.recall.currency import (
    ASKS_WEEKDAY,
    WEEKDAY_STEM,
    asks_about_earlier,
    asks_about_now,
)
from polyg_core.text.normalize import normalize_name

CONTEXT_BEFORE = 2
CONTEXT_AFTER = 2
CONTEXT_WINDOW_MS = 12 * 3600 * 1000
_SPAN_MS = 7 * 86_400_000  # events about one thing this close apart are one stretch of it
SHORT_CONTEXT_WORDS = 8  # a WHEN answer repeats its event only when it is this short

_HAPPENED = re.compile(r"^\W*what\s+(?:has\s+|had\s+|else\s+)?happen(?:ed|s)?\b", re.IGNORECASE)


def _dated(g: AnswerGraph) -> list[ContextNode]:
    events = g.of("T_Event")
    memories = [n for n in g.of("S_Memory") if time_ms(n) is not None]
    return events + memories or [n for n in g.of("T_Fact") if time_ms(n) is not None]


def _relevance(q: Question, g: AnswerGraph, node: ContextNode, best_score: float) -> float:
    words = overlap(q.wanted, node.text)
    named = (
        sum(1 for k in q.entity_keys if g.mentions(node, k)) / len(q.entity_keys)
        if q.entity_keys
        else 0.0
    )
    return words + 0.5 * named + 0.2 * (node.score / best_score if best_score else 0.0)


# "What time ...", "How often did the shuttle run?": a clock time or a frequency.
_ASKS_CLOCK = re.compile(r"\bwhat\s+time\b|\bhow\s+often\b", re.IGNORECASE)
# "When did Noa used to have swimming?", "When did I use to run?", "When was standup held
# previously?": a habit.
_ASKS_HABIT = re.compile(r"\buse[d]?\s+to\b|\bpreviously\b|\busually\b", re.IGNORECASE)


# "What day was Amaru's climbing before?": the day of the week asked, of "thursdays 5pm".
_RECURRING_DAY = re.compile(
    rf"\b{WEEKDAY_STEM}(?:day)?s\b"
    r"|\bevery\s+(?:mon|tue|wed|thu|fri|sat|sun)",
    re.IGNORECASE,
)


def _asks_as_stated(question: str, sentence: str) -> bool:
    """Whether a WHEN question is answered by the schedule or clock time `sentence`
    states: it asks what holds now, what time, of a habit, what held before a change
    ("When did the 74 leave before the timetable change?"), or the day of the week of one
    that recurs."""
    return (
        asks_current_when(question)
        or _ASKS_CLOCK.search(question) is not None
        or _ASKS_HABIT.search(question) is not None
        or asks_about_earlier(question)
        or (
            ASKS_WEEKDAY.search(question) is not None
            and _RECURRING_DAY.search(sentence) is not None
        )
    )


def when_answer(q: Question, g: AnswerGraph) -> Answer:
    cands = _dated(g)
    if not cands:
        return Answer(
            "Nothing in memory is dated for this question.", evidence=Evidence(found=False)
        )
    if _HAPPENED.search(q.text) or not q.about:
        return _happened(q, g, cands)
    ranked = _rank_dated(q, g, cands)
    best = ranked[0]
    at = time_ms(best)
    assert at is not None
    sentence = unspoken(best_sentence(q.wanted, best.text))
    context = _around(g, best, [n for n in cands if n.label == best.label])
    lines = [f"{short_time(t)}: {n.text}" for n, t in context]
    shaped = _shaped_value(q, g, ranked, sentence)
    dated = _dated_phrase(g, best, sentence, at)
    if shaped is None and _asks_as_stated(q.text, sentence) and states_schedule(sentence):
        # "When do I have guitar?" of "Sundays now, 11am", "What time did Ines go to bed?"
        # of "goes to bed around 11:30pm", "When did Noa used to have swimming?" of
        # "swimming sat 9am": the schedule or clock time as stated, not a day it fell on.
        shaped = _Shaped(sentence, [best.uuid])
    text = _when_text(best, sentence, dated, shaped.text if shaped else None)
    evidence = _when_evidence(q, g, ranked, dated, shaped)
    timeline = [f"{short_time(at)}: {best.text}", *lines]
    sources = [*(shaped.sources if shaped else []), best.uuid, *(n.uuid for n, _ in context)]
    return Answer(
        text,
        Reasoning(temporal_context=sorted(timeline)),
        list(dict.fromkeys(sources)),
        evidence,
    )


@dataclass(frozen=True)
class _Shaped:
    """A duration or frequency answer and the nodes it was read from."""

    text: str
    sources: list[str]


def _shaped_value(
    q: Question, g: AnswerGraph, ranked: list[ContextNode], sentence: str
) -> _Shaped | None:
    """For "how long": the duration stated, else measured; for "how often": the frequency
    stated, else the count of matching events. None for other questions, or when the
    evidence holds neither."""
    best = ranked[0]
    if is_how_long(q.text):
        stated = duration_in(sentence)
        if stated is not None:
            return _Shaped(stated, [best.uuid])
        return _measured_duration(q, g, ranked)
    if is_how_often(q.text):
        for n in ranked[:3]:
            said = frequency_in(unspoken(best_sentence(q.wanted, n.text)))
            if said is not None:
                return _Shaped(said, [n.uuid])
        return _counted(q, ranked)
    return None


def _matching(q: Question, nodes: list[ContextNode], least: float = 0.5) -> list[ContextNode]:
    return [n for n in nodes if q.about and overlap(q.about, n.text) >= least]


def _measured_duration(q: Question, g: AnswerGraph, ranked: list[ContextNode]) -> _Shaped | None:
    """An event's recorded duration, a fact's interval (up to now when it still holds), or
    the span from the first to the last event about the asked thing within a week."""
    return _event_length(ranked[0]) or _fact_length(q, g) or _event_span(q, g, ranked[0])


def _event_length(best: ContextNode) -> _Shaped | None:
    length = best.attributes.get("duration_ms")
    at = time_ms(best) or 0
    if not isinstance(length, int | float) or length <= 0:
        return None
    return _Shaped(
        f"{spoken_duration(int(length))} {interval_phrase(at, at + int(length))}", [best.uuid]
    )


def _fact_length(q: Question, g: AnswerGraph) -> _Shaped | None:
    facts = _matching(q, g.of("T_Fact"), 0.99) or _matching(q, g.of("T_Fact"))
    for f in facts:
        begin, stop = f.attributes.get("valid_from"), f.attributes.get("valid_to")
        if not isinstance(begin, int | float):
            continue
        end = int(stop) if isinstance(stop, int | float) else None
        length_ms = (end if end is not None else g.now_ms) - int(begin)
        if length_ms > 0:
            return _Shaped(
                f"{spoken_duration(length_ms)} {interval_phrase(int(begin), end)}", [f.uuid]
            )
    return None


def _event_span(q: Question, g: AnswerGraph, best: ContextNode) -> _Shaped | None:
    at = time_ms(best) or 0
    near = [
        n
        for n in _matching(q, g.of("T_Event"))
        if (t := time_ms(n)) is not None and abs(t - at) <= _SPAN_MS
    ]
    times = sorted(time_ms(n) or 0 for n in near)
    if len(near) < 2 or times[-1] <= times[0]:
        return None
    return _Shaped(
        f"{spoken_duration(times[-1] - times[0])} {interval_phrase(times[0], times[-1])}",
        [n.uuid for n in near],
    )


def _counted(q: Question, ranked: list[ContextNode]) -> _Shaped | None:
    """How many recorded events are about the asked thing, with the first and last."""
    events = [n for n in _matching(q, ranked) if n.label == "T_Event" and time_ms(n)]
    if len(events) < 2:
        return None
    times = sorted(time_ms(n) or 0 for n in events)
    return _Shaped(
        f"{len(events)} times recorded, from {short_time(times[0])} to {short_time(times[-1])}",
        [n.uuid for n in events],
    )


def _rank_dated(q: Question, g: AnswerGraph, cands: list[ContextNode]) -> list[ContextNode]:
    """The dated candidates, those in the asked timeframe first, then (for a question
    about now: "when's the beta?") those no later memory changed, (for one about before a
    change) those one did, then the most relevant."""
    tf = q.intent.timeframe
    best_score = max(n.score for n in cands) or 1.0
    now = asks_about_now(q.text, q.intent, g.now_ms)
    # ... and for a question about what held before a change ("What time did Ines go to
    # bed before the experiment?"), those that a later memory changed.
    earlier = not now and asks_about_earlier(q.text)
    # ... and of those, for now, a later version recall found of a changed memory (not
    # another's note that shares more words: "Ffion feeds her pigs at 6.00 still").
    versions = (
        {str(v) for n in cands if (v := n.attributes.get("superseded_by"))} if now else set[str]()
    )
    return sorted(
        cands,
        key=lambda n: (
            in_window(time_ms(n), tf) if tf else True,
            not (now and n.attributes.get("superseded_by")),
            earlier and bool(n.attributes.get("superseded_by")),
            n.uuid in versions,
            _relevance(q, g, n, best_score),
        ),
        reverse=True,
    )


def _when_text(best: ContextNode, sentence: str, dated: Dated, shaped: str | None) -> str:
    """The duration or frequency asked for, else the time as people write it (and a short
    record of it)."""
    if shaped is not None:
        return as_sentence(shaped)
    text = dated.phrase
    if _record(best, sentence):
        text += f": {sentence}"
    return as_sentence(text)


def _when_evidence(
    q: Question,
    g: AnswerGraph,
    ranked: list[ContextNode],
    dated: Dated,
    shaped: _Shaped | None,
) -> Evidence:
    best = ranked[0]
    at = time_ms(best) or 0
    tf = q.intent.timeframe
    # A time the evidence states (a date, a resolved "last week", a record's own time)
    # answers; the time a text was said, when it states none, may be days from the event.
    said_only = (
        shaped is None
        and not dated.resolved
        and not is_midnight(dated.start_ms)
        and _stated_ms(g, best, at) is not None
    )
    if shaped is not None and shaped.sources[0] in g.by_id:
        # A duration measured from a fact or from events rests on those, not on the event
        # the time question would have named.
        best = g.by_id[shaped.sources[0]]
    rel = overlap(q.wanted, best.text)
    runner = max((overlap(q.wanted, n.text) for n in ranked[1:]), default=0.0)
    same_day = sum(
        1
        for n in ranked[1:4]
        if (t := time_ms(n)) is not None
        and abs(t - at) < 86_400_000
        and overlap(q.about, n.text) > 0
    )
    return Evidence(
        quoted=best.label == "S_Memory",
        match=rel,
        entity=entity_found(q, g, best),
        time=(1.0 if in_window(dated.start_ms, tf) or in_window(at, tf) else 0.0) if tf else None,
        agreement=max(len(best.views), 1) + same_day,
        margin=max(0.0, rel - runner),
        shaped=shaped is not None
        if is_how_long(q.text) or is_how_often(q.text)
        else asks_time(q.text),
        direct=not said_only,
    )


_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|me|my|we|we're|our|us|you|your)\b", re.IGNORECASE)


def _record(node: ContextNode, sentence: str) -> bool:
    """A short record of an event ("Auth service crashed on startup"), worth repeating after
    its time; a quote of someone's words is not (it stays in the reasoning)."""
    return (
        node.label == "T_Event"
        and SPEAKER.match(node.text) is None
        and len(sentence.split()) <= SHORT_CONTEXT_WORDS
        and _FIRST_PERSON.search(sentence) is None
    )


def _stated_ms(g: AnswerGraph, node: ContextNode, at: int) -> int | None:
    """When the node's text was written, for reading its relative dates: a memory's own
    time, an event's source memory's time, else the event's time when its text is someone's
    words with a clock time (a writer that resolved a relative date stores the day at 00:00,
    which is not when it was said). A record of an event ("billing-v2 beta launched") is
    dated by its own time, not by a date it mentions: None."""
    if node.label == "S_Memory":
        return at
    body = normalize_name(unspoken(node.text))
    for m in g.of("S_Memory"):
        if body and body in normalize_name(m.text) and (t := time_ms(m)) is not None:
            return t
    quoted = SPEAKER.match(node.text) is not None or _FIRST_PERSON.search(node.text) is not None
    return at if quoted and not is_midnight(at) else None


def _dated_phrase(g: AnswerGraph, node: ContextNode, sentence: str, at: int) -> Dated:
    stated = _stated_ms(g, node, at)
    if stated is not None and (dated := resolve(sentence, stated, node.text)) is not None:
        return dated
    if is_midnight(at):
        # The writer resolved the date; say it no finer than the text does.
        day = datetime.fromtimestamp(at / 1000, tz=UTC)
        words = set(terms(sentence))
        if (day.month, day.day) == (1, 1) and "year" in words:
            return Dated(str(day.year), at, False)
        if day.day == 1 and "month" in words:
            return Dated(day.strftime("%B %Y"), at, False)
    return Dated(format_time(at), at, False)


def _around(
    g: AnswerGraph, best: ContextNode, pool: list[ContextNode]
) -> list[tuple[ContextNode, int]]:
    """Up to two events before and two after `best`, the same day, sharing an entity."""
    at = time_ms(best)
    if at is None or best.label != "T_Event":
        return []
    mine = g.names_of(best)
    near: list[tuple[ContextNode, int]] = []
    for n in pool:
        t = time_ms(n)
        if n.uuid == best.uuid or t is None or abs(t - at) > CONTEXT_WINDOW_MS:
            continue
        if mine and not (mine & g.names_of(n)):
            continue
        near.append((n, t))
    before = sorted((p for p in near if p[1] <= at), key=lambda p: -p[1])[:CONTEXT_BEFORE]
    after = sorted((p for p in near if p[1] > at), key=lambda p: p[1])[:CONTEXT_AFTER]
    return sorted(before + after, key=lambda p: p[1])


def _happened(q: Question, g: AnswerGraph, cands: list[ContextNode]) -> Answer:
    """What happened in a period, or to an entity (during another one's events)."""
    tf = q.intent.timeframe
    focus_key = q.entity_keys[0] if q.entity_keys else None
    pool = _happened_pool(q, g, cands)
    if not pool:
        return _nothing_happened(tf is not None, focus_key is not None)
    best_score = max(n.score for n in pool) or 1.0
    chosen = sorted(pool, key=lambda n: -_relevance(q, g, n, best_score))[:MAX_LISTED]
    dated = sorted(((n, time_ms(n) or 0) for n in chosen), key=lambda p: p[1])
    lines = [f"{short_time(t)}: {n.text}" for n, t in dated]
    text = "; ".join(lines) + "."
    if len(pool) > len(chosen):
        text += f" ({len(pool) - len(chosen)} more events)"
    evidence = _happened_evidence(q, g, chosen)
    return Answer(text, Reasoning(temporal_context=lines), [n.uuid for n in chosen], evidence)


def _happened_evidence(q: Question, g: AnswerGraph, chosen: list[ContextNode]) -> Evidence:
    focus_key = q.entity_keys[0] if q.entity_keys else None
    found_entity = bool(focus_key) and any(g.mentions(n, focus_key) for n in chosen)
    # A question that names only a period or entities is answered by their events.
    match = max((overlap(q.about, n.text) for n in chosen), default=0.0) if q.about else 1.0
    return Evidence(
        match=match,
        entity=(1.0 if found_entity else 0.0) if focus_key else None,
        time=(1.0 if q.intent.timeframe is not None else None),
        agreement=len(chosen),
    )


def _nothing_happened(timed: bool, focused: bool) -> Answer:
    return Answer(
        "Nothing in memory happened then." if timed else "Nothing in memory is dated for this.",
        evidence=Evidence(
            entity=0.0 if focused else None, time=0.0 if timed else None, found=False
        ),
    )


def _happened_pool(q: Question, g: AnswerGraph, cands: list[ContextNode]) -> list[ContextNode]:
    """The events in the asked timeframe, those of the asked entity when it has some."""
    tf = q.intent.timeframe
    pool = [n for n in cands if n.label == "T_Event"] or cands
    if tf is not None:
        pool = [n for n in pool if in_window(time_ms(n), tf)]
    if not q.entity_keys:
        return pool
    focus_key, others = q.entity_keys[0], q.entity_keys[1:]
    mine = [n for n in pool if g.mentions(n, focus_key)]
    if mine and others:
        mine = _during(g, pool, mine, others)
    return mine or pool


def _during(
    g: AnswerGraph, pool: list[ContextNode], mine: list[ContextNode], others: list[str]
) -> list[ContextNode]:
    """ "X during Y": X's events within the span of Y's events (all of X's when none)."""
    span = [
        t for n in pool if any(g.mentions(n, k) for k in others) and (t := time_ms(n)) is not None
    ]
    if not span:
        return mine
    lo, hi = min(span), max(span)
    inside = [n for n in mine if lo <= (time_ms(n) or 0) <= hi]
    return inside or mine
