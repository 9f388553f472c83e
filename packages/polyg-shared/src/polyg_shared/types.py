"""Constrained field types shared by every model."""

from __future__ import annotations

import math
from datetime import datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field, PlainSerializer

from polyg_shared.timeutil import iso, parse_timestamp

MAX_NAME = 256
MAX_TEXT = 4_096
MAX_CONTENT = 100_000
MAX_PROPERTIES = 64


def _non_blank(value: str) -> str:
    stripped = value.strip()
    if not stripped:
        raise ValueError("must not be empty or only whitespace")
    if "\x00" in stripped:
        raise ValueError("must not contain NUL characters")
    return stripped


def _finite_unit(value: float) -> float:
    if math.isnan(value) or math.isinf(value):
        raise ValueError("must be a finite number between 0 and 1")
    return value


def _to_utc(value: Any) -> datetime:
    if isinstance(value, datetime | str | int | float):
        return parse_timestamp(value)
    raise ValueError("expected an ISO 8601 timestamp string")


Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME), AfterValidator(_non_blank)]
"""A node name: non-empty after stripping, at most 256 characters."""

Text = Annotated[str, Field(min_length=1, max_length=MAX_TEXT), AfterValidator(_non_blank)]
"""A description: non-empty after stripping, at most 4,096 characters."""

Content = Annotated[str, Field(min_length=1, max_length=MAX_CONTENT), AfterValidator(_non_blank)]
"""Free text to remember: at most 100,000 characters."""

Confidence = Annotated[float, Field(ge=0.0, le=1.0), AfterValidator(_finite_unit)]
"""A probability in [0, 1]."""

Timestamp = Annotated[
    datetime,
    BeforeValidator(_to_utc),
    PlainSerializer(iso, return_type=str, when_used="json"),
]
"""An aware UTC datetime; accepts ISO 8601 with any offset, or a date."""

Properties = Annotated[dict[str, Any], Field(max_length=MAX_PROPERTIES)]
"""Free-form scalar properties (strings, numbers, booleans, lists of those)."""

Uuid = Annotated[str, Field(min_length=1, max_length=64)]
