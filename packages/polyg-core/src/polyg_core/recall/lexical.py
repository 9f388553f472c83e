"""BM25 over memory texts that grows one memory at a time.

bm25s (the library the retrieval benchmark's baseline uses) precomputes every score for
a fixed corpus, so one new memory means indexing all of them again: 11 s at 100,000
memories on this project's 2-core machine. A memory store grows by single writes between
recalls, so the index here keeps plain postings (term → documents and term counts) and
scores at query time with the same formula (bm25s's Lucene BM25, k1 = 1.5, b = 0.75) and the
same text processing (bm25s's token pattern and English stop words, the Snowball
stemmer from PyStemmer). Adding a memory costs its own tokens; a query costs the
postings of its terms.
"""

from __future__ import annotations

import math
import re
from array import array
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from polyg_core.text.normalize import STOP_WORDS_EN

_TOKEN = re.compile(r"(?u)\b\w\w+\b")
MAX_CACHED_STEMS = 500_000


def _stopwords() -> frozenset[str]:
    return STOP_WORDS_EN


def _stemmer() -> Any:
    import Stemmer  # PyStemmer

    return Stemmer.Stemmer("english")  # pyright: ignore[reportUnknownMemberType]


@dataclass
class LexicalIndex:
    """An append-only BM25 index; documents are numbered 0, 1, 2, ... as added."""

    k1: float = 1.5
    b: float = 0.75
    _docs: array[int] = field(default_factory=lambda: array("i"))
    _postings: dict[str, tuple[array[int], array[int]]] = field(default_factory=lambda: {})
    _total: int = 0
    _stop: frozenset[str] = field(default_factory=_stopwords)
    _stem: Any = field(default_factory=_stemmer)
    _stems: dict[str, str] = field(default_factory=lambda: {})

    def tokens(self, text: str) -> list[str]:
        """Lower-cased, stop words removed, stemmed; repeated words are kept."""
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

    def __len__(self) -> int:
        return len(self._docs)

    def add(self, text: str) -> int:
        """Index one document; returns its number."""
        doc = len(self._docs)
        terms = self.tokens(text)
        self._docs.append(len(terms))
        self._total += len(terms)
        counts: dict[str, int] = {}
        for t in terms:
            counts[t] = counts.get(t, 0) + 1
        for t, n in counts.items():
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
        df = len(posting[0])
        n_docs = max(len(self._docs), at_least)
        return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """The best `k` documents for `query` with their BM25 scores (all > 0), best first.

        A word repeated in the query counts again, as in bm25s.
        """
        n_docs = len(self._docs)
        terms = [t for t in self.tokens(query) if t in self._postings]
        if not n_docs or not terms or k <= 0:
            return []
        lengths = np.frombuffer(self._docs, dtype=np.int32).astype(np.float64)
        norm = self.k1 * (1.0 - self.b + self.b * lengths / (self._total / n_docs or 1.0))
        scores = np.zeros(n_docs, dtype=np.float64)
        for t in terms:
            docs_a, tfs_a = self._postings[t]
            docs = np.frombuffer(docs_a, dtype=np.int32)
            tfs = np.frombuffer(tfs_a, dtype=np.int32).astype(np.float64)
            df = len(docs)
            idf = math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
            scores[docs] += idf * tfs / (tfs + norm[docs])
        hits = np.flatnonzero(scores > 0)
        if len(hits) > k:
            hits = hits[np.argpartition(-scores[hits], k - 1)[:k]]
        order = hits[np.argsort(-scores[hits], kind="stable")]
        return [(int(d), float(scores[d])) for d in order]
