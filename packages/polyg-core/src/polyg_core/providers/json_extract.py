"""Find the JSON object in a model's reply.

Models wrap JSON in many ways even when asked not to: reasoning blocks
(`<think>...</think>`), Markdown code fences, a sentence before or after. This
module strips those and returns the first complete JSON object.
"""

from __future__ import annotations

import json
import re
from typing import Any, cast

__all__ = ["NoJSONFound", "extract_json_object", "strip_reasoning"]

# Reasoning models (DeepSeek-R1, Qwen3, ...) emit their chain of thought in these
# tags; it may contain draft JSON that must not be mistaken for the answer.
_THINK_BLOCK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", flags=re.DOTALL | re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</(?:think|thinking|reasoning)>", flags=re.IGNORECASE)
_THINK_OPEN = re.compile(r"<(?:think|thinking|reasoning)>", flags=re.IGNORECASE)
_FENCE = re.compile(r"```[ \t]*(?:json5?|javascript|js)?[ \t]*\r?\n?(.*?)```", re.DOTALL | re.I)

# Scanning tries `raw_decode` at each "{"; bound the work on pathological replies.
_MAX_START_POSITIONS = 5_000


class NoJSONFound(ValueError):
    """The text holds no complete JSON object."""


def strip_reasoning(text: str) -> str:
    """Remove reasoning blocks (`<think>...</think>` and similar) from `text`.

    A closing tag without an opening one (some servers drop the opening tag)
    removes everything before it; an opening tag that is never closed removes
    everything after it.
    """
    text = _THINK_BLOCK.sub("", text)
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end() :]
    opened = _THINK_OPEN.search(text)
    if opened:
        text = text[: opened.start()]
    return text


def extract_json_object(text: str) -> dict[str, Any]:
    """Return the JSON object a model's reply contains.

    Tries, in order: the whole reply; each fenced code block; then the first
    position where a complete, balanced JSON object starts. Reasoning blocks
    are removed first.

    Args:
        text: The raw reply.

    Returns:
        The decoded object.

    Raises:
        NoJSONFound: when no complete JSON object is present.
    """
    cleaned = strip_reasoning(text).strip()
    candidates = [cleaned, *(m.group(1).strip() for m in _FENCE.finditer(cleaned))]
    for candidate in candidates:
        value = _loads_object(candidate)
        if value is not None:
            return value
    found = _scan_for_object(cleaned)
    if found is not None:
        return found
    preview = cleaned[:200] + ("..." if len(cleaned) > 200 else "")
    raise NoJSONFound(f"the reply contains no complete JSON object: {preview!r}")


def _loads_object(text: str) -> dict[str, Any] | None:
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return cast(dict[str, Any], value) if isinstance(value, dict) else None


def _scan_for_object(text: str) -> dict[str, Any] | None:
    decoder = json.JSONDecoder()
    start = text.find("{")
    tries = 0
    while start != -1 and tries < _MAX_START_POSITIONS:
        tries += 1
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return cast(dict[str, Any], value)
        start = text.find("{", start + 1)
    return None
