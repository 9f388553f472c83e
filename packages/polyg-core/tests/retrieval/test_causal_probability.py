"""causal_probability over the stored causal graph (incident-response scenario)."""

from __future__ import annotations

import anyio
import pytest
from polyg_core.errors import NodeNotFound
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.retrieval.probability import causal_probability
from polyg_core.storage.store import FalkorStore

pytestmark = pytest.mark.anyio


@pytest.fixture
async def memory(store: FalkorStore, embedder: Embedder, namespace: str) -> Memory:
    return Memory(store=store, embedder=embedder, namespace=namespace)


async def test_one_chain_is_the_product_and_parallel_chains_combine(memory: Memory) -> None:
    ns = memory.namespace
    c = memory.causal
    with anyio.fail_after(60):
        await c.add_link(ns, "cache flush", "cold cache", 0.9)
        await c.add_link(ns, "cold cache", "database overload", 0.8)
        await c.add_link(ns, "cache flush", "retry storm", 0.5)
        await c.add_link(ns, "retry storm", "database overload", 0.6)
        await c.add_link(ns, "database overload", "cache flush", 0.4)  # a cycle back
        chain = await memory.causal_probability("cache flush", "cold cache")
        both = await memory.causal_probability("cache flush", "database overload")
    assert chain.estimate.probability == pytest.approx(0.9)
    assert both.estimate.probability == pytest.approx(1 - (1 - 0.72) * (1 - 0.3))
    assert both.estimate.method == "exact" and both.estimate.relevant_links == 4
    assert "noisy-OR over independent links" in both.explanation
    assert both.paths[0] == (
        ["cache flush", "cold cache", "database overload"],
        pytest.approx(0.72),
    )


async def test_unknown_cause_is_not_found(memory: Memory) -> None:
    ns = memory.namespace
    await memory.causal.add_link(ns, "cache flush", "cold cache", 0.9)
    with pytest.raises(NodeNotFound):
        await causal_probability(memory.store, ns, "no-such-uuid", "other")
