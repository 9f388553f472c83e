"""Word search through FalkorDB's full-text indexes (schema.FULLTEXT_INDEXES), for the
labels that carry no vector (events and facts)."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from polyg_core.storage.cypher import NodeHit, clean, props
from polyg_core.storage.schema import FULLTEXT_INDEXES
from polyg_core.storage.store import FalkorStore
from polyg_core.text.normalize import STOP_WORDS_EN

MAX_TERMS = 32
_TERM = re.compile(r"[^\W_]+", re.UNICODE)
# Function words and the words questions are asked with: too common to tell texts apart.
_STOP = STOP_WORDS_EN | frozenset(
    """
    did do does from had has have how i its me my our she them we were what when where
    which who whom whose why you your he his her him us
    about after before during since until over under between through via
    happen happened happens occurred tell describe explain status timeline
    """.split()  # noqa: SIM905 (a word list reads as one)
)


@dataclass(frozen=True)
class WordHit(NodeHit):
    """A node found by word search; `overlap` is the share of the query's words it holds."""

    overlap: float


def query_terms(text: str) -> list[str]:
    """The distinct lower-case words of `text` worth searching for, in order."""
    seen: dict[str, None] = {}
    for word in _TERM.findall(text.lower()):
        if word not in _STOP and (len(word) > 1 or word.isdigit()):
            seen.setdefault(word, None)
    return list(seen)[:MAX_TERMS]


@functools.cache
def _stemmer() -> Any:
    import Stemmer  # PyStemmer, the stemmer of recall's BM25 index

    return Stemmer.Stemmer("english")


@functools.lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return str(_stemmer().stemWord(word))


async def word_search(
    store: FalkorStore, namespace: str, label: str, text: str, k: int
) -> list[WordHit]:
    """The nodes of `label` that share words with `text`, most shared first, at most `k`.

    FalkorDB's index finds the nodes holding any of the words (stemmed); each is then
    scored by the share of the query's words (stemmed: deploy / deployed) its indexed
    fields hold, so the score is comparable across labels and queries.
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
    return _scored(label, fields, terms, [raw for (raw,) in res.rows], k)


async def word_search_labels(
    store: FalkorStore, namespace: str, labels: Sequence[str], text: str, k: int
) -> dict[str, list[WordHit]]:
    """`word_search` over several labels in one query: label to its hits (the same as one
    `word_search` per label)."""
    wanted = list(dict.fromkeys(labels))
    terms = query_terms(text)
    indexed = [label for label in wanted if FULLTEXT_INDEXES.get(label)]
    out: dict[str, list[WordHit]] = {label: [] for label in wanted}
    if not terms or not indexed:
        return out
    parts = [
        f"CALL db.idx.fulltext.queryNodes('{label}', $q) YIELD node "
        f"RETURN {i} AS part, {props('node')} AS node LIMIT $lim"
        for i, label in enumerate(indexed)
    ]
    try:
        res = await store.query(
            namespace,
            " UNION ALL ".join(parts),
            {"q": " | ".join(terms), "lim": max(4 * k, 20)},
            read_only=True,
        )
    except Exception as exc:  # a label without its index yet: one query per label says which
        if "index" not in str(exc).lower():
            raise
        return {label: await word_search(store, namespace, label, text, k) for label in wanted}
    rows: dict[str, list[dict[str, Any]]] = {label: [] for label in indexed}
    for part, raw in res.rows:
        rows[indexed[int(part)]].append(raw)
    for label in indexed:
        out[label] = _scored(label, FULLTEXT_INDEXES[label], terms, rows[label], k)
    return out


def _scored(
    label: str, fields: Sequence[str], terms: Sequence[str], found: Sequence[dict[str, Any]], k: int
) -> list[WordHit]:
    """The found nodes that hold a query word, scored by the share of the words they hold,
    most first, at most `k`."""
    wanted = {_stem(t) for t in terms}
    hits: list[WordHit] = []
    for raw in found:
        node = clean(raw)
        text_of = " ".join(str(node.get(f) or "") for f in fields).lower()
        stems = {_stem(w) for w in _TERM.findall(text_of)}
        shared = sum(1 for t in wanted if t in stems)
        if shared:
            hits.append(WordHit(label, node, shared / len(wanted)))
    hits.sort(key=lambda h: (-h.overlap, h.uuid))
    return hits[:k]
