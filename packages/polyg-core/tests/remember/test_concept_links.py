"""Similar-concept links of what `remember` writes: concepts that mean alike are linked,
concepts that only share the sentence they were found in are not."""

from __future__ import annotations

import anyio
import pytest
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.remember.write import RememberWriter
from polyg_core.storage.store import FalkorStore
from polyg_shared.intents import ExtractedConcept, Extraction

pytestmark = pytest.mark.anyio


async def _similar_pairs(store: FalkorStore, namespace: str) -> set[frozenset[str]]:
    got = await store.query(
        namespace, "MATCH (a:S_Concept)-[:S_SIMILAR_TO]-(b:S_Concept) RETURN a.name, b.name"
    )
    return {frozenset((str(r[0]), str(r[1]))) for r in got.rows}


async def test_concepts_of_one_sentence_are_not_similar_for_sharing_it(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    mem = Memory(store=store, embedder=embedder, namespace=namespace)
    with anyio.fail_after(60):
        await mem.remember("I fixed the old bicycle, then planted tomatoes in the garden.")
    got = await store.query(namespace, "MATCH (c:S_Concept) RETURN c.name")
    assert {str(r[0]) for r in got.rows} >= {"bicycle", "tomatoes", "garden"}
    assert await _similar_pairs(store, namespace) == set()


async def test_concepts_of_two_texts_that_mean_alike_are_similar(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    mem = Memory(store=store, embedder=embedder, namespace=namespace)
    with anyio.fail_after(60):
        await mem.remember("The bicycle in the shed has a flat tyre.")
        await mem.remember("The bike in the shed has a flat tyre.")
    assert frozenset(("bike", "bicycle")) in await _similar_pairs(store, namespace)


async def test_concepts_a_text_describes_alike_are_linked_within_it(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    # Descriptions an extractor gives (not passages of the text) say what the concepts
    # mean: two that mean alike are linked even when written by one text.
    ex = Extraction(
        concepts=[
            ExtractedConcept(name="cycling", description="riding a bicycle"),
            ExtractedConcept(name="bike riding", description="riding a bicycle"),
        ]
    )
    mem = Memory(store=store, embedder=embedder, namespace=namespace)
    writer = RememberWriter(mem.entities, mem.temporal)
    with anyio.fail_after(60):
        await writer.write(
            namespace,
            "Noor rode to the lake and back.",
            ex,
            category=None,
            tags=[],
            source_id=None,
        )
    assert frozenset(("cycling", "bike riding")) in await _similar_pairs(store, namespace)
