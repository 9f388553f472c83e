"""The advertised `inputSchema`: the input model's JSON schema without what the model
reading it does not need.

Every tool's schema is paid for in every conversation's context. Pydantic's schema
repeats what a reader already has: a `title` on every property (the property name
again), the model's docstring at the root ("Arguments of recall.", said better by the
tool's description), and `anyOf: [X, null]` with `default: null` for each optional
argument (omitting it means the same). Those go; every constraint that decides
whether a call is valid (types, enums, bounds, patterns, required,
`additionalProperties`) stays, and the input model still validates every call.
"""

from __future__ import annotations

from typing import Any, cast

_NULL: dict[str, Any] = {"type": "null"}


def compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of a JSON schema made compact as described above (the input is not changed)."""
    out = _compact(schema)
    out.pop("description", None)
    return out


def _compact(schema: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in ("properties", "$defs") and isinstance(value, dict):
            named = cast(dict[str, Any], value)
            out[key] = {name: _node(sub) for name, sub in named.items()}
        else:
            out[key] = _node(value)
    return _optional(out)


def _node(value: Any) -> Any:
    if isinstance(value, dict):
        return _compact(cast(dict[str, Any], value))
    if isinstance(value, list):
        return [_node(v) for v in cast(list[Any], value)]
    return value


def _optional(schema: dict[str, Any]) -> dict[str, Any]:
    """`{anyOf: [X, null], default: null, ...}` -> `{...X, ...}`: optional is not required."""
    alternatives = schema.get("anyOf")
    if (
        not isinstance(alternatives, list)
        or len(cast(list[Any], alternatives)) != 2
        or _NULL not in alternatives
        or "default" not in schema
        or schema["default"] is not None
    ):
        return schema
    other = next(a for a in cast(list[Any], alternatives) if a != _NULL)
    rest = {k: v for k, v in schema.items() if k not in ("anyOf", "default")}
    if not isinstance(other, dict):
        return schema
    return {**cast(dict[str, Any], other), **rest}
