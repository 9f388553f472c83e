"""Timestamps: every accepted form lands in UTC, bad ones say what to write instead."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st
from polyg_shared.timeutil import from_epoch_ms, iso, parse_timestamp, to_epoch_ms


def test_an_offset_is_converted_to_utc() -> None:
    assert parse_timestamp("2024-03-15T16:30:00+02:00") == datetime(2024, 3, 15, 14, 30, tzinfo=UTC)


def test_a_z_suffix_and_a_naive_time_are_utc() -> None:
    assert parse_timestamp("2024-03-15T14:30:00Z") == datetime(2024, 3, 15, 14, 30, tzinfo=UTC)
    assert parse_timestamp("2024-03-15T14:30:00z") == datetime(2024, 3, 15, 14, 30, tzinfo=UTC)
    assert parse_timestamp("2024-03-15T14:30:00") == datetime(2024, 3, 15, 14, 30, tzinfo=UTC)


def test_a_date_is_its_midnight_in_utc() -> None:
    assert parse_timestamp("2024-03-15") == datetime(2024, 3, 15, tzinfo=UTC)
    assert parse_timestamp(date(2024, 3, 15)) == datetime(2024, 3, 15, tzinfo=UTC)


def test_epoch_milliseconds_are_accepted() -> None:
    assert parse_timestamp(1_710_513_000_000) == datetime(2024, 3, 15, 14, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("", "empty timestamp"),
        ("   ", "empty timestamp"),
        ("next tuesday-ish", "not an ISO 8601 timestamp"),
        (True, "boolean"),
        (float("nan"), "NaN"),
        (float("inf"), "infinite"),
        (1e20, "out of range"),
        ("0001-01-01T00:00:00Z", "outside the supported range"),
        ("9999-12-31T00:00:00Z", "outside the supported range"),
    ],
)
def test_a_bad_timestamp_says_what_was_wrong(value: object, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        parse_timestamp(value)  # pyright: ignore[reportArgumentType]


def test_the_error_names_a_form_to_use_instead() -> None:
    with pytest.raises(ValueError, match="2024-03-15T14:30:00Z"):
        parse_timestamp("15/03/2024")


def test_iso_is_utc_with_z_and_milliseconds() -> None:
    dt = datetime(2024, 3, 15, 16, 30, 5, 123456, tzinfo=timezone(timedelta(hours=2)))
    assert iso(dt) == "2024-03-15T14:30:05.123Z"


def test_a_naive_datetime_counts_as_utc_in_epoch_ms() -> None:
    assert to_epoch_ms(datetime(1970, 1, 1, 0, 0, 1)) == 1000


aware = st.datetimes(
    min_value=datetime(1000, 1, 1),
    max_value=datetime(9000, 1, 1),
    timezones=st.sampled_from(
        [UTC, timezone(timedelta(hours=5, minutes=30)), timezone(-timedelta(hours=8))]
    ),
)


@given(aware)
def test_iso_text_parses_back_to_the_same_instant_to_the_millisecond(dt: datetime) -> None:
    back = parse_timestamp(iso(dt))
    assert back.tzinfo == UTC
    assert abs(back - dt) < timedelta(milliseconds=1)


@given(st.integers(min_value=-30_000_000_000_000, max_value=200_000_000_000_000))
def test_epoch_ms_round_trips(ms: int) -> None:
    assert to_epoch_ms(from_epoch_ms(ms)) == ms
