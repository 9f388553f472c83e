"""Name normalisation shared by every graph and the name resolver."""

from __future__ import annotations

import re
import unicodedata

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


def normalize_name(name: str) -> str:
    """A key under which spellings of the same name compare equal.

    Case, whitespace, punctuation and camelCase boundaries are ignored, so
    "auth service", "AuthService", "auth-service" and "AUTH_SERVICE" share a key.
    """
    text = unicodedata.normalize("NFKC", name)
    text = _CAMEL.sub(" ", text)
    text = _NON_WORD.sub("", text.casefold())
    return text


def normalize_description(text: str) -> str:
    """A key for longer descriptions: words kept apart, case and punctuation dropped."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    words = _NON_WORD.sub(" ", folded).split()
    return " ".join(words)
