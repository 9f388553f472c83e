"""Remembering texts that mention stored concepts keeps the concept vector index whole.

Each write of a node that carries a vector leaves a stale entry in FalkorDB's HNSW index
(FalkorDB/FalkorDB#2197). `remember` used to give a stored concept the description of
every new text that mentioned it, re-embedding and rewriting the node each time, so the
concept index answered about half of a k-NN's rows. A text's description of a concept now
never replaces a stored one: only `add_concept` redefines a concept.
"""

from __future__ import annotations

import anyio
import pytest
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.storage.store import FalkorStore

pytestmark = pytest.mark.anyio

TOPICS = ("the greenhouse heater", "the pottery kiln", "the choir rota", "the ferry timetable")
PEOPLE = ("Ines", "Marek", "Odile", "Tamsin", "Ruben")


async def _concepts(store: FalkorStore, namespace: str) -> dict[str, str | None]:
    res = await store.query(
        namespace, "MATCH (c:S_Concept) RETURN c.name, c.description", read_only=True
    )
    return {str(n): (None if d is None else str(d)) for n, d in res.rows}


async def _raw_knn_rows(store: FalkorStore, namespace: str, vector: list[float], k: int) -> int:
    """Rows the concept index itself answers (no over-fetching)."""
    res = await store.query(
        namespace,
        "CALL db.idx.vector.queryNodes('S_Concept', 'embedding', $k, vecf32($v)) "
        "YIELD node RETURN count(node)",
        {"k": k, "v": vector},
        read_only=True,
    )
    return int(res.scalar(0))


async def test_mentions_of_stored_concepts_leave_the_concept_index_whole(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    memory = Memory(store=store, embedder=embedder, namespace=namespace)
    with anyio.fail_after(300):
        for round_ in range(3):
            for who in PEOPLE:
                for topic in TOPICS:
                    await memory.remember(
                        f"{who} checked {topic} on visit {round_ + 1}; {topic} needs more care.",
                        reference_time="2026-02-10T12:00:00Z",
                    )
        first = await _concepts(store, namespace)
        count = len(first)
        assert count >= len(TOPICS)
        for text in ("greenhouse heater repair", "a kiln firing", "ferry times"):
            vector = [float(x) for x in (await embedder.embed([text]))[0]]
            for k in (5, count):
                got = await _raw_knn_rows(store, namespace, vector, k)
                assert got == min(k, count), f"k={k}: the index answered {got} of {min(k, count)}"


async def test_a_later_text_does_not_redefine_a_stored_concept(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    memory = Memory(store=store, embedder=embedder, namespace=namespace)
    with anyio.fail_after(120):
        await memory.remember(
            "Ines said the greenhouse heater keeps the seedlings warm overnight.",
            reference_time="2026-02-10T12:00:00Z",
        )
        before = await _concepts(store, namespace)
        await memory.remember(
            "Marek thinks the greenhouse heater is far too loud.",
            reference_time="2026-02-11T12:00:00Z",
        )
        after = await _concepts(store, namespace)
    shared = [name for name in before if name in after]
    assert shared, (before, after)
    for name in shared:
        assert after[name] == before[name], name


async def test_add_concept_still_redefines_a_concept(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    memory = Memory(store=store, embedder=embedder, namespace=namespace)
    with anyio.fail_after(120):
        await memory.semantic.add_concept(namespace, "kiln firing", "Heating clay to 1200 C.")
        await memory.semantic.add_concept(namespace, "kiln firing", "A bisque firing at 1000 C.")
        got = await _concepts(store, namespace)
    assert got["kiln firing"] == "A bisque firing at 1000 C."
