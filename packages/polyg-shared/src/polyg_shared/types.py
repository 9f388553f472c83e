"""Constrained field types shared by every model."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from datetime import datetime
from types import UnionType
from typing import Annotated, Any, Literal, Union, cast, get_args, get_origin

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from polyg_shared.timeutil import iso, parse_timestamp

MAX_NAME = 256
MAX_TEXT = 4_096
MAX_CONTENT = 100_000
MAX_PROPERTIES = 64

_GRAPH_NAME_RULE = r"[A-Za-z0-9_.-]{1,64}"
GRAPH_NAME_PATTERN = f"^{_GRAPH_NAME_RULE}$"
"""A graph (namespace) name, as JSON Schema states it (anchors match only the ends)."""
_GRAPH_NAME = re.compile(_GRAPH_NAME_RULE)


def is_graph_name(value: object) -> bool:
    """Whether `value` is a valid graph (namespace) name: 1-64 of letters, digits, `_.-`.

    The whole string must match: Python's `$` also matches before a trailing newline,
    so "polyg\\n" would pass `re.match(GRAPH_NAME_PATTERN, ...)` as a separate namespace.
    """
    return isinstance(value, str) and _GRAPH_NAME.fullmatch(value) is not None


def _numeric_not_bool(annotation: Any) -> bool:
    """Whether a field's type takes numbers but not booleans."""
    seen: set[Any] = set()
    stack = [annotation]
    while stack:
        tp = stack.pop()
        origin = get_origin(tp)
        if origin is Literal:
            seen.update(type(v) for v in cast(tuple[object, ...], get_args(tp)))
        elif origin in (Union, UnionType, Annotated):
            stack.extend(get_args(tp))
        else:
            seen.add(tp)
    return bool not in seen and bool(seen & {int, float})


def reject_bool_number(model: type[BaseModel], value: Any, info: ValidationInfo) -> Any:
    """A `field_validator("*", mode="before")` body: `true`/`false` is not a number.

    Pydantic's lax mode reads `true` as the integer 1 (bool is an int in Python); a tool
    argument typed as a number refuses it instead, while strings, enums and timestamps
    keep their lax parsing.

    Raises:
        ValueError: the field takes a number and the value is a boolean.
    """
    if isinstance(value, bool) and info.field_name is not None:
        field = model.model_fields.get(info.field_name)
        if field is not None and _numeric_not_bool(field.annotation):
            raise ValueError(
                f"expected a number, got the boolean {str(value).lower()}: pass a number"
            )
    return value


class StrictInput(BaseModel):
    """Base of every tool's arguments: an unknown argument is an error, and `true`/`false`
    is not a number (`reject_bool_number`). A model read from an answer may set
    `extra="ignore"`."""

    model_config = ConfigDict(extra="forbid")

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        return reject_bool_number(cls, value, info)


def graph_argument(description: str) -> Any:
    """The optional `graph` argument of a tool (None: the default), its pattern advertised."""
    return Field(
        default=None, description=description, json_schema_extra={"pattern": GRAPH_NAME_PATTERN}
    )


def check_graph_name(value: str | None, hint: str) -> str | None:
    """`value` when it is None or a valid graph name, else a ValueError that ends with `hint`.

    Raises:
        ValueError: the name is empty, longer than 64 characters or has other characters
            than letters, digits, `_`, `.` and `-`.
    """
    if value is not None and not is_graph_name(value):
        raise ValueError(
            f"invalid graph name {value!r}: use 1-64 characters from letters, digits, "
            f"'_', '.' and '-' ({hint})"
        )
    return value


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


# -- control characters ------------------------------------------------------------------------

_BAD_CHAR = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff]")
"""C0 control characters other than tab, newline and carriage return, and lone surrogates:
no name, reference, tag or text means them, FalkorDB's query parser refuses NUL, and a
lone surrogate cannot be encoded as UTF-8."""
_CHAR_NAMES = {0: "NUL", 0x1B: "ESC"}

Loc = tuple[str | int, ...]


def control_char_error(data: Any) -> tuple[Loc, str, str] | None:
    """The first string in `data` (keys too) with a character no argument accepts.

    Walks dicts, lists and tuples without recursion, so any nesting depth is safe.

    Returns:
        `(location, offending string, message)` of the first one found, else None.
    """
    stack: list[tuple[Loc, Any]] = [((), data)]
    while stack:
        loc, value = stack.pop()
        if isinstance(value, str):
            found = _BAD_CHAR.search(value)
            if found is not None:
                code = ord(found.group())
                name = _CHAR_NAMES.get(code)
                kind = (
                    "a lone surrogate "
                    if 0xD800 <= code <= 0xDFFF
                    else f"the control character {name} "
                    if name
                    else "the control character "
                )
                return (
                    loc,
                    value,
                    f"contains {kind}U+{code:04X} at position {found.start()}; remove it "
                    "(tab, newline and carriage return are the only control characters accepted)",
                )
        elif isinstance(value, dict):
            items = list(cast(dict[Any, Any], value).items())
            for key, item in reversed(items):
                if isinstance(key, str) and _BAD_CHAR.search(key):
                    stack.append(((*loc, key), key))
                else:
                    stack.append(((*loc, str(key)), item))
        elif isinstance(value, list | tuple):
            seq = list(cast(Sequence[Any], value))
            for i in range(len(seq) - 1, -1, -1):
                stack.append(((*loc, i), seq[i]))
    return None


def reject_control_chars(data: Any, title: str) -> None:
    """Raise a `ValidationError` naming the field when `control_char_error` finds one.

    One check for every tool input, applied to the raw arguments before the model
    validates them, so every field of every tool gets the same rule and message.

    Raises:
        ValidationError: with the location of the bad string.
    """
    found = control_char_error(data)
    if found is None:
        return
    loc, value, message = found
    raise ValidationError.from_exception_data(
        title,
        [
            {
                "type": "value_error",
                "loc": loc,
                "input": value,
                "ctx": {"error": ValueError(message)},
            }
        ],
    )
