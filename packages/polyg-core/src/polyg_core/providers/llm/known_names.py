"""The known entity names block that the classifier's and the extractor's prompts share."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["MAX_PROMPT_ENTITIES", "known_names_block"]

MAX_PROMPT_ENTITIES = 200
"""At most this many known entity names go into a prompt (the first ones given)."""


def known_names_block(known_names: Sequence[str]) -> str:
    """The prompt lines naming the known entities (at most MAX_PROMPT_ENTITIES)."""
    if not known_names:
        return "Known entity names: (none)"
    shown = list(known_names[:MAX_PROMPT_ENTITIES])
    more = len(known_names) - len(shown)
    tail = f"\n(and {more} more not listed)" if more > 0 else ""
    return "Known entity names:\n" + "\n".join(f"- {n}" for n in shown) + tail
