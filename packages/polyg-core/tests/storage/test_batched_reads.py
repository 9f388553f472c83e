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

pytestmark = pytest.mark.anyio

NOTES = [
    ("Wiremu Tane moved the invoicing queue to the Rotorua cluster.", "2026-02-02"),
    (
        "The Rotorua cluster ran out of disk, which caused the invoicing queue to stall.",
        "2026-02-09",
    ),
    ("Ines Albarran took over the ledger service from Wiremu Tane.", "2026-03-01"),
    ("Ines Albarran fixed the stalled invoicing queue by adding disk.", "2026-03-04"),
    ("Kofi Mensah likes sea kayaking and sourdough baking.", "2026-03-10"),
    ("The ledger service now runs on the Hamilton cluster.", "2026-04-01"),
]

QUESTIONS = [
    "Why did the invoicing queue stall?",
    "Who runs the ledger service now?",
    "What does Kofi like to do?",
    "Where is the Hamilton cluster?",
]

LABELS = (CONCEPT, MEMORY, ENTITY, CAUSAL)


@pytest.fixture
async def filled(store: FalkorStore, embedder: Embedder, namespace: str) -> str:
    memory = Memory(store=store, embedder=embedder, namespace=namespace)
    for text, day in NOTES:
        await memory.remember(text, reference_time=day)
    await memory.temporal.add_fact(
        namespace, "ledger service", "runs_on", "Rotorua cluster", valid_from="2026-01-01"
    )
    await memory.temporal.add_fact(
        namespace, "ledger service", "runs_on", "Hamilton cluster", valid_from="2026-04-01"
    )
    return namespace


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
    assert len(together[MEMORY]) == counts.scalar() == len(NOTES)
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
