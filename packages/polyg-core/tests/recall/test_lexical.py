"""The incremental BM25 index scores like bm25s and grows one document at a time."""

from __future__ import annotations

import subprocess
import sys

import bm25s
import pytest
import Stemmer  # PyStemmer
from hypothesis import given, settings
from hypothesis import strategies as st
from polyg_core.recall.lexical import LexicalIndex, Tokenizer
from polyg_core.text.normalize import STOP_WORDS_EN

CORPUS = [
    "The backup job failed because the disk was full.",
    "Nightly backups are written to the archive bucket.",
    "The disk in rack four was replaced on Monday.",
    "Lunch was soup and bread at the bakery.",
    "Backups of backups: the archive keeps every nightly copy for a year.",
    "Rotating the vault token fixed the failing deploys.",
]


def _bm25s_scores(corpus: list[str], query: str) -> dict[int, float]:
    stem = Stemmer.Stemmer("english")
    retriever = bm25s.BM25()
    retriever.index(  # pyright: ignore[reportUnknownMemberType]
        bm25s.tokenize(corpus, stopwords="en", stemmer=stem, show_progress=False),
        show_progress=False,
    )
    docs, scores = retriever.retrieve(  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        bm25s.tokenize([query], stopwords="en", stemmer=stem, show_progress=False),
        k=len(corpus),
        show_progress=False,
    )
    pairs = zip(docs[0].tolist(), scores[0].tolist(), strict=True)  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
    return {int(d): float(s) for d, s in pairs if s > 0}


@pytest.mark.parametrize(
    "query",
    ["Why did the backup fail?", "archive nightly backups", "disk replaced", "vault token"],
)
def test_scores_match_bm25s(query: str) -> None:
    index = LexicalIndex()
    for text in CORPUS:
        index.add(text)
    ours = dict(index.search(query, k=10))
    assert ours.keys() == _bm25s_scores(CORPUS, query).keys()
    for doc, score in _bm25s_scores(CORPUS, query).items():
        assert ours[doc] == pytest.approx(score, rel=1e-4)


def test_documents_added_later_are_found_and_scored_against_the_new_corpus() -> None:
    index = LexicalIndex()
    for text in CORPUS[:3]:
        index.add(text)
    assert [d for d, _ in index.search("vault token", 5)] == []
    for text in CORPUS[3:]:
        index.add(text)
    assert [d for d, _ in index.search("vault token", 5)] == [5]
    assert dict(index.search("backup", 10)) == pytest.approx(
        _bm25s_scores(CORPUS, "backup"), rel=1e-4
    )


def test_empty_queries_and_unknown_words_find_nothing() -> None:
    index = LexicalIndex()
    assert index.search("anything", 5) == []
    index.add("a memory")
    assert index.search("the of and", 5) == []
    assert index.search("zebra", 5) == []
    assert index.search("memory", 0) == []


@settings(max_examples=40)
@given(
    st.lists(st.text(alphabet="abcde fgh", min_size=0, max_size=40), min_size=1, max_size=12),
    st.text(alphabet="abcde fgh", min_size=1, max_size=20),
)
def test_ranking_is_sorted_and_bounded(corpus: list[str], query: str) -> None:
    index = LexicalIndex()
    for text in corpus:
        index.add(text)
    hits = index.search(query, 3)
    assert len(hits) <= 3
    assert all(s > 0 for _, s in hits)
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    assert all(0 <= d < len(corpus) for d, _ in hits)


def test_stop_words_are_bm25s_english_set_without_loading_it() -> None:
    from bm25s.stopwords import STOPWORDS_EN

    assert frozenset(STOPWORDS_EN) == STOP_WORDS_EN
    code = (
        "import sys\n"
        "from polyg_core.recall.lexical import LexicalIndex\n"
        "index = LexicalIndex()\n"
        "index.add('the kiln cracked')\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'bm25s', 'scipy'}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "[]"


def test_a_texts_terms_are_the_same_when_asked_again_and_each_caller_owns_its_list() -> None:
    tokens = Tokenizer()
    text = "Oksana's greenhouse tomatoes ripened early; the greenhouse door sticks."
    first = tokens(text)
    assert first == [
        "oksana",
        "greenhous",
        "tomato",
        "ripen",
        "earli",
        "greenhous",
        "door",
        "stick",
    ]
    first.clear()  # a caller that changes its list changes no one else's
    assert tokens(text) == tokens(text) == Tokenizer()(text)
    assert tokens(text) is not tokens(text)
