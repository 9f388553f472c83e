"""The stored form of a record: which stored properties its fields carry, and back.

A record's fields carry some of a node's (or edge's) stored properties in a
readable form (times as ISO text, free-form properties as a map); its `stored`
map carries the rest as they are stored. `split` is the export side, `raw_props`
the import side: `raw_props(record)` is exactly the property map the source
node had (its embedding aside), which an import restores on what it creates and
a Cypher dump writes as is.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final

from polyg_core.graphs.entity_refs import epoch_ms
from polyg_core.storage.cypher import dump_properties
from polyg_core.transfer.records import Record

CARRIED: Final[dict[str, tuple[str, ...]]] = {
    "entity": ("name", "entity_type", "properties"),
    "relation": ("relationship_type", "properties", "valid_from", "valid_to"),
    "event": ("description", "occurred_at", "duration_ms"),
    "fact": ("subject", "predicate", "object", "valid_from", "valid_to", "cardinality"),
    "causal_node": ("description", "node_type"),
    "causal_link": ("confidence", "evidence"),
    "solution": ("evidence",),
    "concept": ("name", "description"),
    "memory": ("content", "category", "tags", "created_at", "source_id"),
}
"""Per record kind, the stored properties its fields carry (the rest go in `stored`)."""

_FIELD: Final[dict[str, str]] = {"entity_type": "type", "relationship_type": "type"}
"""Stored property -> record field, where the names differ."""

_JSON_PROPS: Final = {"properties"}
"""Properties stored as one JSON string (FalkorDB has no map properties)."""


def split(kind: str, raw: Mapping[str, Any]) -> dict[str, Any]:
    """The `stored` map of a node or edge: its properties the record's fields do not carry.

    A carried property missing from the node is kept as None, so `raw_props` does not
    invent it (a record field has a default where the node has nothing).
    """
    carried = CARRIED[kind]
    stored = {k: v for k, v in raw.items() if k not in carried and k != "embedding"}
    for k in carried:
        if raw.get(k) is None:
            stored[k] = None
    return stored


def _raw(value: Any, prop: str) -> Any:
    if prop in _JSON_PROPS:
        return dump_properties(value)
    if isinstance(value, datetime):
        return epoch_ms(value)
    if hasattr(value, "value") and not isinstance(value, int | float | str):
        return value.value  # an enum
    return value


def raw_props(record: Record) -> dict[str, Any]:
    """The stored properties of the node or edge `record` describes (no embedding)."""
    out: dict[str, Any] = {}
    for prop in CARRIED[record.kind]:
        value = getattr(record, _FIELD.get(prop, prop), None)
        if value is not None:
            out[prop] = _raw(value, prop)
    for k, v in record.stored.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = v
    return out
