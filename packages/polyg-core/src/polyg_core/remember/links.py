"""Cross-links remember derives from one text, with or without an LLM.

The extractor names concepts, events and causal links but not which entity a
concept represents or which event a causal link is about. Within one text these
follow from the words: a concept represents the entities its name or
description mentions (`X_REPRESENTS`), and a causal node refers to the events of
the same text that state its cause or effect, or whose sentence is the link's
evidence (`X_REFERS_TO`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from polyg_core.text.normalize import normalize_description


def _padded(text: str) -> str:
    # Spaces around the normalised words make `in` match whole words only.
    return f" {normalize_description(text)} "


def mentions(text: str, name: str) -> bool:
    """True when `text` contains `name` as whole words (case and punctuation ignored)."""
    key = normalize_description(name)
    return bool(key) and f" {key} " in _padded(text)


def represented_entities(
    concept_name: str, description: str | None, entity_names: Iterable[str]
) -> list[str]:
    """The names among `entity_names` that the concept's name or description mentions."""
    text = f"{concept_name} {description or ''}"
    return [n for n in dict.fromkeys(entity_names) if mentions(text, n)]


def referred_events(
    cause: str, effect: str, evidence: str | None, events: Sequence[tuple[str, str]]
) -> list[str]:
    """Uuids of the (uuid, description) events a causal link is about.

    An event counts when its description contains the cause or the effect, or when
    the link's evidence contains the event's description.
    """
    out: list[str] = []
    for uuid, description in events:
        if (
            mentions(description, cause)
            or mentions(description, effect)
            or (evidence is not None and mentions(evidence, description))
        ):
            out.append(uuid)
    return out
