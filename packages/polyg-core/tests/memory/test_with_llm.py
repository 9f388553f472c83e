"""`Memory.with_llm`: one memory, another model for some calls (e.g. an MCP client's)."""

from __future__ import annotations

import pytest
from polyg_core.memory import Memory

pytestmark = pytest.mark.anyio


async def test_with_llm_answers_with_the_given_model_and_shares_the_graphs(
    memory: Memory, llm_memory: Memory, namespace: str
) -> None:
    assert memory.llm is None and llm_memory.llm is not None
    lent = memory.with_llm(llm_memory.llm)

    written = await lent.remember("The deploy failed because DATABASE_URL was missing.")
    assert written.degraded is False
    answer = await lent.recall("Why did the deploy fail?")
    assert answer.degraded is False
    # The original memory still has no model, and reads what the other one wrote.
    plain = await memory.recall("Why did the deploy fail?")
    assert plain.degraded is True
    assert written.memory_uuid in {m.uuid for m in plain.memories}

    assert lent.entities is memory.entities and lent.resolver is memory.resolver
    assert lent.pipeline.catalogue is memory.pipeline.catalogue
    assert lent.pipeline.synthesizer.llm is llm_memory.llm
    assert memory.pipeline.synthesizer.llm is None
    assert lent.owns_store is False
