"""Small Cypher helpers shared by every graph module."""

from __future__ import annotations

import json
from dataclasses import dataclass
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


def create_missing(label: str, var: str, key: str, fields: str) -> str:
    """The head of a batch write that creates whole, in one CREATE, each row's node the
    caller read as missing (a MERGE with ON CREATE SET writes a node twice, and FalkorDB
    keeps an index entry per write of a vector-indexed node): a row whose node another
    writer created since the read (matched by `key`, e.g. ``"name_key: row.k"``) is
    skipped; `fields` are the node's properties, its embedding from ``row.vec`` added;
    ``row.x`` holds any others, set after. Continues with `var`, ``row`` and ``created``
    (true)."""
    return f"""
UNWIND $rows AS row
OPTIONAL MATCH (old:{label} {{{key}}})
WITH row, old WHERE old IS NULL
CREATE ({var}:{label} {{
    {fields.strip()},
    embedding: CASE WHEN row.vec IS NULL THEN NULL ELSE vecf32(row.vec) END
}})
FOREACH (_ IN CASE WHEN size(keys(row.x)) > 0 THEN [1] ELSE [] END | SET {var} += row.x)
WITH {var}, row, true AS created
"""


@dataclass(frozen=True)
class NodeHit:
    """A node a search found: its label and its stored properties (`clean`ed)."""

    label: str
    properties: dict[str, Any]

    @property
    def uuid(self) -> str:
        return str(self.properties.get("uuid", ""))
