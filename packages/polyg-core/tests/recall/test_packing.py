"""recall's max_tokens: the memories and the answer's nodes packed into the budget, never
over, best evidence first, with what was left out listed."""

from __future__ import annotations

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polyg_core.errors import InvalidInput
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.recall.packing import item_cost, pack
from polyg_core.storage.store import FalkorStore
from polyg_shared.retrieval import ContextNode, RecalledMemory

REF = "2026-04-01T09:00:00Z"

_text = st.text(alphabet="abcdefgh ijklm.", min_size=1, max_size=300)


def _memories(texts: list[str]) -> list[RecalledMemory]:
    return [
        RecalledMemory(uuid=f"m{i}", content=t, score=float(len(texts) - i))
        for i, t in enumerate(texts)
    ]


def _nodes(texts: list[str], memories: list[RecalledMemory]) -> list[ContextNode]:
    nodes = [
        ContextNode(uuid=f"n{i}", label="T_Fact", graph="temporal", text=t, score=1.0)
        for i, t in enumerate(texts)
    ]
    # A memory node duplicates its memory: it must be counted once.
    nodes += [
        ContextNode(uuid=m.uuid, label="S_Memory", graph="semantic", text=m.content, score=0.5)
        for m in memories[:2]
    ]
    return nodes


@settings(max_examples=200)
@given(
    memory_texts=st.lists(_text, max_size=15),
    node_texts=st.lists(_text, max_size=10),
    budget=st.integers(min_value=1, max_value=2_000),
    data=st.data(),
)
def test_packing_never_exceeds_the_budget_and_keeps_the_best_first(
    memory_texts: list[str], node_texts: list[str], budget: int, data: st.DataObject
) -> None:
    memories = _memories(memory_texts)
    nodes = _nodes(node_texts, memories)
    all_ids = [m.uuid for m in memories] + [n.uuid for n in nodes if n.label == "T_Fact"]
    sources = data.draw(st.lists(st.sampled_from(all_ids), max_size=3)) if all_ids else []
    packed = pack(memories, nodes, sources, budget)
    cost = sum(item_cost(m.content) for m in packed.memories)
    cost += sum(item_cost(n.text) for n in packed.nodes if n.label != "S_Memory")
    assert cost == packed.report.tokens <= budget
    kept = {m.uuid for m in packed.memories} | {n.uuid for n in packed.nodes}
    left = {s.uuid for s in packed.report.left_out}
    assert not kept & left
    # Everything offered is either kept or listed as left out.
    assert {m.uuid for m in memories} | {n.uuid for n in nodes} == kept | left
    # Best first: a memory is left out only when it did not fit after everything before it.
    order = [m.uuid for m in packed.memories]
    assert order == [m.uuid for m in memories if m.uuid in set(order)]
    # The answer's first source goes first: it is kept whenever it fits on its own.
    if sources:
        texts = {m.uuid: m.content for m in memories} | {n.uuid: n.text for n in nodes}
        assert (sources[0] in kept) == (item_cost(texts[sources[0]]) <= budget)


def test_a_budget_below_one_token_is_refused() -> None:
    with pytest.raises(InvalidInput, match="max_tokens must be at least 1"):
        pack([], [], [], 0)


@pytest.mark.anyio
async def test_recall_with_max_tokens_stays_within_it(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    memory = Memory(store=store, embedder=embedder, namespace=namespace)
    notes = [
        "Ravi replaced the router in the garage office on Monday.",
        "The garage office router kept dropping the video calls before that.",
        "Ravi keeps the spare cables in the blue box under the desk.",
        "The new router came with a two year warranty from the shop on Elm Street.",
        "Odette painted the garage door green over the weekend.",
        "Odette and Ravi plan to insulate the garage office before winter.",
    ]
    question = "What did Ravi do about the router in the garage office?"
    with anyio.fail_after(180):
        for note in notes:
            await memory.remember(note, reference_time=REF)
        full = await memory.recall(question, reference_time=REF)
        assert full.packed is None
        for budget in (1, 5, 12, 20, 30, 45, 60, 90, 150, 400, 4000):
            result = await memory.recall(question, reference_time=REF, max_tokens=budget)
            assert result.packed is not None
            used = sum(item_cost(m.content) for m in result.memories)
            used += sum(item_cost(n.text) for n in result.nodes if n.label != "S_Memory")
            assert used == result.packed.tokens <= budget
            # Best evidence first: what is kept keeps the unpacked order.
            kept = [m.uuid for m in result.memories]
            assert kept == [m.uuid for m in full.memories if m.uuid in set(kept)]
            listed = {s.uuid for s in result.packed.left_out}
            assert all(m.uuid in listed for m in full.memories if m.uuid not in set(kept))
    with pytest.raises(InvalidInput, match="max_tokens"):
        await memory.recall(question, reference_time=REF, max_tokens=0)
