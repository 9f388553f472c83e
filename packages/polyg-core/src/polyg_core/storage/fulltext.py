"""Word search through FalkorDB's full-text indexes (schema.FULLTEXT_INDEXES), for the
labels that carry no vector (events and facts)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from polyg_core.storage.cypher import clean, props
from polyg_core.storage.schema import FULLTEXT_INDEXES
from polyg_core.storage.store import FalkorStore

MAX_TERMS = 32
_TERM = re.compile(r"[^\W_]+", re.UNICODE)
# Too common to tell texts apart (RediSearch drops most of them anyway).
_STOP = frozenset(
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
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "she",
        "that",
        "the",
        "their",
        "them",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
        "he",
        "his",
        "her",
    ]
)


@dataclass(frozen=True)
class WordHit:
    """A node found by word search; `overlap` is the share of the query's words it holds."""

    label: str
    properties: dict[str, Any]
    overlap: float

    @property
    def uuid(self) -> str:
        return str(self.properties.get("uuid", ""))


def query_terms(text: str) -> list[str]:
    """The distinct lower-case words of `text` worth searching for, in order."""
    seen: dict[str, None] = {}
    for word in _TERM.findall(text.lower()):
        if word not in _STOP and (len(word) > 1 or word.isdigit()):
            seen.setdefault(word, None)
    return list(seen)[:MAX_TERMS]


def _same_word(term: str, word: str) -> bool:
    """One word, or one the stem of the other (deploy / deployed, fail / failure)."""
    if term == word:
        return True
    short, long = sorted((term, word), key=len)
    return len(short) >= 4 and long.startswith(short)


async def word_search(
    store: FalkorStore, namespace: str, label: str, text: str, k: int
) -> list[WordHit]:
    """The nodes of `label` that share words with `text`, most shared first, at most `k`.

    FalkorDB's index finds the nodes holding any of the words (stemmed); each is then
    scored by the share of the query's words its indexed fields hold, exact or as a
    prefix (deploy / deployed), so the score is comparable across labels and queries.
    Returns [] when `text` has no searchable word or the label has no full-text index.
    """
    fields = FULLTEXT_INDEXES.get(label)
    terms = query_terms(text)
    if not fields or not terms:
        return []
    try:
        res = await store.query(
            namespace,
            f"CALL db.idx.fulltext.queryNodes('{label}', $q) YIELD node "
            f"RETURN {props('node')} LIMIT $lim",
            {"q": " | ".join(terms), "lim": max(4 * k, 20)},
            read_only=True,
        )
    except Exception as exc:  # no index yet (nothing written to this namespace)
        if "index" in str(exc).lower():
            return []
        raise
    hits: list[WordHit] = []
    for (raw,) in res.rows:
        node = clean(raw)
        words = set(_TERM.findall(" ".join(str(node.get(f) or "") for f in fields).lower()))
        shared = sum(1 for t in terms if any(_same_word(t, w) for w in words))
        hits.append(WordHit(label, node, shared / len(terms)))
    hits.sort(key=lambda h: (-h.overlap, h.uuid))
    return hits[:k]
