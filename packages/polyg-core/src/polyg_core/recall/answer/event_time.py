"""The time a WHEN answer gives: the event's date as people write it, resolved from what
the evidence says.

A stored text often dates its event relative to when it was written ("I went there
yesterday", "my pottery demo last week"). The answer resolves that against the text's
stated time: "yesterday" in a text of 11 March 2025 is 10 March 2025, "last week" in one of
6 February 2025 is "the week before 6 February 2025", "last year" is the year before. A "how
long" question is answered by the duration the evidence states ("for 4 years").
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from polyg_core.text.timeparse import TimeMatch, planned_times

DAY_MS = 86_400_000
_NEAR_WEEK = timedelta(days=8)  # "the week before D" while D lies in the week after it

_HOW_LONG = re.compile(r"^\W*how\s+long\b", re.IGNORECASE)
_NUMBER = (
    r"(?:\d+(?:\.\d+)?|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"fifteen|twenty|thirty|(?:a\s+)?(?:couple|few)(?:\s+of)?|several|many)"
)
_DURATION = re.compile(
    rf"\b(?:for\s+|about\s+|almost\s+|nearly\s+|over\s+)?(?:the\s+(?:last|past)\s+)?"
    # "2 weeks", "a 2-week sprint"
    rf"{_NUMBER}(?:\s+|-)(?:years?|months?|weeks?|days?|hours?|decades?)(?:\s+ago|\s+now)?\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Dated:
    """When the evidence says its event happened.

    Attributes:
        phrase: the time as an answer writes it ("2025-03-10 (10 March 2025)", "May 2025",
            "the week before 6 February 2025").
        start_ms: the first instant of that time (UTC epoch ms), for the timeframe check.
        resolved: True when a relative expression of the text was resolved.
    """

    phrase: str
    start_ms: int
    resolved: bool


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def _spoken(d: date) -> str:
    return f"{d.day} {d.strftime('%B %Y')}"


def _day_phrase(d: date) -> str:
    return f"{d:%Y-%m-%d} ({_spoken(d)})"


_WEEKDAY = re.compile(
    r"\b(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day|nesday|rsday|urday|sday)?\b\.?",
    re.IGNORECASE,
)


def weekday_in(text: str) -> bool:
    """Whether `text` names a day of the week ("Friday", "last Tues")."""
    return bool(_WEEKDAY.search(text))


def _weekday_phrase(text: str, day: date, stated: date) -> str | None:
    """A day the text names only by its weekday ("last Friday", "on Tues"), as the speaker
    put it, anchored to when it was said, with the day it was read as: "the Friday before
    15 July 2023 (2023-07-14)". Which Friday "last Friday" means is the speaker's, not the
    reader's, to say."""
    if not weekday_in(text) or any(c.isdigit() for c in text):
        return None
    if day < stated and stated - day <= _NEAR_WEEK:
        side = "before"
    elif day > stated and day - stated <= _NEAR_WEEK:
        side = "after"
    else:
        return None
    return f"the {day:%A} {side} {_spoken(stated)} ({day:%Y-%m-%d})"


def is_midnight(ms: int) -> bool:
    """True for a time at 00:00 UTC: a date the writer resolved, with no clock time."""
    return ms % DAY_MS == 0


def describe(match: TimeMatch, stated: date, *, dated_otherwise: bool = False) -> str:
    """A resolved period as people write it: a day, "the week before D", a month, a year;
    a day named only by its weekday as "the Friday before D (day)" unless the text dates it
    otherwise too (`dated_otherwise`: "on Friday, 14 July")."""
    start = match.start.astimezone(UTC)
    end = match.end.astimezone(UTC)
    first, last = start.date(), end.date()
    days = (end - start).total_seconds() / 86_400
    if days <= 1.0:
        by_weekday = None if dated_otherwise else _weekday_phrase(match.text, first, stated)
        return by_weekday or _day_phrase(first)
    text = match.text.lower()
    if "weekend" in text or (days <= 3.0 and first.weekday() == 5):
        unit = "weekend"
    elif days <= 7.0:
        unit = "week"
    else:
        unit = ""
    if unit:
        if last < stated and stated - last <= _NEAR_WEEK:
            return f"the {unit} before {_spoken(stated)}"
        if first > stated and first - stated <= _NEAR_WEEK:
            return f"the {unit} after {_spoken(stated)}"
        return f"the {unit} of {_spoken(first)}"
    if first.day == 1 and (last + timedelta(days=1)).day == 1 and days <= 31.0:
        return first.strftime("%B %Y")
    if (first.month, first.day, last.month, last.day) == (1, 1, 12, 31) and days <= 366.0:
        return str(first.year)
    return f"{_spoken(first)} to {_spoken(last)}"


def _up_to_now(match: TimeMatch, stated: datetime) -> bool:
    """A window that ends when the text was written ("the past week", "earlier this
    month") dates nothing more than the text's own time does."""
    return abs(match.end.astimezone(UTC) - stated) <= timedelta(minutes=1)


_SHORT_WEEKDAY = re.compile(
    r"\b(last|this|next|on|past)\s+(mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)\b\.?", re.IGNORECASE
)
_WEEKDAY_OF = {
    "mon": "Monday", "tue": "Tuesday", "tues": "Tuesday", "wed": "Wednesday",
    "thu": "Thursday", "thur": "Thursday", "thurs": "Thursday", "fri": "Friday",
    "sat": "Saturday", "sun": "Sunday",
}  # fmt: skip


def full_weekdays(text: str) -> str:
    """ "last Tues" as "last Tuesday", so the time parser reads it."""
    return _SHORT_WEEKDAY.sub(lambda m: f"{m[1]} {_WEEKDAY_OF[m[2].lower()]}", text)


# Reading a text's times is kept per (text, time said): memories are read again by many
# questions, and `Dated` is frozen. Bounded.
@functools.lru_cache(maxsize=1 << 14)
def resolve(sentence: str, stated_ms: int, context: str | None = None) -> Dated | None:
    """The date `sentence` gives its event, read against the time it was stated.

    Args:
        sentence: the evidence, e.g. "I went to the support group yesterday".
        stated_ms: when the text was written or said (UTC epoch ms).
        context: the whole text the sentence is from, whose words say whether a day
            without a year is planned ahead (`timeparse.planned_times`).

    Returns:
        The first time expression of the sentence, resolved; else None.
    """
    stated = datetime.fromtimestamp(stated_ms / 1000, tz=UTC)
    matches = planned_times(full_weekdays(sentence), stated, context)
    numbered = any(c.isdigit() for m in matches for c in m.text)
    for match in matches:
        if match.clock is not None and match.day is None:
            continue  # a bare clock time ("at 9") dates nothing on its own
        if _up_to_now(match, stated):
            continue
        phrase = describe(match, stated.date(), dated_otherwise=numbered)
        return Dated(phrase, _ms(match.start), True)
    return None


_ASKS_TIME = re.compile(
    r"^\W*(?:when\b|since\s+when\b|how\s+long\b|(?:what|which)\s+(?:time|date|day|week|month|"
    r"year|season)s?\b|(?:on|in)\s+(?:what|which)\s+(?:date|day|week|month|year)\b)"
    r"|\bhappen(?:ed|s)?\b",
    re.IGNORECASE,
)


def asks_time(question: str) -> bool:
    """True when the question asks for a time (when, how long, what date...) or for what
    happened: a WHEN answer is the form it wants."""
    return bool(_ASKS_TIME.search(question))


def is_how_long(question: str) -> bool:
    return bool(_HOW_LONG.search(question))


@functools.lru_cache(maxsize=1 << 14)
def duration_in(sentence: str) -> str | None:
    """The first duration the sentence states ("4 years", "five years ago"), or None."""
    m = _DURATION.search(sentence)
    if m is None:
        return None
    words = m.group(0).split()
    if words[0].lower() in ("for", "about", "almost", "nearly", "over"):
        words = words[1:]
    if len(words) > 2 and words[0].lower() == "the" and words[1].lower() in ("last", "past"):
        words = words[2:]
    return " ".join(words)
