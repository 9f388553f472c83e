"""A question that gathers what someone did switches PPR on by itself, and what the graph
side reaches is ranked with the memories."""

from __future__ import annotations

import anyio
import pytest
from polyg_core.config import Settings
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.storage.store import FalkorStore

pytestmark = pytest.mark.anyio

REF = "2026-03-02T10:00:00Z"


async def test_ppr_switches_on_for_a_gathering_question_and_feeds_the_ranking(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    # A generous view timeout: this asserts what runs, not how fast (the machine may be busy).
    memory = Memory(
        store=store,
        embedder=embedder,
        namespace=namespace,
        settings=Settings(parallel_timeout_s=120),
    )
    texts = [
        "Ines: We baked rye bread with the kids on Sunday.",
        "Ines: The kids and I built a birdhouse for the garden.",
        "Ines: My family went kayaking on the river last month.",
        "Tomas: The train to Porto was late again.",
        "Tomas: I fixed the printer at the office.",
    ]
    question = "What activities has Ines done with her family?"
    with anyio.fail_after(300):
        for text in texts:
            await memory.remember(text, who=text.split(":")[0], reference_time=REF)
        result = await memory.recall(question, reference_time=REF)
        off = await memory.recall(question, reference_time=REF, ppr=False)
    assert result.intent["multi_hop"] is True
    assert [v.status for v in result.views if v.view == "ppr"] == ["ok"]
    assert "ppr" not in {v.view for v in off.views}
    assert any("graph" in m.retrievers for m in result.memories)
    assert result.memories[0].content.startswith("Ines:")
