"""Reads that ask FalkorDB once for what used to take a query per label answer exactly
what the query per label answers (invented notes, the real embedded server)."""

from __future__ import annotations

import pytest
from polyg_core.config import StorageSettings
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.storage import FalkorStore
from polyg_core.storage.fulltext import word_search, word_search_labels
from polyg_core.storage.schema import CAUSAL, CONCEPT, ENTITY, EVENT, FACT, MEMORY
from polyg_core.storage.vector import knn, knn_labels

from ..conftest import LEDGER_NOTES

pytestmark = pytest.mark.anyio

QUESTIONS = [
    "Why did the invoicing queue stall?",
    "Who runs the ledger service now?",
    "What does Kofi like to do?",
    "Where is the Hamilton cluster?",
]

LABELS = (CONCEPT, MEMORY, ENTITY, CAUSAL)


@pytest.fixture
def filled(ledger_memory: Memory) -> str:
    return ledger_memory.namespace


@pytest.mark.parametrize(("k", "min_similarity"), [(10, 0.3), (3, 0.0), (40, 0.0), (1, 0.6)])
async def test_one_knn_query_over_the_labels_answers_as_one_per_label(
    store: FalkorStore, embedder: Embedder, filled: str, k: int, min_similarity: float
) -> None:
    vectors = await embedder.embed(QUESTIONS)
    found_any = False
    for vector in vectors:
        values = [float(x) for x in vector]
        each = {
            label: await knn(store, filled, label, values, k, min_similarity=min_similarity)
            for label in LABELS
        }
        together = await knn_labels(store, filled, LABELS, values, k, min_similarity=min_similarity)
        assert together == each
        found_any = found_any or any(each.values())
    # Something was found, so the comparison compared answers, not empty lists.
    assert found_any


async def test_labels_with_fewer_nodes_than_asked_answer_all_they_have(
    store: FalkorStore, embedder: Embedder, filled: str
) -> None:
    (vector,) = await embedder.embed(["kayaking"])
    values = [float(x) for x in vector]
    together = await knn_labels(store, filled, LABELS, values, 500)
    counts = await store.query(filled, f"MATCH (m:{MEMORY}) RETURN count(m)", read_only=True)
    assert len(together[MEMORY]) == counts.scalar() == len(LEDGER_NOTES)
    assert together == {label: await knn(store, filled, label, values, 500) for label in LABELS}


async def test_a_namespace_not_written_yet_answers_empty_lists(
    store: FalkorStore, namespace: str
) -> None:
    assert await knn_labels(store, namespace, LABELS, [0.1] * 384, 5) == {
        label: [] for label in LABELS
    }


def test_a_label_without_a_vector_index_is_refused() -> None:
    import anyio

    async def ask() -> None:
        await knn_labels(None, "x", [EVENT], [0.1], 5)  # type: ignore[arg-type]

    with pytest.raises(ValueError, match="no vector index"):
        anyio.run(ask)


async def test_one_word_search_over_the_labels_answers_as_one_per_label(
    store: FalkorStore, filled: str
) -> None:
    texts = [*QUESTIONS, "ledger runs_on cluster", "the of what", ""]
    found_any = False
    for text in texts:
        for k in (10, 1):
            each = {
                label: await word_search(store, filled, label, text, k) for label in (EVENT, FACT)
            }
            together = await word_search_labels(store, filled, (EVENT, FACT), text, k)
            assert together == each
            found_any = found_any or any(each.values())
    assert found_any


async def test_word_search_in_a_namespace_without_indexes_is_empty(
    store: FalkorStore, namespace: str
) -> None:
    assert await word_search_labels(store, namespace, (EVENT, FACT), "invoicing queue", 5) == {
        EVENT: [],
        FACT: [],
    }


async def test_a_process_that_only_reads_finds_what_the_writer_finds(
    store: FalkorStore, embedder: Embedder, filled: str, falkordb_settings: StorageSettings
) -> None:
    """A reader learns the vector dimension from the namespace's record and sends query
    vectors compact, as the writer does: the same neighbours at the same similarities."""
    reader = FalkorStore(falkordb_settings)
    await reader.connect()
    try:
        assert await reader.embedding_record(filled) == (embedder.model_name, 384)
        for vector in await embedder.embed(QUESTIONS):
            values = [float(x) for x in vector]
            assert await knn_labels(reader, filled, LABELS, values, 5) == await knn_labels(
                store, filled, LABELS, values, 5
            )
    finally:
        await reader.close()
