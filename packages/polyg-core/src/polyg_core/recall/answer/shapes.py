"""The shapes of time questions other than "when": a value held before / after / since /
during a time, the value held before the current one, a duration, a frequency.

* "What did Dana work on before May 2025?" asks for what held before May 2025: a value
  that started on 1 May 2025 is not an answer ("before" is strict, "after" and "since"
  prefer what started then).
* "How did Dana take her tea before?" (no time named) asks for the value the current one
  replaced.
* "How long was the billing outage?" asks for a duration: one the evidence states, else
  one measured from the graph (an event's duration, a fact's interval, the span of the
  events about it).
* "How often does Dana run the drill?" asks for a frequency: one the evidence states
  ("every two weeks", "twice a month"), else how many matching events are recorded.
"""

from __future__ import annotations

import re
from typing import Literal

from polyg_shared.intents import Timeframe
from polyg_shared.timeutil import from_epoch_ms, to_epoch_ms

from polyg_core.recall.currency import PAST_VERB, value_shapes, without_deadline
from polyg_core.text.timeparse import CLOCK_TIME

__all__ = [
    "Relation",
    "asks_previous",
    "frequency_in",
    "held",
    "interval_phrase",
    "is_how_often",
    "relation_of",
    "spoken_duration",
]

Relation = Literal["before", "after", "since", "during"]

_BEFORE = re.compile(r"^\W*(?:before|until|till|prior\s+to|up\s+to)\b", re.IGNORECASE)
_AFTER = re.compile(r"^\W*(?:after|later\s+than|from)\b", re.IGNORECASE)
_SINCE = re.compile(r"^\W*since\b", re.IGNORECASE)
# "before?" / "previously" / "used to" with no time after it, or "before" a named change
# ("before the reorg", "prior to her promotion"): the value before the current. A time
# after "before" ("before May 2025") is the classifier's timeframe, which callers test first.
_PREVIOUS = re.compile(
    r"\b(?:before|previously|formerly|originally|earlier|at\s+first)\W*$"
    # "... before relocating?", "... before Bristol?", "... before middle school?" (not a
    # time: "before June 2025?" asks what held then)
    # ("How long before it expires?" asks a duration).
    r"|\bbefore\s+\w+ing\W*$"
    r"|(?<!how\slong\s)(?<!how\ssoon\s)\bbefore\s+"
    r"(?!(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b|\d)"
    r"[\w'’-]+(?:\s+[\w'’-]+){0,2}\s*\?\s*$"
    r"|(?<!how\slong\s)(?<!how\ssoon\s)\b(?:before|prior\s+to)\s+"
    r"(?:the|a|an|his|her|their|its|our|my|your|that|this)\s+"
    r"[\w'’-]+(?:\s+[\w'’-]+){0,5}\s*(?:[,;?!]|\.?$)"
    # "What did Ines used to drive", not the passive "the tool (that is) used to deploy".
    r"|(?<!\bis\s)(?<!\bare\s)(?<!\bwas\s)(?<!\bwere\s)(?<!\bbe\s)(?<!\bbeen\s)\bused\s+to\b"
    r"|\b(?:previous|former)\s+\w+"
    r"|\b(?:originally|original|initially|previously)\b",
    re.IGNORECASE,
)
_HOW_OFTEN = re.compile(
    r"^\W*how\s+(?:often|frequently|many\s+times|regularly)\b|\bhow\s+often\b", re.IGNORECASE
)
_COUNT = (
    r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve|a\s+couple\s+of|a\s+few"
    r"|several)"
)
_UNIT = r"(?:minutes?|hours?|days?|nights?|weeks?|fortnights?|months?|quarters?|years?|sprints?)"
_DAYS = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_FREQUENCY = re.compile(
    rf"\b(?:every\s+(?:other\s+|single\s+)?(?:{_COUNT}\s+)?(?:{_UNIT}|{_DAYS}|morning|evening|"
    rf"night|weekend|release|sprint)"
    rf"|(?:once|twice|thrice|{_COUNT}\s+times?)\s+(?:a|an|per|each|every)\s+(?:{_COUNT}\s+)?"
    rf"{_UNIT}"
    rf"|(?:once|twice|{_COUNT}\s+times?)(?=\W*$)"
    rf"|(?:hourly|daily|nightly|weekly|fortnightly|biweekly|monthly|quarterly|yearly|annually)"
    rf"|on\s+{_DAYS}s"
    rf"|(?:each|every)\s+{_DAYS})\b",
    re.IGNORECASE,
)


def relation_of(tf: Timeframe) -> Relation:
    """How the question places its value against the time it names: "before June 2025"
    (strictly before), "after 2024", "since March", or during it ("in 2024")."""
    phrase = tf.phrase or ""
    if _BEFORE.search(phrase) or (tf.start is None and tf.end is not None):
        return "before"
    if _SINCE.search(phrase):
        return "since"
    if _AFTER.search(phrase) or (tf.end is None and tf.start is not None):
        return "after"
    return "during"


def held(begin: int | None, stop: int | None, tf: Timeframe, relation: Relation) -> bool:
    """Whether a value valid from `begin` to `stop` (None: open) answers a question about
    `tf` in `relation`: before it (strictly), after or since it (still held then), or
    during it (held at some time in it)."""
    lo = to_epoch_ms(tf.start) if tf.start else None
    hi = to_epoch_ms(tf.end) if tf.end else None
    if relation == "before":
        return hi is None or begin is None or begin < hi
    if relation in ("after", "since"):
        return lo is None or stop is None or stop > lo
    return (hi is None or begin is None or begin <= hi) and (
        lo is None or stop is None or stop > lo
    )


# "How did Dana get to work before she moved?": asked in the past, before what someone did.
_BEFORE_A_DEED = re.compile(r"\bbefore\s+(?:he|she|they|we|I|you)\s+\w+", re.IGNORECASE)


def asks_previous(question: str) -> bool:
    """True for a question about the value before the current one ("How did Dana take her
    tea before?", "What did Dana use to drive?", "Dana's previous team", "What was the
    original deadline?", "Which desk did Dana previously have?", "How did Dana commute
    before she moved?"); not a deadline ("What does the lamp need before the gales?",
    "What do I pack before I leave?")."""
    text = without_deadline(question)
    return _PREVIOUS.search(text) is not None or (
        _BEFORE_A_DEED.search(text) is not None and PAST_VERB.search(text) is not None
    )


def is_how_often(question: str) -> bool:
    return _HOW_OFTEN.search(question) is not None


_SCHEDULE = re.compile(
    rf"\b{_DAYS}s\b|\b(?:mon|tue|wed|thu|fri|sat|sun)\w*\s*[/&]\s*(?:mon|tue|wed|thu|fri|sat|sun)"
    # "weekdays only", "weekend shifts"
    r"|\bweek(?:day|end)s\b"
    rf"|{CLOCK_TIME}"
    # a day of every month: "rent due on the 3rd"
    r"|\bthe\s+\d{1,2}(?:st|nd|rd|th)\b",
    re.IGNORECASE,
)


def states_schedule(sentence: str) -> bool:
    """Whether the sentence states when something recurs or at what clock time: a weekday
    in the plural ("Sundays"), days paired ("Tue/Thu"), a frequency ("every Friday"), a
    clock time ("11am", "7:15"), hours as a range ("the 8-11 window"), a time of day in
    words ("at lunchtime now") or a day of the month ("on the 3rd")."""
    return (
        _SCHEDULE.search(sentence) is not None
        or frequency_in(sentence) is not None
        or bool(value_shapes(sentence) & _TIMES_OF_DAY)
    )


_TIMES_OF_DAY = frozenset({"clock", "part of day"})


def frequency_in(sentence: str) -> str | None:
    """The first frequency the sentence states ("every two weeks", "twice a month",
    "daily", "on Mondays"), or None."""
    m = _FREQUENCY.search(sentence)
    return m.group(0) if m else None


_SPANS = (
    ("year", 365 * 86_400_000),
    ("month", 30 * 86_400_000),
    ("week", 7 * 86_400_000),
    ("day", 86_400_000),
    ("hour", 3_600_000),
    ("minute", 60_000),
)


def spoken_duration(ms: int) -> str:
    """A duration as people say it, in its two largest units ("2 hours 30 minutes",
    "1 year 3 months", "11 months")."""
    if ms < 60_000:
        return "less than a minute"
    parts: list[str] = []
    rest = ms
    for name, size in _SPANS:
        count = rest // size
        if count and len(parts) < 2:
            parts.append(f"{count} {name}{'s' if count != 1 else ''}")
            rest -= count * size
        elif parts:
            break
    return " ".join(parts)


def interval_phrase(start_ms: int, end_ms: int | None) -> str:
    """ "(2025-11-03 09:00 to 11:30)", "(2025-02-01 to 2025-09-01)" or "(since 2025-02-01)"."""
    start = from_epoch_ms(start_ms)
    if end_ms is None:
        return f"(since {start.date().isoformat()})"
    end = from_epoch_ms(end_ms)
    if end.date() == start.date() and (start.hour, start.minute) != (0, 0):
        return f"({start:%Y-%m-%d %H:%M} to {end:%H:%M})"
    return f"({start.date().isoformat()} to {end.date().isoformat()})"
