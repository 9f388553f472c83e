"""Timestamps: ISO 8601 in, UTC out, stored as epoch milliseconds."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

_MIN = datetime(1, 1, 2, tzinfo=UTC)
_MAX = datetime(9999, 12, 30, tzinfo=UTC)
# A day is kept free at each end of Python's range so that shifting a stored time by any
# UTC offset (or a day) never overflows; the error names these exact bounds.
RANGE_TEXT = "from 0001-01-02T00:00:00Z to 9999-12-30T00:00:00Z"


def _from_iso(value: str) -> datetime:
    """An ISO 8601 text as a datetime (naive when it names no offset; `Z` is UTC)."""
    text = value.strip()
    if not text:
        raise ValueError("empty timestamp; give an ISO 8601 value like 2024-03-15T14:30:00Z")
    if text.endswith(("z", "Z")):
        text = text[:-1] + "+00:00"
    try:
        return datetime.fromisoformat(text)
    except ValueError as exc:
        raise ValueError(
            f"{value!r} is not an ISO 8601 timestamp; use e.g. 2024-03-15T14:30:00Z, "
            "2024-03-15T16:30:00+02:00 or 2024-03-15"
        ) from exc


def parse_timestamp(value: str | datetime | date | int | float) -> datetime:
    """Parse an ISO 8601 timestamp, date or epoch-milliseconds value into an aware UTC datetime.

    Naive timestamps are taken as UTC; any offset is converted to UTC.

    Raises:
        ValueError: the value is not a timestamp this function understands.
    """
    if isinstance(value, bool):
        raise ValueError("a timestamp cannot be a boolean")
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, date):
        dt = datetime.combine(value, time(0), tzinfo=UTC)
    elif isinstance(value, int | float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError("a timestamp cannot be NaN or infinite")
        try:
            dt = datetime.fromtimestamp(value / 1000, tz=UTC)
        except (OverflowError, OSError, ValueError) as exc:
            raise ValueError(f"epoch milliseconds {value} are out of range") from exc
    else:
        dt = _from_iso(value)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    try:
        utc = dt.astimezone(UTC)
    except OverflowError:
        utc = None
    if utc is None or utc < _MIN or utc > _MAX:
        raise ValueError(
            f"timestamp {dt.isoformat()} is outside the supported range ({RANGE_TEXT} in UTC)"
        )
    return utc


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)


def to_epoch_ms(dt: datetime) -> int:
    """Epoch milliseconds of an aware datetime (a naive one counts as UTC), rounded
    towards the epoch.

    Integer arithmetic: `timestamp() * 1000` is a float and is off by one for about
    one instant in a hundred.
    """
    micros = (dt if dt.tzinfo else dt.replace(tzinfo=UTC)) - _EPOCH
    whole, rest = divmod(micros, _MS)
    return whole + 1 if whole < 0 and rest else whole


def from_epoch_ms(ms: int) -> datetime:
    """The aware UTC datetime of epoch milliseconds.

    Raises:
        ValueError: the instant is outside the years 1 to 9999.
    """
    try:
        return _EPOCH + ms * _MS
    except OverflowError as exc:
        raise ValueError(f"{ms} epoch milliseconds is outside the years 1 to 9999") from exc


def iso(dt: datetime) -> str:
    """ISO 8601 in UTC with a Z suffix, millisecond precision."""
    return dt.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def utc_now() -> datetime:
    """The current time, aware, in UTC."""
    return datetime.now(UTC)
