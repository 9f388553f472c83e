"""BM25 over memory texts: the tokenizer, the scorer, and an in-process index.

bm25s (the library the retrieval benchmark's baseline uses) precomputes every score for
a fixed corpus, so one new memory means indexing all of them again: 11 s at 100,000
memories on this project's 2-core machine. A memory store grows by single writes between
recalls, so the indexes here keep plain postings (term → documents, term counts and
document lengths) and score at query time with the same formula (bm25s's Lucene BM25,
k1 = 1.5, b = 0.75) and the same text processing (bm25s's token pattern and English stop
words, the Snowball stemmer from PyStemmer). Adding a memory costs its own tokens; a
query costs the postings of its terms.

`LexicalIndex` holds its postings in the process; the catalogue's file
(`recall.catalogue_index`) holds the same postings on disk, and both score through
`bm25_top`, so the two rank alike.
"""

from __future__ import annotations

import math
import re
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from polyg_core.text.normalize import STOP_WORDS_EN

_TOKEN = re.compile(r"(?u)\b\w\w+\b")
MAX_CACHED_STEMS = 500_000
MAX_CACHED_TEXTS = 20_000
K1 = 1.5
B = 0.75

Ints = npt.NDArray[np.int32]


def _stemmer() -> Any:
    import Stemmer  # PyStemmer

    return Stemmer.Stemmer("english")


@dataclass
class Tokenizer:
    """bm25s's text processing: lower-case words of two or more characters, English stop
    words removed, Snowball-stemmed; repeated words are kept."""

    _stop: frozenset[str] = field(default_factory=lambda: STOP_WORDS_EN)
    _stem: Any = field(default_factory=_stemmer)
    _stems: dict[str, str] = field(default_factory=lambda: {})
    _texts: dict[str, tuple[str, ...]] = field(default_factory=lambda: {})

    def __call__(self, text: str) -> list[str]:
        # Recall's rules tokenize the same memories again and again (a hundred texts a
        # recall, most of them seen by earlier recalls): each text's terms are kept.
        known = self._texts.get(text)
        if known is not None:
            return list(known)
        out = self._terms(text)
        if len(self._texts) >= MAX_CACHED_TEXTS:
            self._texts.clear()
        self._texts[text] = tuple(out)
        return out

    def _terms(self, text: str) -> list[str]:
        stems = self._stems
        out: list[str] = []
        for w in _TOKEN.findall(text.lower()):
            stem = stems.get(w)
            if stem is None:
                if w in self._stop:
                    continue
                stem = str(self._stem.stemWord(w))
                if len(stems) < MAX_CACHED_STEMS:
                    stems[w] = stem
            out.append(stem)
        return out


@dataclass(frozen=True)
class Posting:
    """The documents holding one term, ascending, with the term's count in each and
    each document's length in terms."""

    docs: Ints
    tfs: Ints
    lengths: Ints


def idf(n_docs: int, df: int) -> float:
    """BM25's (Lucene's) idf of a term found in `df` of `n_docs` documents."""
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def bm25_top(
    n_docs: int, total_terms: int, postings: Sequence[Posting], k: int
) -> list[tuple[int, float]]:
    """The best `k` documents by BM25 over `postings` (one per query term; a term asked
    twice counts twice), with their scores (all > 0), best first; ties by document number.
    """
    if not n_docs or not postings or k <= 0:
        return []
    avg = total_terms / n_docs or 1.0
    scores = np.zeros(n_docs, dtype=np.float64)
    for p in postings:
        tfs = p.tfs.astype(np.float64)
        norm = K1 * (1.0 - B + B * p.lengths.astype(np.float64) / avg)
        scores[p.docs] += idf(n_docs, len(p.docs)) * tfs / (tfs + norm)
    hits = np.flatnonzero(scores > 0)
    if len(hits) > k:
        hits = hits[np.argpartition(-scores[hits], k - 1)[:k]]
    order = hits[np.argsort(-scores[hits], kind="stable")]
    return [(int(d), float(scores[d])) for d in order]


_WORD_PAIR = re.compile(r"(?u)\b([^\W\d_]{2,})\s+(?=([^\W\d_]{2,})\b)")


def joined_pairs(text: str, indexed: Callable[[str], bool], stop: frozenset[str]) -> list[str]:
    """Two neighbouring words of `text` written as one that the index holds ("road trip" ->
    "roadtrip", "book shelf" -> "bookshelf"): people write compounds both ways, and BM25
    matches only the way it was written. Stop words are never joined ("of the")."""
    out: list[str] = []
    for m in _WORD_PAIR.finditer(text.lower()):
        first, second = m.group(1), m.group(2)
        if first in stop or second in stop:
            continue
        joined = first + second
        if joined not in out and indexed(joined):
            out.append(joined)
    return out


def term_counts(terms: Sequence[str]) -> dict[str, int]:
    """How often each term occurs, in order of first occurrence."""
    counts: dict[str, int] = {}
    for t in terms:
        counts[t] = counts.get(t, 0) + 1
    return counts


@dataclass
class LexicalIndex:
    """An append-only BM25 index in the process; documents are numbered 0, 1, 2, ... as added."""

    tokens: Tokenizer = field(default_factory=Tokenizer)
    _docs: array[int] = field(default_factory=lambda: array("i"))
    _postings: dict[str, tuple[array[int], array[int]]] = field(default_factory=lambda: {})
    _total: int = 0

    def __len__(self) -> int:
        return len(self._docs)

    def add(self, text: str) -> int:
        """Index one document; returns its number."""
        doc = len(self._docs)
        terms = self.tokens(text)
        self._docs.append(len(terms))
        self._total += len(terms)
        for t, n in term_counts(terms).items():
            posting = self._postings.get(t)
            if posting is None:
                posting = (array("i"), array("i"))
                self._postings[t] = posting
            posting[0].append(doc)
            posting[1].append(n)
        return doc

    def idf(self, term: str, at_least: int = 0) -> float:
        """BM25's idf of an indexed term (a token from `tokens`); 0 for an unknown one.

        `at_least` counts the collection as at least that many documents: in three
        memories a name found in all three is still a name, not a common word.
        """
        posting = self._postings.get(term)
        if posting is None:
            return 0.0
        return idf(max(len(self._docs), at_least), len(posting[0]))

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """The best `k` documents for `query` with their BM25 scores (all > 0), best first.

        A word repeated in the query counts again, as in bm25s.
        """
        lengths = np.frombuffer(self._docs, dtype=np.int32)
        postings: list[Posting] = []
        for t in self.tokens(query):
            found = self._postings.get(t)
            if found is not None:
                docs = np.frombuffer(found[0], dtype=np.int32)
                tfs = np.frombuffer(found[1], dtype=np.int32)
                postings.append(Posting(docs, tfs, lengths[docs]))
        return bm25_top(len(self._docs), self._total, postings, k)
