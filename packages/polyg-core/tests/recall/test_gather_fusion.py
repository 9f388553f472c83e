"""For a question that gathers, the asked person's name lifts their reply to someone
else's question as much as their other words: it does not outvote what answers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import anyio
import pytest
from polyg_core.memory import Memory
from polyg_core.recall.multihop import asks_to_gather

from ..conftest import add_said

pytestmark = pytest.mark.anyio

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


async def _add(memory: Memory, text: str, *, days_ago: float, minutes: float = 0) -> str:
    return await add_said(memory, text, NOW - timedelta(days=days_ago) + timedelta(minutes=minutes))


async def test_the_asked_persons_reply_outranks_their_other_words_for_a_gathering_question(
    memory: Memory,
) -> None:
    # Oren's question holds the asked words; Noor's reply to it answers in none of them.
    # Noor's other memories share a word or two with the question. Her name lifts all of
    # her memories the text retrievers found; the reply inherits its rank from Oren's
    # question, which her name does not lift, and must get her name's credit of its own
    # or her other words outrank it (they did: "Work has been hectic ..." came first).
    question = "What does Noor do to unwind after work?"
    assert asks_to_gather(question)
    with anyio.fail_after(90):
        await _add(memory, "Oren: Long week at the depot, finally Friday.", days_ago=9)
        await _add(
            memory,
            "Oren: Noor, what do you do to unwind after work these days?",
            days_ago=9,
            minutes=1,
        )
        reply = await _add(
            memory,
            "Noor: Mostly I sketch herons along the canal, and on Sundays I bake rye bread.",
            days_ago=9,
            minutes=2,
        )
        distractors = [
            await _add(memory, "Noor: Work has been hectic since the audit started.", days_ago=30),
            await _add(
                memory, "Noor: I walk to work now that the tram line is closed.", days_ago=21
            ),
            await _add(memory, "Noor: The after-school club needs another volunteer.", days_ago=14),
            await _add(memory, "Noor: What do you think of the new depot manager?", days_ago=4),
        ]
        await _add(memory, "Oren: My sister visits in June.", days_ago=3)
        await _add(memory, "Oren: The allotment needs new fencing before winter.", days_ago=2)
        result = await memory.recall(question, reference_time=NOW)
    ranked = [m.uuid for m in result.memories]
    assert reply in ranked
    later = [d for d in distractors if d in ranked and ranked.index(d) < ranked.index(reply)]
    assert not later, [m.content for m in result.memories]
