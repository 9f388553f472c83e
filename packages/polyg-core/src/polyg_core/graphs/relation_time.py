"""When a relation held: `E_RELATES` edges written with a time ("joined the Atlas team
in June", "left it in May") carry `valid_from` / `valid_to` (UTC epoch ms, `valid_to`
exclusive, like a fact's), and point-in-time reads keep the relations valid then.
An undated relation holds at every time."""

from __future__ import annotations

from typing import Any

from polyg_shared.timeutil import iso

from polyg_core.errors import InvalidInput
from polyg_core.graphs.entity_refs import epoch_ms, from_ms
from polyg_core.graphs.temporal_queries import TimeInput, parse_bound, parse_time

RelationDates = tuple[int | None, int | None]


def relation_dates(valid_from: TimeInput | None, valid_to: TimeInput | None) -> RelationDates:
    """The checked dates of a relation (epoch ms); a date alone as `valid_to` includes
    that day.

    Raises:
        InvalidInput: a bad timestamp, or `valid_to <= valid_from`.
    """
    vf = epoch_ms(parse_time(valid_from, "valid_from")) if valid_from is not None else None
    vt = (
        epoch_ms(parse_bound(valid_to, "valid_to", "exclusive_end"))
        if valid_to is not None
        else None
    )
    if vf is not None and vt is not None and vt <= vf:
        raise InvalidInput(
            f"valid_to ({iso(from_ms(vt))}) must be after valid_from ({iso(from_ms(vf))})"
        )
    return vf, vt


def dates_params(dates: RelationDates) -> dict[str, Any]:
    """The query parameters of a relation's dates (`vf`, `vt` and their ISO text)."""
    vf, vt = dates
    return {
        "vf": vf,
        "vf_iso": iso(from_ms(vf)) if vf is not None else None,
        "vt": vt,
        "vt_iso": iso(from_ms(vt)) if vt is not None else None,
    }


# Given dates replace the stored ones; dates not given keep theirs (a later "left in
# May" ends the relation a "joined in June" started).
SET_DATES = """r.valid_from = CASE WHEN {p}vf IS NULL THEN r.valid_from ELSE {p}vf END,
r.valid_from_iso = CASE WHEN {p}vf IS NULL THEN r.valid_from_iso ELSE {p}vf_iso END,
r.valid_to = CASE WHEN {p}vt IS NULL THEN r.valid_to ELSE {p}vt END,
r.valid_to_iso = CASE WHEN {p}vt IS NULL THEN r.valid_to_iso ELSE {p}vt_iso END"""


def valid_at(valid_from: int | None, valid_to: int | None, start: int, end: int) -> bool:
    """Whether a relation held at some time in `[start, end]` (undated: always)."""
    return (valid_from is None or valid_from <= end) and (valid_to is None or valid_to > start)


# The relations (`r`) that held at some time in [$r_start, $r_end]: a question's
# timeframe, or now for a question without one. Undated relations always hold.
RELATION_HELD = (
    "(r.valid_from IS NULL OR r.valid_from <= $r_end) "
    "AND (r.valid_to IS NULL OR r.valid_to > $r_start)"
)


def held_params(start: int | None, end: int | None, now: int) -> dict[str, int]:
    """`RELATION_HELD`'s parameters: the window's open ends reach as far as they can."""
    if start is None and end is None:
        return {"r_start": now, "r_end": now}
    return {
        "r_start": start if start is not None else -(2**62),
        "r_end": end if end is not None else 2**62,
    }
