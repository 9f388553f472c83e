"""Multi-hop recall: the PPR view finds answers the entity/temporal/causal views miss."""

from __future__ import annotations

import anyio
import pytest
from polyg_core.memory import Memory
from polyg_core.scenarios import load_scenario

pytestmark = pytest.mark.anyio

REF = "2026-01-14T12:00:00Z"


async def load_chain(memory: Memory, ns: str) -> None:
    """A generated graph: the answer (Tessaly) is three E_RELATES hops from the query term."""
    e = memory.entities
    for name, kind in [
        ("Zorbex", "Service"),
        ("Quillon", "Service"),
        ("Marrowgate", "Database"),
        ("Tessaly", "Team"),
    ]:
        await e.add(ns, name, kind)
    await e.link(ns, "Zorbex", "Quillon", "calls")
    await e.link(ns, "Quillon", "Marrowgate", "stores_in")
    await e.link(ns, "Marrowgate", "Tessaly", "owned_by")
    # Distractors around the chain, so the answer is not simply "everything".
    for i, hub in enumerate(["Zorbex", "Quillon", "Marrowgate", "Zorbex", "Quillon"]):
        await e.add(ns, f"aux-{i}", "Component")
        await e.link(ns, hub, f"aux-{i}", "uses")


async def test_ppr_finds_an_answer_three_hops_from_the_query_term(memory: Memory) -> None:
    with anyio.fail_after(60):
        await load_chain(memory, memory.namespace)
        question = "Who indirectly owns the data that Zorbex depends on?"
        with_ppr = await memory.recall(question, reference_time=REF)
        without = await memory.recall(question, ppr=False, reference_time=REF)
    assert with_ppr.intent["multi_hop"] is True  # "indirectly": PPR runs by default
    assert [v.status for v in with_ppr.views if v.view == "ppr"] == ["ok"]
    assert "ppr" not in {v.view for v in without.views}
    assert "Tessaly" in {n.text for n in with_ppr.nodes}
    assert "Tessaly" not in {n.text for n in without.nodes}
    assert "Tessaly" in with_ppr.context.text


async def test_ppr_finds_the_fix_on_the_incident_scenario(memory: Memory) -> None:
    # Erin owns payments-api, which connects through pgbouncer, whose pool was restored:
    # the fix event is three hops from the only entity the question names.
    with anyio.fail_after(90):
        await load_scenario(memory, "incident_response")
        question = "Who indirectly fixed the pool that Erin's service connects through?"
        with_ppr = await memory.recall(question, reference_time=REF)
        without = await memory.recall(question, ppr=False, reference_time=REF)
    answer = "pgbouncer pool size restored to 100"
    assert with_ppr.intent["entities"] == ["Erin"]
    found = {n.text: n for n in with_ppr.nodes}
    # The walk reaches it (word search may seed it too: it shares "pool" with the question).
    assert answer in found and "ppr" in found[answer].views
    assert all("ppr" not in n.views for n in without.nodes)
    ppr_view = next(v for v in with_ppr.views if v.view == "ppr")
    assert ppr_view.status == "ok" and ppr_view.nodes > 0


async def test_ppr_view_is_skipped_for_single_hop_questions(memory: Memory) -> None:
    with anyio.fail_after(60):
        await load_chain(memory, memory.namespace)
        result = await memory.recall("What is Zorbex?", reference_time=REF)
    assert result.intent["multi_hop"] is False
    assert "ppr" not in {v.view for v in result.views}
