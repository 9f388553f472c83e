"""Which turn of an exchange answers: names in a question, question words, replies."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import anyio
import pytest
from polyg_core.memory import Memory
from polyg_core.recall.memories import capitalised_names

from ..conftest import add_said

pytestmark = pytest.mark.anyio

NOW = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)


async def _add(memory: Memory, text: str, *, minutes_ago: float) -> str:
    return await add_said(memory, text, NOW - timedelta(minutes=minutes_ago))


async def _ranked(memory: Memory, question: str, *retrievers: str) -> list[str]:
    result = await memory.recall(question, reference_time=NOW, retrievers=list(retrievers))
    return [m.uuid for m in result.memories]


def test_a_word_that_opens_the_question_is_no_name() -> None:
    def tokens(word: str) -> list[str]:
        return [word.lower()]

    assert capitalised_names("How does Noor unwind?", tokens) == ["Noor"]
    assert capitalised_names("Did Kemal Droste eat meat?", tokens) == ["Kemal Droste"]
    assert capitalised_names("What did Noor tell Bram about Lisbon?", tokens) == [
        "Noor",
        "Bram",
        "Lisbon",
    ]
    assert capitalised_names("According to Ines, which tram is best?", tokens) == ["Ines"]


async def test_a_later_memory_sharing_only_a_question_word_is_no_update(memory: Memory) -> None:
    # "how" and "now" in Oren's later note made it an update of Noor's answer when "How"
    # (the question's first word) was taken for a name, and "how" for an asked word.
    with anyio.fail_after(60):
        answer = await _add(
            memory, "Noor: A long swim after work is how I unwind.", minutes_ago=9000
        )
        later = await _add(memory, "Oren: Now I know how to fix the bike chain.", minutes_ago=60)
        await _add(memory, "Oren: The allotment needs new fencing.", minutes_ago=5000)
        ranked = await _ranked(memory, "How does Noor unwind?", "lexical", "dense", "entity")
    assert ranked.index(answer) < ranked.index(later)
