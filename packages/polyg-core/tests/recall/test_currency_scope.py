"""What is current wins only where a later note can replace a value: not for a question
asking a reason, and never by a note that only asks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import anyio
import pytest
from polyg_core.memory import Memory

from ..conftest import add_said

pytestmark = pytest.mark.anyio

NOW = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)
RETRIEVERS = ["lexical", "dense", "entity"]


async def _add(memory: Memory, text: str, *, days_ago: float) -> str:
    return await add_said(memory, text, NOW - timedelta(days=days_ago))


async def _ranked(memory: Memory, question: str) -> list[str]:
    result = await memory.recall(question, reference_time=NOW, retrievers=RETRIEVERS)
    return [m.uuid for m in result.memories]


async def test_a_reason_is_not_replaced_by_a_later_note_about_the_same_person(
    memory: Memory,
) -> None:
    # Lena's later note names her and says "now", but it changes nothing about why she
    # takes the train: the reason stays first.
    with anyio.fail_after(60):
        reason = await _add(
            memory,
            "Lena: The car broke down for good, so I take the train to the office.",
            days_ago=90,
        )
        later = await _add(
            memory, "Lena: I now lead the data platform team at the office.", days_ago=3
        )
        await _add(memory, "Pavel: The canteen serves soup on Mondays.", days_ago=40)
        ranked = await _ranked(memory, "Why does Lena take the train to the office?")
    assert ranked.index(reason) < ranked.index(later)


async def test_a_note_that_only_asks_updates_nothing(memory: Memory) -> None:
    # Pavel's later question names Tallinn and is close in meaning to the question, but
    # it states no value: Mira's own account of where she lives stays first.
    with anyio.fail_after(60):
        told = await _add(memory, "Mira: I live in Tallinn now, near the old harbour.", days_ago=60)
        asked = await _add(memory, "Pavel: Where in Tallinn do you live these days?", days_ago=2)
        await _add(memory, "Pavel: The canteen serves soup on Mondays.", days_ago=30)
        ranked = await _ranked(memory, "Where does Mira live in Tallinn?")
    assert ranked.index(told) < ranked.index(asked)
