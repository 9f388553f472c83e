"""GRAPH.QUERY's compact reply read straight into plain Python values, and query
parameters written as the Cypher header, without the falkordb client's per-value
coroutines.

The falkordb client parses every value of a reply with an `await` (a node's labels and
property names may need a round trip to the server), then the store converted its
objects to plain dicts again. Recall's replies are maps, strings and numbers (node
properties are projected, `storage.cypher.props`): those are read here synchronously,
to the same values. A reply holding a node, an edge or a path (whose names need the
graph's schema) is left to the client's own parser (`NeedsSchema`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime, time
from typing import Any, cast

from dateutil.relativedelta import relativedelta
from redis.exceptions import ResponseError

__all__ = ["NeedsSchema", "Reply", "cypher_params", "param_text", "read_reply"]

_NULL, _STRING, _INTEGER, _BOOLEAN, _DOUBLE, _ARRAY = 1, 2, 3, 4, 5, 6
_EDGE, _NODE, _PATH, _MAP, _POINT, _VECTOR = 7, 8, 9, 10, 11, 12
_DATETIME, _DATE, _TIME, _DURATION = 13, 14, 15, 16


class NeedsSchema(Exception):
    """The reply holds a node, an edge or a path: its names come from the graph's schema."""


def _string(value: Any) -> str:
    if type(value) is str:
        return value
    if isinstance(value, bytes):
        return value.decode()
    return str(value)


def _epoch(value: Any) -> datetime:
    return datetime.fromtimestamp(value, tz=UTC)


def _duration(value: Any) -> relativedelta:
    return relativedelta(_epoch(value), datetime(1970, 1, 1, tzinfo=UTC))


def _needs_schema(value: Any) -> Any:
    raise NeedsSchema


def _unknown(value: Any) -> None:
    return None


def _array(value: list[Any]) -> list[Any]:
    # A reply's rows and PPR's links are arrays of cells (`[type, value]`): integers, text,
    # nested arrays and nulls are read inline, without a call per cell.
    out: list[Any] = []
    append = out.append
    for cell in value:
        kind, item = cell
        if (kind == _INTEGER and type(item) is int) or (kind == _STRING and type(item) is str):
            append(item)
        elif kind == _ARRAY:
            append(_array(item))
        elif kind == _NULL:
            append(None)
        else:
            append(_scalar(cell))
    return out


def _map(value: list[Any]) -> dict[str, Any]:
    # Keys and values alternate: [key, [type, value], key, [type, value], ...]. Maps (node
    # properties) hold most of a reply's values: text and integers are read inline.
    out: dict[str, Any] = {}
    pairs = iter(value)
    for key, cell in zip(pairs, pairs, strict=False):  # one iterator: key, then its cell
        if type(key) is not str:
            key = _string(key)
        kind, item = cell
        if (kind == _STRING and type(item) is str) or (kind == _INTEGER and type(item) is int):
            out[key] = item
        elif kind == _NULL:
            out[key] = None
        else:
            out[key] = _scalar(cell)
    return out


def _point(value: list[Any]) -> dict[str, float]:
    return {"latitude": float(value[0]), "longitude": float(value[1])}


def _vector(value: list[Any]) -> list[float]:
    # hiredis hands a vector's elements over as floats already (in a list of its own):
    # converting each of 384 again was most of reading a vector.
    if value and type(value[0]) is float:
        return value
    return [float(v) for v in value]


def _date(value: Any) -> date:
    return _epoch(value).date()


def _time(value: Any) -> time:
    return _epoch(value).time()


_READERS: list[Callable[[Any], Any]] = [
    _unknown,
    lambda _: None,
    _string,
    int,
    lambda v: _string(v) == "true",
    float,
    _array,
    _needs_schema,
    _needs_schema,
    _needs_schema,
    _map,
    _point,
    _vector,
    _epoch,
    _date,
    _time,
    _duration,
]


def _scalar(cell: list[Any]) -> Any:
    """One `[type, value]` cell of the compact format as a plain value."""
    kind, value = cell
    # The common cases first, without a call through the table; hiredis hands over the
    # type and integers as ints already.
    if kind == _STRING:
        return value if type(value) is str else _string(value)
    if kind == _INTEGER:
        return value if type(value) is int else int(value)
    if kind == _NULL:
        return None
    if kind == _DOUBLE:
        return float(value)
    return _READERS[int(kind)](value)


class Reply:
    """A compact reply read: column names, rows of plain values, and the write counts."""

    __slots__ = ("header", "rows", "stats")

    def __init__(self, header: list[str], rows: list[list[Any]], stats: list[str]) -> None:
        self.header = header
        self.rows = rows
        self.stats = stats

    def count(self, name: str) -> int:
        """A write count of the reply's statistics ("Nodes created", ...), 0 when absent."""
        for stat in self.stats:
            if name in stat:
                return int(float(stat.split(": ")[1].split(" ")[0]))
        return 0


def check_errors(response: Any) -> None:
    """Raise the server's error carried in a reply (as the falkordb client does)."""
    if isinstance(response[0], ResponseError):
        raise response[0]
    if isinstance(response[-1], ResponseError):
        raise response[-1]


def read_reply(response: Any) -> Reply:
    """The compact reply of GRAPH.QUERY / GRAPH.RO_QUERY as plain values.

    Raises:
        ResponseError: the server reported an error in the reply.
        NeedsSchema: a value is a node, an edge or a path (parse it with the client).
    """
    check_errors(response)
    if len(response) == 1:
        return Reply([], [], list(response[0]))
    raw_header = cast(list[Any], response[0])
    header = [_header_name(h) for h in raw_header]
    rows: list[list[Any]] = []
    if header:
        rows = [_array(row) for row in response[1]]
    return Reply(header, rows, list(response[-1]))


def _header_name(column: Any) -> str:
    if isinstance(column, list | tuple):
        return str(cast(list[Any], column)[1])
    return str(column)


# -- parameters ---------------------------------------------------------------------------------


def _quote(text: str) -> str:
    if not text:
        return '""'
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def param_text(value: Any) -> str:
    """A parameter value as Cypher text, exactly as the falkordb client writes it
    (`falkordb.helpers.stringify_param_value`): strings quoted, None as null, map keys
    in backticks, anything else by `str`.

    Raises:
        ValueError: a map key that is empty or holds a backtick.
    """
    if isinstance(value, str):
        return _quote(value)
    if value is None:
        return "null"
    if isinstance(value, list | tuple):
        items = cast(list[Any], value)
        if all(type(v) is str for v in items):
            return "[" + ",".join([_quote(v) for v in items]) + "]"
        return "[" + ",".join([param_text(v) for v in items]) + "]"
    if isinstance(value, dict):
        parts: list[str] = []
        for k, v in cast(dict[Any, Any], value).items():
            key = k.decode() if isinstance(k, bytes) else str(k)
            _check_key(key, "map key")
            parts.append(f"`{key}`:{param_text(v)}")
        return "{" + ",".join(parts) + "}"
    return str(value)


def _check_key(key: str, what: str) -> None:
    if key == "":
        raise ValueError(f"Cypher {what} cannot be empty")
    if "`" in key:
        raise ValueError(
            f"Cypher {what} cannot contain a backtick: {key!r} (FalkorDB does not support "
            "escaped backticks in identifiers)"
        )


def cypher_params(params: Mapping[str, Any]) -> str:
    """The `CYPHER name=value ...` header that carries a query's parameters, as the
    falkordb client builds it (the same text, also for no parameters).

    Raises:
        ValueError: a parameter name or map key that is empty or holds a backtick.
    """
    parts = ["CYPHER "]
    for key, value in params.items():
        name = key.decode() if isinstance(key, bytes) else str(key)
        _check_key(name, "parameter name")
        parts.append(f"`{name}`={param_text(value)} ")
    return "".join(parts)
