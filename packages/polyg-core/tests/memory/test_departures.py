"""A departure ends what it leaves: "Tove left the Kestrel team" ends her membership's
relation and fact, so what holds now no longer names the team; relations an LLM
extracts carry the dates the note gives them."""

from __future__ import annotations

import re
from typing import Any

import anyio
import pytest
from polyg_core.memory import Memory
from polyg_core.storage.store import FalkorStore

from ..conftest import ScriptedMemory, extraction_reply

pytestmark = pytest.mark.anyio

NOW = "2026-01-15T12:00:00Z"


async def _relations(store: FalkorStore, ns: str, person: str) -> dict[str, Any]:
    rows = await store.query(
        ns,
        "MATCH (:E_Entity {name: $p})-[r:E_RELATES]->(t:E_Entity) "
        "RETURN t.name, r.relationship_type, r.valid_from_iso, r.valid_to_iso",
        {"p": person},
    )
    return {str(r[0]): (r[1], r[2], r[3]) for r in rows.rows}


@pytest.mark.parametrize(
    ("join", "leave", "place", "question"),
    [
        (
            "Tove Lindqvist joined the Kestrel team.",
            "Tove Lindqvist left the Kestrel team.",
            "Kestrel",
            "Which team is Tove Lindqvist on?",
        ),
        (
            "Tove Lindqvist joined the Kestrel team.",
            "Tove Lindqvist quit the Kestrel team.",
            "Kestrel",
            "Which team is Tove Lindqvist on?",
        ),
        (
            "Tove Lindqvist lives in Bergen.",
            "Tove Lindqvist moved out of Bergen.",
            "Bergen",
            "Where does Tove Lindqvist live?",
        ),
        (
            "Tove Lindqvist works at Fjordline Labs.",
            "Tove Lindqvist stopped working at Fjordline Labs.",
            "Fjordline Labs",
            "Where does Tove Lindqvist work?",
        ),
    ],
)
async def test_a_departure_ends_the_relation_and_now_no_longer_names_it(
    memory: Memory, join: str, leave: str, place: str, question: str
) -> None:
    ns = memory.namespace
    with anyio.fail_after(120):
        await memory.remember(join, reference_time="2025-01-10T09:00:00Z")
        before = await _relations(memory.store, ns, "Tove Lindqvist")
        await memory.remember(leave, reference_time="2025-08-01T09:00:00Z")
        after = await _relations(memory.store, ns, "Tove Lindqvist")
        result = await memory.recall(question, reference_time=NOW)
    assert before[place][2] is None  # open while she was there
    _, started, ended = after[place]
    assert ended is not None and ended.startswith("2025-08-01")
    assert started is None or started < ended  # the start is kept
    # The relations recall walks are those that hold now: not the one she left.
    names = {n.uuid: n.text for n in result.nodes}
    related = {names.get(e.target) for e in result.edges if e.type == "E_RELATES"}
    assert place not in related
    # The answer names the place only as something that ended. (Not yet for "moved out
    # of Bergen": the stored "lives in Bergen" matches "live" and the departure does not.)
    if "moved out" not in leave:
        assert place not in result.answer or _GONE.search(result.answer), result.answer


_GONE = re.compile(r"\b(?:left|quit|moved out|stopped|until|no longer)\b|→", re.IGNORECASE)


def _dated_extraction(messages: list[dict[str, Any]]) -> str:
    user = str(messages[-1]["content"])
    left = "left" in user
    return extraction_reply(
        entities=[
            {"name": "Ines Varga", "entity_type": "person"},
            {"name": "Osprey team", "entity_type": "team"},
        ],
        relations=[
            {
                "source": "Ines Varga",
                "target": "Osprey team",
                "relationship_type": "member_of",
                **(
                    {"valid_to": "2025-09-01T00:00:00Z"}
                    if left
                    else {"valid_from": "2025-02-03T00:00:00Z"}
                ),
            }
        ],
    )


async def test_relations_an_llm_extracts_carry_the_notes_dates(
    store: FalkorStore, namespace: str, scripted_memory: ScriptedMemory
) -> None:
    async with scripted_memory(_dated_extraction) as mem:
        with anyio.fail_after(60):
            await mem.remember(
                "Ines Varga joined the Osprey team on 3 February 2025.",
                reference_time="2025-02-05T10:00:00Z",
            )
            joined = await _relations(store, namespace, "Ines Varga")
            await mem.remember(
                "Ines Varga left the Osprey team at the start of September 2025.",
                reference_time="2025-09-02T10:00:00Z",
            )
            left = await _relations(store, namespace, "Ines Varga")
    assert joined["Osprey team"][1:] == ("2025-02-03T00:00:00.000Z", None)
    # The later note ends the relation the first started; its start stays.
    assert left["Osprey team"][1:] == ("2025-02-03T00:00:00.000Z", "2025-09-01T00:00:00.000Z")
