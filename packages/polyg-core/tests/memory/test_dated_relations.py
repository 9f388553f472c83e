"""Point-in-time questions walk the relations that held then; present-tense ones the
relations that hold now."""

from __future__ import annotations

import anyio
import pytest
from polyg_core.memory import Memory

pytestmark = pytest.mark.anyio

REF = "2026-01-15T12:00:00Z"


async def related_teams(memory: Memory, question: str) -> set[str]:
    result = await memory.recall(question, reference_time=REF)
    names = {n.uuid: n.text for n in result.nodes}
    return {
        names.get(e.target, e.target)
        for e in result.edges
        if e.type == "E_RELATES" and e.label == "member_of"
    }


async def test_a_question_about_may_walks_the_team_of_may(memory: Memory) -> None:
    ns = memory.namespace
    with anyio.fail_after(120):
        for name, etype in (
            ("Nadia Quell", "person"),
            ("Atlas team", "team"),
            ("Beacon team", "team"),
        ):
            await memory.entities.add(ns, name, etype)
        await memory.entities.link(
            ns, "Nadia Quell", "Atlas team", "member_of", valid_from="2024-01-01",
            valid_to="2025-05-31",
        )  # fmt: skip
        await memory.entities.link(
            ns, "Nadia Quell", "Beacon team", "member_of", valid_from="2025-06-01"
        )
        then = await related_teams(memory, "Which team was Nadia Quell on in May 2025?")
        now = await related_teams(memory, "Which team is Nadia Quell on?")
    assert then == {"Atlas team"}
    assert now == {"Beacon team"}
