"""remember without an LLM writes people, teams and their moves as entities and facts."""

from __future__ import annotations

import anyio
import pytest
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.storage.store import FalkorStore

pytestmark = pytest.mark.anyio


async def test_a_move_between_teams_is_remembered_as_facts(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    mem = Memory(store=store, embedder=embedder, namespace=namespace)
    with anyio.fail_after(60):
        await mem.temporal.add_fact(
            namespace, "Alice", "member_of", "payments team", valid_from="2024-02-01T00:00:00Z"
        )
        result = await mem.remember(
            "Alice moved from the payments team to the auth team on June 1st.",
            reference_time="2026-01-07T16:00:00Z",
        )
    assert result.degraded  # no LLM: the rules extracted
    assert {"Alice", "payments team", "auth team"} <= {e.name for e in result.entities}
    types = await store.query(
        namespace, "MATCH (e:E_Entity) RETURN e.name, e.entity_type ORDER BY e.name"
    )
    # Alice existed before (written by the earlier fact, untyped): remember reuses her.
    assert dict((str(r[0]), str(r[1])) for r in types.rows) == {
        "Alice": "entity",
        "auth team": "team",
        "payments team": "team",
    }
    current = await mem.temporal.facts(namespace, subject="Alice", predicate="member_of")
    assert [(f.object, f.valid_from.date().isoformat()) for f in current] == [
        ("auth team", "2025-06-01")
    ]
    history = await mem.temporal.facts(
        namespace, subject="Alice", predicate="member_of", history=True
    )
    # The payments membership ends when the auth one starts (the earlier record is closed).
    ended = [f for f in history if f.object == "payments team"]
    assert ended and all(
        f.valid_to is not None and f.valid_to.date().isoformat() <= "2025-06-01" for f in ended
    )
    assert any(
        f.valid_to is not None and f.valid_to.date().isoformat() == "2025-06-01" for f in ended
    )
    before = await mem.temporal.facts(
        namespace, subject="Alice", predicate="member_of", as_of="2025-03-01T00:00:00Z"
    )
    assert [f.object for f in before] == ["payments team"]


async def test_chat_notes_leave_no_numbers_greetings_or_stop_words_in_the_graph(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    mem = Memory(store=store, embedder=embedder, namespace=namespace)
    with anyio.fail_after(60):
        for text in (
            "Hey Carla! Running is better than swimming instead.",
            "We ran 14 miles on Fri and it was better than last time.",
        ):
            await mem.remember(text, reference_time="2026-01-07T16:00:00Z")
    entities = await store.query(namespace, "MATCH (e:E_Entity) RETURN e.name")
    concepts = await store.query(namespace, "MATCH (c:S_Concept) RETURN c.name")
    names = {str(r[0]) for r in entities.rows}
    assert names == {"Carla"}
    words = {w for r in concepts.rows for w in str(r[0]).split()}
    assert not words & {"14", "fri", "better", "instead", "hey"}


async def test_a_move_invents_no_start_for_the_membership_it_ends_when_the_graph_had_none(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    mem = Memory(store=store, embedder=embedder, namespace=namespace)
    with anyio.fail_after(60):
        await mem.remember(
            "Priya transferred from the data team to the search team in March.",
            reference_time="2026-01-07T16:00:00Z",
        )
    before = await mem.temporal.facts(
        namespace, subject="Priya", predicate="member_of", as_of="2025-02-01T00:00:00Z"
    )
    after = await mem.temporal.facts(
        namespace, subject="Priya", predicate="member_of", as_of="2025-04-01T00:00:00Z"
    )
    # Since when Priya was on the data team is not said: no fact with a made-up start.
    assert before == []
    assert [f.object for f in after] == ["search team"]
    history = await mem.temporal.facts(namespace, subject="Priya", history=True)
    assert [f.object for f in history] == ["search team"]
    types = await store.query(namespace, "MATCH (e:E_Entity) RETURN e.name, e.entity_type")
    assert dict((str(r[0]), str(r[1])) for r in types.rows) == {
        "Priya": "person",
        "data team": "team",
        "search team": "team",
    }


async def test_a_name_two_stored_entities_share_does_not_lose_the_memory(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    mem = Memory(store=store, embedder=embedder, namespace=namespace)
    with anyio.fail_after(60):
        await mem.entities.add(namespace, "Alice", "person")
        await mem.entities.add(namespace, "Alice", "project")
        result = await mem.remember(
            "Alice moved from the payments team to the auth team on June 1st.",
            reference_time="2026-01-07T16:00:00Z",
        )
        stored = await store.query(namespace, "MATCH (m:S_Memory) RETURN count(m)")
    assert int(stored.rows[0][0]) == 1  # the memory is written, not refused
    alice = [e for e in result.entities if e.name == "Alice"]
    assert len(alice) == 1
    # A fact names its subject by text, which cannot say which Alice: it is skipped
    # (the memory keeps the sentence) rather than written against the wrong one.
    current = await mem.temporal.facts(namespace, subject="Alice", predicate="member_of")
    assert current == []
