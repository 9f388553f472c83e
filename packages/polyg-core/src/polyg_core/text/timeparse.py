"""Time expressions in questions and notes, resolved against a reference time.

Nothing here looks at the wall clock: every relative phrase ("yesterday",
"last Tuesday", "3 weeks ago") is resolved against the reference time the
caller passes, in that reference's time zone (naive references are UTC), and
results come back in UTC. Ambiguous dates prefer the past. Periods are
returned with an inclusive end (the last millisecond of the period).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time, timedelta, timezone, tzinfo
from typing import Any

from polyg_shared.intents import Timeframe

logger = logging.getLogger(__name__)

__all__ = [
    "CLOCK_TIME",
    "TimeMatch",
    "ahead_of",
    "find_times",
    "match_times",
    "parse_timeframe",
    "planned_times",
]

CLOCK_TIME = (
    r"\b\d{1,2}(?::\d{2})?\s*(?:am|pm)\b|\b\d{1,2}:\d{2}\b"
    # "pigs at 9.15", "green 7.45": hours and minutes with a dot, not a price ("£4.50"), a
    # share ("3.79%") or a measure ("2.50 m", "12.30kg")
    r"|(?<![£$€¥\d.,])\b(?:1\d|2[0-3]|0?[1-9])\.[0-5]\d\b"
    r"(?![.,]?\d|\s*(?:%|/|x\b|[kcm]?m\b|[km]?g\b|kgs?\b|lbs?\b|[mg]b\b|m?l\b|t\b|ft\b|in\b))"
)
"""A clock time as notes write it ("9am", "7:15", "11:30pm", "9.15"); compile it
case-insensitive."""

_MS = timedelta(milliseconds=1)
_LOW = datetime(1, 1, 2, tzinfo=UTC)
_HIGH = datetime(9999, 12, 30, tzinfo=UTC)
_MAX_TEXT = 20_000  # longer texts are scanned in their first 20,000 characters only

_MONTHS = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
    "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "a couple of": 2, "couple of": 2, "a few": 3, "few": 3, "several": 3,
}  # fmt: skip
_PARTS_OF_DAY = {"morning": (6, 12), "afternoon": (12, 18), "evening": (18, 24), "night": (18, 30)}

_M = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_N = r"(?:\d{1,4}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|(?:a )?couple of|(?:a )?few|several)"
_UNIT = r"(?:minute|min|hour|hr|day|week|month|year)s?"
_PREP = r"(?:in|since|during|until|till|before|after|from|by|of|throughout|to|and|through)"
_TZ = r"(?:Z|UTC|GMT|[+-]\d{2}(?::?\d{2})?)"
_PART = r"(?:\s+(?P<part>morning|afternoon|evening|night))?"


@dataclass(frozen=True)
class TimeMatch:
    """A time expression found in text and the UTC period it stands for.

    Attributes:
        span: (start, end) character offsets of the expression in the text.
        text: the expression as written.
        start: first instant of the period (UTC).
        end: last instant of the period, inclusive (UTC); equal to start for a point.
    """

    span: tuple[int, int]
    text: str
    start: datetime
    end: datetime
    day: date | None = None  # set when the expression names a whole day, so a clock time can join
    clock: time | None = None  # set for a bare time of day ("14:30"), resolved on a nearby day


@dataclass(frozen=True)
class _Ref:
    now: datetime  # the reference, in its own zone
    tz: tzinfo

    @property
    def today(self) -> date:
        return self.now.date()

    def at(self, d: date, t: time = time(0)) -> datetime:
        return datetime.combine(d, t, tzinfo=self.tz)


def _ref(reference: datetime) -> _Ref:
    now = reference if reference.tzinfo is not None else reference.replace(tzinfo=UTC)
    tz = now.tzinfo or UTC
    return _Ref(now=now, tz=tz)


def _period(begin: datetime, next_begin: datetime) -> tuple[datetime, datetime]:
    return begin.astimezone(UTC), (next_begin - _MS).astimezone(UTC)


def _day(r: _Ref, d: date) -> tuple[datetime, datetime]:
    return _period(r.at(d), r.at(d + timedelta(days=1)))


def _month_start(year: int, month: int) -> date:
    year += (month - 1) // 12
    month = (month - 1) % 12 + 1
    return date(year, month, 1)


def _month(r: _Ref, year: int, month: int) -> tuple[datetime, datetime]:
    return _period(r.at(_month_start(year, month)), r.at(_month_start(year, month + 1)))


def _year(r: _Ref, year: int) -> tuple[datetime, datetime]:
    return _period(r.at(date(year, 1, 1)), r.at(date(year + 1, 1, 1)))


def _week(r: _Ref, d: date) -> tuple[datetime, datetime]:
    monday = d - timedelta(days=d.weekday())
    return _period(r.at(monday), r.at(monday + timedelta(days=7)))


def _number(word: str) -> int:
    word = " ".join(word.lower().split())
    return int(word) if word.isdigit() else _NUMBERS[word]


def _unit(word: str) -> str:
    word = word.lower().rstrip("s")
    return {"min": "minute", "hr": "hour"}.get(word, word)


def _shift(r: _Ref, n: int, unit: str) -> datetime:
    """The reference moved by n units (negative: into the past), months by calendar."""
    if unit in ("month", "quarter", "year"):
        months = n * {"month": 1, "quarter": 3, "year": 12}[unit]
        first = _month_start(r.today.year, r.today.month + months)
        # Keep the day of month where it exists (Mar 31 - 1 month -> Feb 28/29).
        last_day = (_month_start(first.year, first.month + 1) - timedelta(days=1)).day
        d = first.replace(day=min(r.today.day, last_day))
        return datetime.combine(d, r.now.timetz())
    seconds = {"minute": 60, "hour": 3600, "day": 86400, "week": 604800}[unit]
    return r.now + timedelta(seconds=n * seconds)


def _unit_period(r: _Ref, moment: datetime, unit: str) -> tuple[datetime, datetime]:
    """The calendar unit (day, week, month, year) containing moment; minutes/hours are points."""
    local = moment.astimezone(r.tz)
    if unit == "day":
        return _day(r, local.date())
    if unit == "week":
        return _week(r, local.date())
    if unit == "month":
        return _month(r, local.year, local.month)
    if unit == "year":
        return _year(r, local.year)
    utc = moment.astimezone(UTC)
    return utc, utc


def _past_date(r: _Ref, month: int, day: int) -> date:
    """The most recent month/day on or before the reference day (prefer the past)."""
    year = r.today.year
    while True:
        try:
            candidate = date(year, month, day)
        except ValueError:  # Feb 29 in a non-leap year: look further back
            year -= 1
            if r.today.year - year > 8:
                raise
            continue
        if candidate <= r.today:
            return candidate
        year -= 1


def _tz_of(text: str | None) -> tzinfo | None:
    if not text:
        return None
    text = text.upper()
    if text in ("Z", "UTC", "GMT"):
        return UTC
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    hours = int(digits[:2])
    minutes = int(digits[2:4]) if len(digits) >= 4 else 0
    return timezone(sign * timedelta(hours=hours, minutes=minutes))


def _clock(hour: int, minute: int, second: int, meridiem: str | None) -> time:
    if meridiem:
        pm = meridiem.lower().startswith("p")
        if hour == 12:
            hour = 0
        if pm:
            hour += 12
    return time(hour, minute, second)


# --- rules: each turns a regex match into (start, end[, day, clock]) --------------------------

_Result = tuple[datetime, datetime] | TimeMatch
_Rule = tuple[re.Pattern[str], Callable[[re.Match[str], _Ref], _Result | None]]


def _iso_datetime(m: re.Match[str], r: _Ref) -> _Result:
    y, mo, d, h, mi = (int(m.group(i)) for i in range(1, 6))
    sec = int(m.group(6) or 0)
    frac = (m.group(7) or "0").ljust(6, "0")[:6]
    tz = _tz_of(m.group(8)) or r.tz
    moment = datetime(y, mo, d, h, mi, sec, int(frac), tzinfo=tz).astimezone(UTC)
    return moment, moment


def _iso_date(m: re.Match[str], r: _Ref) -> _Result:
    d = date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    start, end = _day(r, d)
    return TimeMatch((0, 0), "", start, end, day=d)


def _numeric_date(m: re.Match[str], r: _Ref) -> _Result | None:
    # Numeric dates are ambiguous (03/04/2024); dateparser applies the English day order.
    parsed = _dateparser(m.group(0), r)
    if parsed is None:
        return None
    d = parsed.astimezone(r.tz).date()
    start, end = _day(r, d)
    return TimeMatch((0, 0), "", start, end, day=d)


def _month_day(m: re.Match[str], r: _Ref) -> _Result:
    month = _MONTHS[m.group("mon")[:3].lower()]
    day = int(m.group("day"))
    d = date(int(m.group("year")), month, day) if m.group("year") else _past_date(r, month, day)
    start, end = _day(r, d)
    return TimeMatch((0, 0), "", start, end, day=d)


def _month_year(m: re.Match[str], r: _Ref) -> _Result:
    return _month(r, int(m.group("year")), _MONTHS[m.group("mon")[:3].lower()])


def _bare_month(m: re.Match[str], r: _Ref) -> _Result:
    month = _MONTHS[m.group("mon")[:3].lower()]
    which = (m.group("which") or "").lower()
    year = r.today.year
    if month > r.today.month or (which == "last" and month == r.today.month):
        year -= 1
    if which == "next":
        year = r.today.year + (1 if month <= r.today.month else 0)
    return _month(r, year, month)


_ORDINAL_QUARTERS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "last": 4}


def _quarter(m: re.Match[str], r: _Ref) -> _Result:
    """ "Q4 2025", "2025 Q4", "Q1" (the most recent one), "the third quarter of 2024"."""
    q_text = m.group("q") or m.group("q2")
    q = (
        int(q_text)
        if q_text and q_text.isdigit()
        else _ORDINAL_QUARTERS[(m.group("ord") or "").lower()]
    )
    year_text = m.group("year") or m.group("year2") or m.group("year3")
    if year_text:
        year = int(year_text)
    else:  # a bare quarter prefers the past: Q4 asked in March is last year's
        year = r.today.year if (q - 1) * 3 + 1 <= r.today.month else r.today.year - 1
    first = date(year, (q - 1) * 3 + 1, 1)
    return _period(r.at(first), r.at(_month_start(year, first.month + 3)))


def _year_rule(m: re.Match[str], r: _Ref) -> _Result:
    return _year(r, int(m.group("year")))


def _day_word(m: re.Match[str], r: _Ref) -> _Result:
    word = " ".join(m.group("word").lower().split())
    offsets = {"today": 0, "yesterday": -1, "tomorrow": 1, "the day before yesterday": -2}
    part = (m.group("part") or "").lower()
    if word == "tonight":
        word, part = "today", "night"
    if word == "last night":
        word, part = "yesterday", "night"
    if word.startswith("this "):
        word, part = "today", word.split()[1]
    return _day_or_part(r, r.today + timedelta(days=offsets[word]), part)


def _day_or_part(r: _Ref, d: date, part: str) -> _Result:
    """Day `d` whole, or the part of it named (`morning`, `night`...)."""
    if part:
        lo, hi = _PARTS_OF_DAY[part]
        return _period(r.at(d) + timedelta(hours=lo), r.at(d) + timedelta(hours=hi))
    start, end = _day(r, d)
    return TimeMatch((0, 0), "", start, end, day=d)


def _weekday(m: re.Match[str], r: _Ref) -> _Result:
    target = _WEEKDAYS.index(m.group("wd").lower())
    which = (m.group("which") or "").lower()
    today = r.today
    back = (today.weekday() - target) % 7
    if which in ("last", "past", "previous"):
        d = today - timedelta(days=back or 7)
    elif which == "next":
        d = today + timedelta(days=(target - today.weekday()) % 7 or 7)
    elif which == "this":
        d = today - timedelta(days=today.weekday()) + timedelta(days=target)
    else:  # a bare weekday prefers the past, today included
        d = today - timedelta(days=back)
    return _day_or_part(r, d, (m.group("part") or "").lower())


def _calendar(m: re.Match[str], r: _Ref) -> _Result:
    which = m.group("which").lower()
    unit = m.group("unit").lower()
    if unit == "weekend":
        saturday = r.today - timedelta(days=(r.today.weekday() - 5) % 7)
        if which in ("last", "past", "previous") and saturday + timedelta(days=1) >= r.today:
            saturday -= timedelta(days=7)
        if which == "next":
            saturday += timedelta(days=7)
        return _period(r.at(saturday), r.at(saturday + timedelta(days=2)))
    if which == "past":  # "the past week": a rolling window up to the reference
        return _shift(r, -1, unit).astimezone(UTC), r.now.astimezone(UTC)
    step = {"last": -1, "previous": -1, "this": 0, "current": 0, "next": 1}[which]
    if unit == "quarter":
        q0 = (r.today.month - 1) // 3 * 3 + 1 + 3 * step
        first = _month_start(r.today.year, q0)
        return _period(r.at(first), r.at(_month_start(first.year, first.month + 3)))
    if unit == "week":
        return _week(r, r.today + timedelta(weeks=step))
    if unit == "month":
        return _month(r, r.today.year, r.today.month + step)
    return _year(r, r.today.year + step)


def _earlier_this(m: re.Match[str], r: _Ref) -> _Result:
    unit = m.group("unit").lower()
    start, _ = _unit_period(r, r.now, unit)
    return start, r.now.astimezone(UTC)


def _rolling(m: re.Match[str], r: _Ref) -> _Result:
    n = _number(m.group("n") or "1")
    return _shift(r, -n, _unit(m.group("unit"))).astimezone(UTC), r.now.astimezone(UTC)


def _ago(m: re.Match[str], r: _Ref) -> _Result:
    unit = _unit(m.group("unit"))
    moment = _shift(r, -_number(m.group("n")), unit)
    start, end = _unit_period(r, moment, unit)
    if unit == "day":
        return TimeMatch((0, 0), "", start, end, day=moment.astimezone(r.tz).date())
    return start, end


def _ahead(m: re.Match[str], r: _Ref) -> _Result:
    unit = _unit(m.group("unit"))
    return _unit_period(r, _shift(r, _number(m.group("n")), unit), unit)


def _time_of_day(m: re.Match[str], r: _Ref) -> _Result:
    word = (m.group("word") or "").lower()
    if word:
        clock = time(12) if word == "noon" else time(0)
    else:
        clock = _clock(
            int(m.group("h")), int(m.group("mi") or 0), int(m.group("s") or 0), m.group("ampm")
        )
    tz = _tz_of(m.group("tz"))
    if tz is not None:
        clock = clock.replace(tzinfo=tz)
    moment = _on_day(r, r.today, clock)
    if moment > r.now.astimezone(UTC):  # prefer the past: a clock time later than now was yesterday
        moment = _on_day(r, r.today - timedelta(days=1), clock)
    return TimeMatch((0, 0), "", moment, moment, clock=clock)


def _on_day(r: _Ref, d: date, clock: time) -> datetime:
    tz = clock.tzinfo or r.tz
    return datetime.combine(d, clock.replace(tzinfo=None), tzinfo=tz).astimezone(UTC)


def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_RULES: list[_Rule] = [
    (
        _compile(
            r"\b(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?"
            rf"(?:\s?({_TZ}))?(?![\w:])"
        ),
        _iso_datetime,
    ),
    (_compile(r"\b(\d{4})[-/](\d{1,2})[-/](\d{1,2})\b(?!-)"), _iso_date),
    (_compile(r"(?<![\d.])\b\d{1,2}[/.]\d{1,2}[/.](?:\d{4}|\d{2})\b(?![/.]\d)"), _numeric_date),
    (
        _compile(
            rf"\b(?P<mon>{_M})\.?\s+(?P<day>[0-3]?\d)(?:st|nd|rd|th)?\b(?!:)(?:,?\s+(?P<year>\d{{4}})\b)?"
        ),
        _month_day,
    ),
    (
        _compile(
            rf"\b(?:the\s+)?(?P<day>[0-3]?\d)(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<mon>{_M})\b\.?(?:,?\s+(?P<year>\d{{4}})\b)?"
        ),
        _month_day,
    ),
    (_compile(rf"\b(?P<mon>{_M})\.?,?\s+(?:of\s+)?(?P<year>\d{{4}})\b"), _month_year),
    (
        _compile(
            rf"\b(?:{_PREP}\s+|(?=(?:last|this|next)\s))(?P<x>(?:(?P<which>last|this|next)\s+)?"
            rf"(?:early\s+|late\s+|mid-?)?(?P<mon>{_M})\b)(?!-)"
        ),
        _bare_month,
    ),
    (
        _compile(
            r"\b(?:(?P<year2>(?:19|20)\d{2})[\s-]?Q(?P<q2>[1-4])|Q(?P<q>[1-4])(?:[\s-]?(?:of\s+)?"
            r"(?P<year>(?:19|20)\d{2}))?|(?:the\s+)?(?P<ord>first|second|third|fourth|last)\s+"
            r"quarter\s+of\s+(?P<year3>(?:19|20)\d{2}))\b"
        ),
        _quarter,
    ),
    (_compile(rf"\b{_PREP}\s+(?P<x>(?P<year>(?:19|20)\d{{2}}))\b(?![-/.:]\d)"), _year_rule),
    (
        _compile(
            r"\b(?P<word>the\s+day\s+before\s+yesterday|today|tonight|yesterday|tomorrow|last\s+night"
            r"|this\s+(?:morning|afternoon|evening))\b" + _PART
        ),
        _day_word,
    ),
    (
        _compile(
            r"\b(?:(?P<which>last|this|next|past|previous|on)\s+)?"
            # "on Tuesdays" recurs: a plural names no one day
            r"(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday)(?:'s)?\b" + _PART
        ),
        _weekday,
    ),
    (
        _compile(
            r"\b(?:the\s+)?(?P<which>last|this|next|past|previous|current)\s+"
            r"(?P<unit>week|weekend|month|year|quarter)\b"
        ),
        _calendar,
    ),
    (_compile(r"\bearlier\s+this\s+(?P<unit>week|month|year)\b"), _earlier_this),
    (
        _compile(
            rf"\b(?:(?:in|over|during|within)\s+)?(?:the\s+)?(?:last|past|previous)\s+"
            rf"(?P<n>{_N})\s+(?P<unit>{_UNIT})\b"
        ),
        _rolling,
    ),
    (_compile(rf"\b(?P<n>{_N})\s+(?P<unit>{_UNIT})\s+ago\b"), _ago),
    (
        _compile(
            rf"\b(?:in\s+(?P<n>{_N})\s+(?P<unit>{_UNIT})\b(?!\s+ago)|(?P<n2>{_N})\s+(?P<unit2>{_UNIT})\s+from\s+now\b)"
        ),
        lambda m, r: _ahead_either(m, r),
    ),
    (
        _compile(
            r"(?<![\d:.\-/])(?:\b(?P<word>noon|midnight)\b|(?P<h>[01]?\d|2[0-3]):(?P<mi>[0-5]\d)(?::(?P<s>[0-5]\d))?"
            rf"(?:\s*(?P<ampm>[ap]\.?m\.?)(?!\w))?(?:\s?(?P<tz>{_TZ})\b)?(?![\d:])"
            r"|\b(?P<h12>1[0-2]|0?[1-9])\s*(?P<ampm12>[ap]\.?m\.?)(?!\w))"
        ),
        lambda m, r: _time_either(m, r),
    ),
]


def _ahead_either(m: re.Match[str], r: _Ref) -> _Result:
    if m.group("n") is not None:
        return _ahead(m, r)
    unit = _unit(m.group("unit2"))
    return _unit_period(r, _shift(r, _number(m.group("n2")), unit), unit)


def _time_either(m: re.Match[str], r: _Ref) -> _Result:
    if m.group("h12") is not None:
        clock = _clock(int(m.group("h12")), 0, 0, m.group("ampm12"))
        moment = _on_day(r, r.today, clock)
        if moment > r.now.astimezone(UTC):
            moment = _on_day(r, r.today - timedelta(days=1), clock)
        return TimeMatch((0, 0), "", moment, moment, clock=clock)
    return _time_of_day(m, r)


# --- scanning ---------------------------------------------------------------------------------


def _in_range(start: datetime, end: datetime) -> bool:
    return _LOW <= start <= end <= _HIGH


def _scan(text: str, r: _Ref) -> list[TimeMatch]:
    found: list[TimeMatch] = []
    for pattern, rule in _RULES:
        for m in pattern.finditer(text):
            try:
                result = rule(m, r)
            except (ValueError, OverflowError, KeyError, IndexError):
                continue  # an impossible date ("Feb 30") or one out of datetime's range
            if result is None:
                continue
            tm = result if isinstance(result, TimeMatch) else TimeMatch((0, 0), "", *result)
            if not _in_range(tm.start, tm.end):
                continue
            span = m.span("x") if "x" in pattern.groupindex and m.group("x") else m.span()
            found.append(replace(tm, span=span, text=text[span[0] : span[1]]))
    found.sort(key=lambda t: (t.span[0], -(t.span[1] - t.span[0])))
    chosen: list[TimeMatch] = []
    last_end = -1
    for tm in found:
        if tm.span[0] >= last_end:
            chosen.append(tm)
            last_end = tm.span[1]
    return _join_day_and_clock(text, chosen, r)


_JOIN_GAP = re.compile(r"^\s*(?:,\s*)?(?:at|@|on|by|around|about)?\s*$", re.IGNORECASE)


def _join_day_and_clock(text: str, matches: list[TimeMatch], r: _Ref) -> list[TimeMatch]:
    """Join "2024-03-15 at 14:30" or "14:30 yesterday" into one instant on that day."""
    out: list[TimeMatch] = []
    i = 0
    while i < len(matches):
        a = matches[i]
        b = matches[i + 1] if i + 1 < len(matches) else None
        if b is not None and _JOIN_GAP.match(text[a.span[1] : b.span[0]]):
            day, clock = (a.day, b.clock) if a.day and b.clock else (b.day, a.clock)
            if day is not None and clock is not None:
                moment = _on_day(r, day, clock)
                if _in_range(moment, moment):
                    span = (a.span[0], b.span[1])
                    out.append(TimeMatch(span, text[span[0] : span[1]], moment, moment))
                    i += 2
                    continue
        out.append(a)
        i += 1
    return out


def match_times(text: str, reference: datetime) -> list[TimeMatch]:
    """Every time expression in text, resolved against the reference time.

    Never raises on odd text; expressions that name impossible dates are skipped.
    """
    return _scan(text[:_MAX_TEXT], _ref(reference))


# "Falcon beta target: June 28", "out July 8", "due March 3": a plan, dated ahead of when
# it was written; "we met on June 28" looks back.
_AHEAD = re.compile(
    r"\b(?:target(?:ed|s)?|due|deadline|launch(?:es|ing)?|go-live|starts?|starting|begins?|"
    r"booked|scheduled|planned|plans?|will|going\s+to|gonna|upcoming|next|leaving|leaves|"
    r"expires?|pushed|postponed|rescheduled|slipped|ETA)\b",
    re.IGNORECASE,
)
_YEAR = re.compile(r"\b\d{4}\b")
_RECENT = timedelta(days=90)


def ahead_of(sentence: str, match: TimeMatch, stated: datetime) -> TimeMatch:
    """A day named by month and day alone, in a sentence that plans ahead, falls on its
    next occurrence after the time it was written, not its last one, unless its last one
    was within a season before (a plan since passed or missed)."""
    day = match.day
    if day is None or _YEAR.search(match.text) or not _AHEAD.search(sentence):
        return match
    if stated.date() - day <= _RECENT or not any(m in match.text.lower() for m in _MONTHS):
        # On or after the day written, or within a season before it: as read.
        return match
    try:
        later = day.replace(year=day.year + 1)
    except ValueError:  # 29 February
        return match
    shift = later - day
    return replace(match, day=later, start=match.start + shift, end=match.end + shift)


def planned_times(text: str, reference: datetime, context: str | None = None) -> list[TimeMatch]:
    """`match_times` for a text written at `reference`, a day it plans read ahead of it
    (`ahead_of`): what a note says, not what a question asks. `context`, the whole note
    `text` is a sentence of, tells whether it plans ("target: June 12" read as "June 12")."""
    plans = text if context is None else context
    return [ahead_of(plans, m, reference) for m in match_times(text, reference)]


def find_times(text: str, reference: datetime) -> list[tuple[tuple[int, int], datetime]]:
    """Spans of time expressions and the UTC instant each one starts at.

    "yesterday" gives the start of yesterday, "at 14:30" the reference day's 14:30
    (the day before when that would be after the reference).
    """
    return [(m.span, m.start) for m in match_times(text, reference)]


_OPENERS = {
    "since": "since",
    "after": "after",
    "before": "before",
    "until": "until",
    "till": "until",
    "up to": "until",
    "between": "between",
    "from": "from",
}
_OPENER = re.compile(r"\b(since|after|before|until|till|up\s+to|between|from)\s+$", re.IGNORECASE)
_RANGE_GAP = re.compile(r"^\s*(?:and|to|until|till|through|thru|-|–|—)\s*$", re.IGNORECASE)


def parse_timeframe(text: str, reference: datetime) -> Timeframe | None:
    """The time window a question or phrase refers to, or None when it names no time.

    Handles single expressions ("last Tuesday", "in March 2024"), ranges
    ("between 2024-03-01 and 2024-03-15", "from Monday to Wednesday") and open
    ranges ("since January" ends at the reference, "after X" stays open,
    "before X" has no start). Several unrelated expressions give their union.
    Falls back to dateparser for a short phrase none of the rules reads.
    """
    r = _ref(reference)
    text = text[:_MAX_TEXT]
    matches = _scan(text, r)
    if not matches:
        return _dateparser_timeframe(text, r)
    first = matches[0]
    opener = _OPENER.search(text[: first.span[0]])
    word = _OPENERS[" ".join(opener.group(1).lower().split())] if opener else None
    phrase_start = opener.start() if opener else first.span[0]
    if len(matches) >= 2 and _RANGE_GAP.match(text[first.span[1] : matches[1].span[0]]):
        second = matches[1]
        start, end = min(first.start, second.start), max(first.end, second.end)
        return Timeframe(start=start, end=end, phrase=text[phrase_start : second.span[1]])
    phrase = text[phrase_start : first.span[1]]
    now = r.now.astimezone(UTC)
    if word == "since":
        return Timeframe(
            start=first.start, end=now if now >= first.start else first.end, phrase=phrase
        )
    if word == "after":
        return Timeframe(start=first.end, end=None, phrase=phrase)
    if word == "before":
        return Timeframe(start=None, end=first.start, phrase=phrase)
    if word == "until":
        return Timeframe(start=None, end=first.end, phrase=phrase)
    start = min(m.start for m in matches)
    end = max(m.end for m in matches)
    if len(matches) > 1:
        phrase = text[phrase_start : matches[-1].span[1]]
    return Timeframe(start=start, end=end, phrase=phrase)


# --- dateparser -------------------------------------------------------------------------------


def _dateparser_settings(r: _Ref) -> dict[str, Any]:
    return {
        # RELATIVE_BASE keeps dateparser off the wall clock; it wants a naive local time.
        "RELATIVE_BASE": r.now.replace(tzinfo=None),
        "PREFER_DATES_FROM": "past",
        "PREFER_DAY_OF_MONTH": "first",
        "TIMEZONE": _tz_name(r.now),
        "TO_TIMEZONE": "UTC",
        "RETURN_AS_TIMEZONE_AWARE": True,
    }


def _tz_name(now: datetime) -> str:
    offset = now.utcoffset() or timedelta(0)
    minutes = int(offset.total_seconds() // 60)
    if minutes == 0:
        return "UTC"
    sign = "+" if minutes > 0 else "-"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def _dateparser(text: str, r: _Ref) -> datetime | None:
    import dateparser

    try:
        parsed = dateparser.parse(text, languages=["en"], settings=_dateparser_settings(r))
    except Exception as exc:  # dateparser raises many kinds of errors on odd input
        logger.debug("dateparser could not read %r: %s", text, exc)
        return None
    if parsed is None or parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC) if parsed is not None else None
    return parsed.astimezone(UTC)


def _dateparser_timeframe(text: str, r: _Ref) -> Timeframe | None:
    phrase = text.strip()
    # Only a short phrase that is wholly a date; on a sentence dateparser guesses wildly.
    if not phrase or len(phrase) > 40 or not re.search(r"\d|[a-z]{3}", phrase, re.IGNORECASE):
        return None
    from dateparser.date import DateDataParser

    try:
        data = DateDataParser(languages=["en"], settings=_dateparser_settings(r)).get_date_data(
            phrase
        )
    except Exception as exc:  # dateparser raises many kinds of errors on odd input
        logger.debug("dateparser could not read %r: %s", phrase, exc)
        return None
    moment = data.date_obj
    if moment is None:
        return None
    moment = (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC)
    if not _in_range(moment, moment):
        return None
    local = moment.astimezone(r.tz)
    try:
        if data.period == "day":
            start, end = _day(r, local.date())
        elif data.period == "week":
            start, end = _week(r, local.date())
        elif data.period == "month":
            start, end = _month(r, local.year, local.month)
        elif data.period == "year":
            start, end = _year(r, local.year)
        else:
            start, end = moment, moment
    except (ValueError, OverflowError):
        return None
    if not _in_range(start, end):
        return None
    return Timeframe(start=start, end=end, phrase=phrase)
