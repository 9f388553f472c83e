"""The named people's memories read while the views run (`people_reach`) are what
`graph_reach` reads itself after them: the same nodes, in the same order; a question not
shaped to gather reads none (invented speakers, the real embedded server)."""

from __future__ import annotations

import anyio
import numpy as np
import pytest
from polyg_core.config import Settings
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.recall.catalogue import MemoryCatalogue
from polyg_core.recall.graph_memories import graph_reach, people_reach
from polyg_core.recall.view_context import Seeds
from polyg_core.storage.store import FalkorStore
from polyg_shared.retrieval import ContextNode, ViewResult

pytestmark = pytest.mark.anyio

TURNS = [
    ("Priya", "My brother and I built a treehouse over the long weekend."),
    ("Oskar", "Did you and your family get out much this summer, Priya?"),
    ("Priya", "We took the twins sledding on the hill behind the school."),
    ("Oskar", "I spent the evening fixing my bicycle chain."),
    ("Priya", "The budget meeting at the office ran late again."),
    ("Oskar", "Our choir sang at the harbour festival."),
]


def _view(nodes: list[ContextNode]) -> ViewResult:
    return ViewResult(view="entity", nodes=nodes)


async def test_people_read_ahead_are_what_graph_reach_reads(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    memory = Memory(store=store, embedder=embedder, namespace=namespace, settings=Settings())
    with anyio.fail_after(300):
        for who, text in TURNS:
            await memory.remember(f"{who}: {text}", who=who, reference_time="2026-02-01")
        catalogue = await MemoryCatalogue(store).get(namespace)
        question = "What activities has Priya done with her family?"
        vector = np.asarray((await embedder.embed([question]))[0], dtype=np.float32)
        views = [_view([]), ViewResult(view="causal", status="timeout")]
        people = ["Priya"]
        ahead = await people_reach(
            store, namespace, catalogue, question=question, people=people, vector=vector
        )
        read_after = await graph_reach(
            store,
            namespace,
            catalogue,
            Seeds(),
            views,
            question=question,
            people=people,
            vector=vector,
        )
        given = await graph_reach(
            store,
            namespace,
            catalogue,
            Seeds(),
            views,
            question=question,
            people=people,
            vector=vector,
            people_found=ahead,
        )
        not_gathering = await people_reach(
            store,
            namespace,
            catalogue,
            question="Where does Priya work?",
            people=["Priya"],
            vector=vector,
        )
    assert ahead, "a gathering question reaches the named person's memories"
    assert all(n.text.startswith("Priya:") for n in ahead)
    assert [(n.uuid, n.score) for n in given] == [(n.uuid, n.score) for n in read_after]
    assert not_gathering == []
