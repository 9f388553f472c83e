"""Small Cypher helpers shared by every graph module."""

from __future__ import annotations

import json
from typing import Any, Final

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
        return dict(raw)
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}
