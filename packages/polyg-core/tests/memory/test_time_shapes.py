"""Time questions get answers of their shape: a value held before / after / in a time, the
value before the current one, a duration, a frequency; never a bare date."""

from __future__ import annotations

import re

import anyio
import pytest
from polyg_core.memory import Memory

pytestmark = pytest.mark.anyio

REF = "2026-01-15T12:00:00Z"
_DATE_ONLY = re.compile(r"^\W*\d{4}-\d{2}-\d{2}[^A-Za-z]*(?:\([^)]*\))?\W*$")


async def _wren(memory: Memory) -> None:
    """Wren Oduya's changing work, city and tea, and one outage of the ledger."""
    ns = memory.namespace
    t = memory.temporal
    await memory.entities.add(ns, "Wren Oduya", "Person")
    await t.add_fact(ns, "Wren Oduya", "works_on", "Ledger API", valid_from="2025-06-01")
    await t.add_fact(ns, "Wren Oduya", "works_on", "Search Indexer", valid_from="2025-12-01")
    await t.add_fact(ns, "Wren Oduya", "lives_in", "Tallinn", valid_from="2023-01-01")
    await t.add_fact(ns, "Wren Oduya", "lives_in", "Tartu", valid_from="2025-02-01")
    await t.add_fact(ns, "Wren Oduya", "takes_tea", "with honey", valid_from="2024-01-01")
    await t.add_fact(ns, "Wren Oduya", "takes_tea", "plain", valid_from="2025-08-01")
    await t.add_event(ns, "Ledger outage started", "2025-11-03T09:00:00Z", entities=["Wren Oduya"])
    await t.add_event(ns, "Ledger outage resolved", "2025-11-03T11:30:00Z", entities=["Wren Oduya"])


async def _ask(memory: Memory, question: str) -> str:
    result = await memory.recall(question, reference_time=REF)
    assert not _DATE_ONLY.match(result.answer), f"{question!r} got a bare date: {result.answer}"
    return result.answer


async def test_before_a_time_is_strictly_before_it(memory: Memory) -> None:
    with anyio.fail_after(120):
        await _wren(memory)
        nothing = await _ask(memory, "What did Wren Oduya work on before June 2025?")
        earlier = await _ask(memory, "What did Wren Oduya work on before December 2025?")
    # The Ledger API work began on 1 June: it is not what she worked on before June.
    assert "nothing recorded before June 2025" in nothing
    assert "Ledger API" in earlier
    assert "Search Indexer" not in earlier


async def test_a_place_in_a_year_is_the_place_held_then(memory: Memory) -> None:
    with anyio.fail_after(120):
        await _wren(memory)
        result = await memory.recall("Where did Wren Oduya live in 2024?", reference_time=REF)
        after = await _ask(memory, "Where did Wren Oduya live after 2024?")
    assert result.intent["type"] == "WHAT"
    assert "Tallinn" in result.answer and "Tartu" not in result.answer
    # After 2024 she moved: the value that began then, not the one that ended in February.
    assert "Tartu" in after and "Tallinn" not in after


async def test_how_long_measures_a_duration(memory: Memory) -> None:
    with anyio.fail_after(120):
        await _wren(memory)
        outage = await _ask(memory, "How long was the ledger outage?")
        lived = await _ask(memory, "How long has Wren Oduya lived in Tartu?")
    assert "2 hours 30 minutes" in outage
    assert "11 months" in lived and "since 2025-02-01" in lived


async def test_before_without_a_time_asks_the_previous_value(memory: Memory) -> None:
    with anyio.fail_after(120):
        await _wren(memory)
        answer = await _ask(memory, "How did Wren Oduya take her tea before?")
    assert "with honey" in answer


async def test_how_often_gets_the_stated_frequency(memory: Memory) -> None:
    with anyio.fail_after(120):
        await memory.remember(
            "Wren Oduya runs the restore drill every two weeks.",
            reference_time="2025-04-01T10:00:00Z",
        )
        await memory.remember(
            "Wren Oduya moved the restore drill to the new cluster.",
            reference_time="2025-05-01T10:00:00Z",
        )
        answer = await _ask(memory, "How often does Wren Oduya run the restore drill?")
    assert "every two weeks" in answer


async def test_the_previous_value_of_stored_texts_is_the_replaced_one(memory: Memory) -> None:
    with anyio.fail_after(120):
        await memory.remember(
            "Wren Oduya takes her tea with honey.", reference_time="2024-05-01T10:00:00Z"
        )
        await memory.remember(
            "Wren Oduya now takes her tea plain.", reference_time="2025-10-01T10:00:00Z"
        )
        answer = await _ask(memory, "How did Wren Oduya take her tea before?")
    assert "honey" in answer
