"""Name normalisation shared by every graph and the name resolver."""

from __future__ import annotations

import re
import unicodedata

# Lucene's English stop set, the one bm25s applies with stopwords="en" (the retrieval
# benchmark's BM25 baseline): kept here so the index matches it without importing bm25s,
# which loads scipy.
STOP_WORDS_EN = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "if",
        "in",
        "into",
        "is",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "will",
        "with",
    ]
)

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


def without_accents(text: str) -> str:
    """`text` with the accents of its letters dropped ("Zoë" -> "Zoe"), letter for
    letter: people type a name without the accents it was written with."""
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize(
        "NFC", "".join(c for c in decomposed if not unicodedata.combining(c))
    )
