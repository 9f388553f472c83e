"""Time expressions resolved against a fixed reference time."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polyg_core.text.timeparse import (
    CLOCK_TIME,
    ahead_of,
    find_times,
    match_times,
    parse_timeframe,
    planned_times,
)

# Wednesday 14 January 2026, noon UTC.
REF = datetime(2026, 1, 14, 12, 0, tzinfo=UTC)
END = timedelta(milliseconds=1)


def day(y: int, m: int, d: int) -> tuple[datetime, datetime]:
    start = datetime(y, m, d, tzinfo=UTC)
    return start, start + timedelta(days=1) - END


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What happened yesterday?", day(2026, 1, 13)),
        ("anything today?", day(2026, 1, 14)),
        ("What happened last Tuesday?", day(2026, 1, 13)),
        ("on Monday", day(2026, 1, 12)),
        ("last Wednesday", day(2026, 1, 7)),
        ("last Thursday", day(2026, 1, 8)),
        ("3 days ago", day(2026, 1, 11)),
        ("on 2024-03-15", day(2024, 3, 15)),
        ("March 5th, 2024", day(2024, 3, 5)),
        ("the 3rd of March", day(2025, 3, 3)),
        ("Tuesday's deploy", day(2026, 1, 13)),
        (
            "What happened last week?",
            (datetime(2026, 1, 5, tzinfo=UTC), datetime(2026, 1, 12, tzinfo=UTC) - END),
        ),
        (
            "last month",
            (datetime(2025, 12, 1, tzinfo=UTC), datetime(2026, 1, 1, tzinfo=UTC) - END),
        ),
        (
            "in March 2024",
            (datetime(2024, 3, 1, tzinfo=UTC), datetime(2024, 4, 1, tzinfo=UTC) - END),
        ),
        ("in 2024", (datetime(2024, 1, 1, tzinfo=UTC), datetime(2025, 1, 1, tzinfo=UTC) - END)),
        ("since January", (datetime(2026, 1, 1, tzinfo=UTC), REF)),
        (
            "between 2024-03-01 and 2024-03-15",
            (datetime(2024, 3, 1, tzinfo=UTC), datetime(2024, 3, 16, tzinfo=UTC) - END),
        ),
        (
            "from Monday to Wednesday",
            (datetime(2026, 1, 12, tzinfo=UTC), datetime(2026, 1, 15, tzinfo=UTC) - END),
        ),
        (
            "this morning",
            (datetime(2026, 1, 14, 6, tzinfo=UTC), datetime(2026, 1, 14, 12, tzinfo=UTC) - END),
        ),
        ("in the last 3 days", (REF - timedelta(days=3), REF)),
        (
            "2024-03-15T10:00:00+02:00",
            (datetime(2024, 3, 15, 8, tzinfo=UTC), datetime(2024, 3, 15, 8, tzinfo=UTC)),
        ),
        (
            "yesterday at 14:30",
            (datetime(2026, 1, 13, 14, 30, tzinfo=UTC), datetime(2026, 1, 13, 14, 30, tzinfo=UTC)),
        ),
        (
            "at 09:15",
            (datetime(2026, 1, 14, 9, 15, tzinfo=UTC), datetime(2026, 1, 14, 9, 15, tzinfo=UTC)),
        ),
        (
            "14:30 UTC",  # later than the reference today, so yesterday's
            (datetime(2026, 1, 13, 14, 30, tzinfo=UTC), datetime(2026, 1, 13, 14, 30, tzinfo=UTC)),
        ),
    ],
)
def test_phrases_resolve_to_utc_periods(text: str, expected: tuple[datetime, datetime]) -> None:
    frame = parse_timeframe(text, REF)
    assert frame is not None
    assert (frame.start, frame.end) == expected


def test_open_ranges_keep_one_side_open() -> None:
    before = parse_timeframe("before 2024-01-01", REF)
    assert before is not None and before.start is None
    assert before.end == datetime(2024, 1, 1, tzinfo=UTC)
    after = parse_timeframe("after 2024-01-01", REF)
    assert after is not None and after.end is None
    assert after.start == datetime(2024, 1, 2, tzinfo=UTC) - END


def test_phrase_records_the_words_read() -> None:
    frame = parse_timeframe("Why did auth fail since last Tuesday?", REF)
    assert frame is not None and frame.phrase == "since last Tuesday"


def test_text_without_times_has_no_timeframe() -> None:
    for text in ["Why did the auth service fail?", "it may fail", "deploy-v2.3.1 on 10.0.0.12"]:
        assert parse_timeframe(text, REF) is None


def test_a_weekday_in_the_plural_recurs_and_names_no_day() -> None:
    for text in ["What does Ayo do on Tuesdays?", "Is the merchant open on Saturdays?"]:
        assert parse_timeframe(text, REF) is None
    # ... one day, or one day's thing, is a day.
    assert parse_timeframe("What did Ayo do on Tuesday?", REF) is not None
    assert parse_timeframe("Tuesday's deploy", REF) is not None


@pytest.mark.parametrize(
    ("weekday_ref", "expected_day"),
    [
        # reference weekday -> the date "last Tuesday" names (always strictly before that day)
        (datetime(2026, 1, 12, 9, tzinfo=UTC), 6),  # Monday -> Tuesday 6 Jan
        (datetime(2026, 1, 13, 9, tzinfo=UTC), 6),  # Tuesday -> the Tuesday a week before
        (datetime(2026, 1, 14, 9, tzinfo=UTC), 13),  # Wednesday -> yesterday
        (datetime(2026, 1, 17, 9, tzinfo=UTC), 13),  # Saturday
        (datetime(2026, 1, 18, 9, tzinfo=UTC), 13),  # Sunday
    ],
)
def test_last_tuesday_on_each_weekday(weekday_ref: datetime, expected_day: int) -> None:
    frame = parse_timeframe("last Tuesday", weekday_ref)
    assert frame is not None
    assert frame.start == datetime(2026, 1, expected_day, tzinfo=UTC)


def test_relative_days_follow_the_reference_time_zone() -> None:
    # 01:00 on 14 Jan in UTC+05:00 is still 13 Jan in UTC: "yesterday" is the 13th there.
    ref = datetime(2026, 1, 14, 1, 0, tzinfo=timezone(timedelta(hours=5)))
    frame = parse_timeframe("yesterday", ref)
    assert frame is not None
    assert frame.start == datetime(2026, 1, 12, 19, 0, tzinfo=UTC)
    assert frame.end == datetime(2026, 1, 13, 19, 0, tzinfo=UTC) - END


def test_explicit_offsets_convert_to_utc() -> None:
    frame = parse_timeframe("at 2024-06-01 09:30 -04:00", REF)
    assert frame is not None and frame.start == datetime(2024, 6, 1, 13, 30, tzinfo=UTC)


def test_naive_reference_is_taken_as_utc() -> None:
    frame = parse_timeframe("yesterday", REF.replace(tzinfo=None))
    assert frame is not None and frame.start == datetime(2026, 1, 13, tzinfo=UTC)


def test_find_times_gives_spans_and_instants() -> None:
    text = "Deploy v2.3.1 went out yesterday. The auth-service crashed at 14:30."
    found = find_times(text, REF)
    assert [text[s:e] for (s, e), _ in found] == ["yesterday", "14:30"]
    assert [when for _, when in found] == [
        datetime(2026, 1, 13, tzinfo=UTC),
        datetime(2026, 1, 13, 14, 30, tzinfo=UTC),
    ]


def test_short_phrases_no_rule_reads_fall_back_to_dateparser() -> None:
    # A bare month or year is only read by the rules after a preposition; alone, dateparser
    # reads the whole phrase, still against the reference and preferring the past.
    december = parse_timeframe("december", REF)
    assert december is not None
    assert (december.start, december.end) == (
        datetime(2025, 12, 1, tzinfo=UTC),
        datetime(2026, 1, 1, tzinfo=UTC) - END,
    )
    year = parse_timeframe("2024", REF)
    assert year is not None
    assert (year.start, year.end) == (
        datetime(2024, 1, 1, tzinfo=UTC),
        datetime(2025, 1, 1, tzinfo=UTC) - END,
    )


@settings(max_examples=200)
@given(st.text(max_size=200))
def test_never_raises_and_start_precedes_end(text: str) -> None:
    frame = parse_timeframe(text, REF)
    if frame is not None and frame.start is not None and frame.end is not None:
        assert frame.start <= frame.end
    for (start, end), when in find_times(text, REF):
        assert 0 <= start < end <= len(text)
        assert when.tzinfo is not None


_PIECES = st.sampled_from(
    [
        "yesterday", "last Tuesday", "since", "between", "and", "2024-03-15", "March", "2024",
        "at", "14:30", "3 days ago", "last week", "from", "to", "Feb 30", "9999 years ago",
        "31/02/2024", "before", "after", "this morning", "next month", "in", "the past week",
    ]
)  # fmt: skip


@settings(max_examples=300)
@given(st.lists(_PIECES, max_size=8).map(" ".join))
def test_time_phrase_soup_never_raises(text: str) -> None:
    frame = parse_timeframe(text, REF)
    if frame is not None and frame.start is not None and frame.end is not None:
        assert frame.start <= frame.end


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        (
            "What shipped in Q4 2025?",
            datetime(2025, 10, 1, tzinfo=UTC),
            datetime(2026, 1, 1, tzinfo=UTC),
        ),
        ("2025 Q2 results", datetime(2025, 4, 1, tzinfo=UTC), datetime(2025, 7, 1, tzinfo=UTC)),
        (
            "in the third quarter of 2024",
            datetime(2024, 7, 1, tzinfo=UTC),
            datetime(2024, 10, 1, tzinfo=UTC),
        ),
        # A bare quarter prefers the past: Q3 asked in January is last year's.
        ("incidents in Q3", datetime(2025, 7, 1, tzinfo=UTC), datetime(2025, 10, 1, tzinfo=UTC)),
    ],
)
def test_quarters_resolve_to_three_months(text: str, start: datetime, end: datetime) -> None:
    tf = parse_timeframe(text, REF)
    assert tf is not None
    assert (tf.start, tf.end) == (start, end - END)


@pytest.mark.parametrize(
    ("sentence", "written", "expected"),
    [
        # A plan names a day ahead of when it was written.
        ("Falcon beta target: June 28", datetime(2026, 5, 7, tzinfo=UTC), date(2026, 6, 28)),
        (
            "Lisbon booked: out July 8 on Atlantica Air",
            datetime(2026, 5, 12, tzinfo=UTC),
            date(2026, 7, 8),
        ),
        # Without a plan, or a plan a few weeks past, the day is read as the last one.
        ("We met on June 28 at the cafe", datetime(2026, 5, 7, tzinfo=UTC), date(2025, 6, 28)),
        (
            "Brightline pushed the start to Apr 14",
            datetime(2026, 5, 20, tzinfo=UTC),
            date(2026, 4, 14),
        ),
        # A year written is kept.
        ("Launch target: June 28, 2025", datetime(2026, 5, 7, tzinfo=UTC), date(2025, 6, 28)),
    ],
)
def test_a_planned_day_falls_ahead_of_the_note(
    sentence: str, written: datetime, expected: date
) -> None:
    first = match_times(sentence, written)[0]
    assert ahead_of(sentence, first, written).day == expected


def test_a_sentence_of_a_planning_note_is_read_with_the_notes_words() -> None:
    # "June 12." alone plans nothing; in "Kestrel launch target: June 12." it is ahead.
    written = datetime(2026, 2, 1, 12, tzinfo=UTC)
    alone = planned_times("June 12.", written)
    assert alone[0].day == date(2025, 6, 12)
    planned = planned_times("June 12.", written, "Kestrel launch target: June 12.")
    assert planned[0].day == date(2026, 6, 12)


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("hens at 9.15 now", ["9.15"]),
        ("green 7.45, last one back 5.20.", ["7.45", "5.20"]),
        ("open 7-5.30 mon-thu", ["5.30"]),
        ("sub £4.50/issue", []),
        ("3.79% 5yr fix", []),
        ("shed 2.50 m wide, 12.30kg of screws", []),
        ("ratio 0.45 on the mix", []),
        ("tel 07700 600215", []),
    ],
)
def test_a_clock_time_written_with_a_dot_is_no_price_share_or_measure(
    text: str, found: list[str]
) -> None:
    assert [m.group(0) for m in re.finditer(CLOCK_TIME, text, re.IGNORECASE)] == found
