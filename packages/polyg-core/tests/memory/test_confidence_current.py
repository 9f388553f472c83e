"""Confidence that follows what is current: an answer that quotes a value a later memory
changed ("moved out of", "no longer") is capped, and an update is answered with its
current value."""

from __future__ import annotations

import re

import anyio
import pytest
from polyg_core.memory import Memory
from polyg_core.recall.answer.confidence import CONTRADICTED_CAP

pytestmark = pytest.mark.anyio

NOW = "2026-02-10T12:00:00Z"
_GONE = re.compile(r"\b(?:left|quit|moved out|stopped|until|no longer|now)\b", re.IGNORECASE)


@pytest.mark.parametrize(
    ("before", "after", "old", "question"),
    [
        (
            "Signe Aalto lives in Kirkenes.",
            "Signe Aalto moved out of Kirkenes.",
            "Kirkenes",
            "Where does Signe Aalto live?",
        ),
        (
            "Signe Aalto is on the Tern team.",
            "Signe Aalto is no longer on the Tern team.",
            "Tern",
            "Which team is Signe Aalto on?",
        ),
    ],
)
async def test_an_answer_naming_a_value_that_ended_as_current_is_capped(
    memory: Memory, before: str, after: str, old: str, question: str
) -> None:
    with anyio.fail_after(120):
        await memory.remember(before, reference_time="2025-03-01T09:00:00Z")
        await memory.remember(after, reference_time="2025-10-01T09:00:00Z")
        result = await memory.recall(question, reference_time=NOW)
    # Either the answer says the old value ended, or it does not name it, or, naming it as
    # if it held, it is not confident.
    named_as_current = old in result.answer and not _GONE.search(result.answer)
    assert not named_as_current or result.confidence <= CONTRADICTED_CAP, (
        result.answer,
        result.confidence_factors,
    )


async def test_an_update_is_answered_with_its_current_value(memory: Memory) -> None:
    with anyio.fail_after(120):
        await memory.remember(
            "Signe Aalto lives in Kirkenes.", reference_time="2025-03-01T09:00:00Z"
        )
        await memory.remember(
            "Signe Aalto moved from Kirkenes to Alta.", reference_time="2025-10-01T09:00:00Z"
        )
        result = await memory.recall("Where does Signe Aalto live?", reference_time=NOW)
    assert "Alta" in result.answer, result.answer
    # The current value comes first; the old statement only after it, as history.
    old = result.answer.find("lives in Kirkenes")
    assert old == -1 or result.answer.find("Alta") < old, result.answer
    assert result.confidence_factors.get("stale") is None
