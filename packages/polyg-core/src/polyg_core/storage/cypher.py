"""Small Cypher helpers shared by every graph module."""

from __future__ import annotations

import json
from typing import Any, Final, cast

NODE_PROPS: Final = "{.*, embedding: null}"
"""Map projection suffix that returns a node's properties without its embedding."""


def props(var: str) -> str:
    """`var {.*, embedding: null}`: a node's properties, embedding left out of the reply."""
    return f"{var} {NODE_PROPS}"


def clean(row: dict[str, Any]) -> dict[str, Any]:
    """Drop the null embedding (and internal keys) from a projected node."""
    return {k: v for k, v in row.items() if k != "embedding" and not k.startswith("_")}


def dump_properties(properties: dict[str, Any] | None) -> str:
    """Free-form properties are stored as one JSON string (FalkorDB has no map properties)."""
    return json.dumps(properties or {}, sort_keys=True, ensure_ascii=False, default=str)


def load_properties(raw: Any) -> dict[str, Any]:
    """Inverse of `dump_properties`; tolerant of missing values."""
    if not raw:
        return {}
    if isinstance(raw, dict):
        return dict(cast(dict[str, Any], raw))
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        return {}
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


def each_linked(
    keep: str,
    row: str,
    field: str,
    var: str,
    node: str,
    label: str,
    write: str,
    *,
    where: str = "",
    uuid: str | None = None,
) -> str:
    """Cypher that runs `write` once per node of `label` whose uuid is in `row.field`, for
    every row of an UNWIND, and keeps each row (with `keep`, and `n_<node>` counted).

    FalkorDB runs a `CALL {}` subquery for the first row of an UNWIND only, and
    `WHERE n.uuid IN row.list` scans the label; an UNWIND of the list (a null when it
    is empty, so the row survives) with an indexed OPTIONAL MATCH does neither.
    `where` filters the matched node (the write is skipped when it fails); `uuid` is
    the expression of the uuid when the list holds maps (default: the element).
    """
    cond = f" WHERE {where}" if where else ""
    return (
        f"WITH {keep}, {row} "
        f"UNWIND CASE WHEN size({row}.{field}) = 0 THEN [null] ELSE {row}.{field} END AS {var} "
        f"OPTIONAL MATCH ({node}:{label} {{uuid: {uuid or var}}}){cond} "
        f"FOREACH (_ IN CASE WHEN {node} IS NULL THEN [] ELSE [1] END | {write}) "
        f"WITH {keep}, {row}, count({node}) AS n_{node}"
    )
