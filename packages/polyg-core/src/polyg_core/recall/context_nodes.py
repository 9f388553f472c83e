"""Turning stored nodes into the pipeline's ContextNode."""

from __future__ import annotations

import functools
from typing import Any, cast

from polyg_shared.retrieval import ContextNode

from polyg_core.graphs.base import iso_ms
from polyg_core.storage.schema import FACT, GRAPH_OF_LABEL

_ATTRIBUTES = (
    "entity_type",
    "node_type",
    "occurred_at",
    "occurred_at_iso",
    "duration_ms",
    "valid_from",
    "valid_from_iso",
    "valid_to",
    "valid_to_iso",
    "subject",
    "predicate",
    "object",
    "category",
    "created_at",
    "source_id",
    "last_accessed",
    "superseded_by",
    "about_someone_close",
    "unsettled",
    "about_an_old_value",
    "came_after",
)
_MAX_TEXT = 400


@functools.lru_cache(maxsize=1 << 14)
def iso_at(ms: int) -> str:
    """`iso_ms`, kept per instant: recall writes the same memories' and events' times
    into many results (an ISO string costs a datetime and its formatting each time)."""
    return iso_ms(ms)


def node_text(label: str, props: dict[str, Any]) -> str:
    """The text a reader sees for a node of any memory label."""
    if label == FACT:
        return (
            f"{props.get('subject', '?')} {props.get('predicate', '?')} {props.get('object', '?')}"
        )
    for key in ("name", "description", "content"):
        value = props.get(key)
        if value:
            text = str(value)
            return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 1] + "…"
    return str(props.get("uuid", "?"))


def label_of(props: dict[str, Any], default: str = "") -> str:
    """The memory label of a projected node (its `_labels` when present)."""
    labels = props.get("_labels")
    if isinstance(labels, list):
        for label in cast(list[Any], labels):
            if label in GRAPH_OF_LABEL:
                return str(label)
    return default


def to_context(label: str, props: dict[str, Any], score: float) -> ContextNode:
    """A ContextNode for a stored node (never carries the embedding)."""
    attributes = {k: props[k] for k in _ATTRIBUTES if props.get(k) is not None}
    if "occurred_at_iso" not in attributes and isinstance(attributes.get("occurred_at"), int):
        # Events store their instant as epoch ms only; older ones also kept its ISO text.
        attributes["occurred_at_iso"] = iso_at(int(attributes["occurred_at"]))
    return ContextNode(
        uuid=str(props.get("uuid", "")),
        label=label,
        graph=GRAPH_OF_LABEL.get(label, "semantic"),
        text=node_text(label, props),
        score=max(0.0, float(score)),
        attributes=attributes,
    )
