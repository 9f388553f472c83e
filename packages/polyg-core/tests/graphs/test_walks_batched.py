"""The expansion views' batched first reads answer exactly what the single reads answer,
in the same order (invented notes, the real embedded server): the seeds' entities with
their first hop, the seeds' events, facts, and the causal nodes the walk starts from."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import pytest
from polyg_core.graphs.walks import GraphWalks
from polyg_core.memory import Memory
from polyg_core.storage import FalkorStore
from polyg_core.storage.schema import CAUSAL, ENTITY, EVENT, FACT
from polyg_shared.timeutil import parse_timestamp, to_epoch_ms

pytestmark = pytest.mark.anyio

# (start, end) windows: none, open on either side, closed, and one that holds nothing.
WINDOWS: list[tuple[str | None, str | None]] = [
    (None, None),
    ("2026-03-01", None),
    (None, "2026-03-02"),
    ("2026-02-01", "2026-03-02"),
    ("2030-01-01", "2030-02-01"),
]
NOW = "2026-05-01"


def _ms(day: str | None) -> int | None:
    return to_epoch_ms(parse_timestamp(day)) if day else None


async def _uuids(store: FalkorStore, namespace: str, label: str) -> list[str]:
    res = await store.query(
        namespace, f"MATCH (n:{label}) RETURN n.uuid ORDER BY n.uuid", read_only=True
    )
    return [str(u) for (u,) in res.rows]


@pytest.fixture
async def filled(ledger_memory: Memory) -> str:
    memory, namespace = ledger_memory, ledger_memory.namespace
    await memory.entities.ensure(namespace, ["Wiremu Tane", "Ines Albarran", "Kofi Mensah"])
    await memory.entities.link(
        namespace, "Wiremu Tane", "Ines Albarran", "handed_over_to", valid_from="2026-03-01"
    )
    await memory.entities.link(
        namespace,
        "Kofi Mensah",
        "Ines Albarran",
        "worked_with",
        valid_from="2025-01-01",
        valid_to="2026-02-15",
    )
    return namespace


def _subsets(ids: Sequence[str]) -> list[list[str]]:
    """No ids, one, all, and every other one (the combinations the views send)."""
    return [[], list(ids[:1]), list(ids), list(ids[::2])]


async def test_the_graph_holds_what_the_reads_need(store: FalkorStore, filled: str) -> None:
    # Otherwise the comparisons below would compare empty answers.
    for label in (ENTITY, EVENT, FACT, CAUSAL):
        assert await _uuids(store, filled, label), label
    walks = GraphWalks(store)
    entities = await _uuids(store, filled, ENTITY)
    now = _ms(NOW)
    assert now is not None
    assert await walks.relations_held(filled, entities, start=None, end=None, now=now, cap=100)
    assert await walks.causal_touching(filled, entities, [], 100)


@pytest.mark.parametrize(("start", "end"), WINDOWS)
async def test_entities_with_their_first_hop_answer_as_the_two_reads(
    store: FalkorStore, filled: str, start: str | None, end: str | None
) -> None:
    walks = GraphWalks(store)
    entities = await _uuids(store, filled, ENTITY)
    now = _ms(NOW)
    assert now is not None
    both = False
    for ids, cap in itertools.product(_subsets(entities), (3, 200)):
        batched = await walks.entities_and_relations(
            filled, ids, start=_ms(start), end=_ms(end), now=now, cap=cap
        )
        single = (
            await walks.entities(filled, ids),
            await walks.relations_held(
                filled, ids, start=_ms(start), end=_ms(end), now=now, cap=cap
            ),
        )
        assert batched == single
        both |= bool(single[0] and single[1])
    assert both or start is not None, "no comparison had rows in both parts"


@pytest.mark.parametrize(("start", "end"), WINDOWS)
async def test_the_seeds_events_answer_as_the_two_reads(
    store: FalkorStore, filled: str, start: str | None, end: str | None
) -> None:
    walks = GraphWalks(store)
    entities = await _uuids(store, filled, ENTITY)
    events = await _uuids(store, filled, EVENT)
    both = False
    for ents, evs, cap in itertools.product(_subsets(entities), _subsets(events), (2, 50)):
        batched = await walks.events_of_seeds(
            filled, ents, evs, start=_ms(start), end=_ms(end), cap=cap
        )
        single = (
            await walks.events_involving(filled, ents, start=_ms(start), end=_ms(end), cap=cap),
            await walks.events(filled, evs, start=_ms(start), end=_ms(end)),
        )
        assert batched == single
        both |= bool(single[0] and single[1])
    assert both or start is not None, "no comparison had rows in both parts"


@pytest.mark.parametrize(("start", "end"), WINDOWS)
async def test_the_seeds_facts_answer_as_the_two_reads(
    store: FalkorStore, filled: str, start: str | None, end: str | None
) -> None:
    walks = GraphWalks(store)
    entities = await _uuids(store, filled, ENTITY)
    facts = await _uuids(store, filled, FACT)
    both = False
    for asof in ("2026-02-01", NOW):
        at = _ms(asof)
        assert at is not None
        for ents, ids, cap in itertools.product(_subsets(entities), _subsets(facts), (1, 50)):
            batched = await walks.facts_of_seeds(
                filled, ents, ids, start=_ms(start), end=_ms(end), asof=at, cap=cap
            )
            single = (
                await walks.facts_involving(
                    filled, ents, start=_ms(start), end=_ms(end), asof=at, cap=cap
                ),
                await walks.facts(filled, ids, start=_ms(start), end=_ms(end), asof=at),
            )
            assert batched == single
            both |= bool(single[0] and single[1])
    assert both or start is not None, "no comparison had rows in both parts"


async def test_the_causal_starts_answer_as_the_two_reads(store: FalkorStore, filled: str) -> None:
    walks = GraphWalks(store)
    causal = await _uuids(store, filled, CAUSAL)
    entities = await _uuids(store, filled, ENTITY)
    events = await _uuids(store, filled, EVENT)
    both = False
    for ids, ents, evs, cap in itertools.product(
        _subsets(causal), _subsets(entities), _subsets(events), (1, 50)
    ):
        batched = await walks.causal_starts(filled, ids, ents, evs, cap)
        single = (
            await walks.causal_nodes(filled, ids),
            await walks.causal_touching(filled, ents, evs, cap),
        )
        assert batched == single
        both |= bool(single[0] and single[1])
    assert both, "no comparison had rows in both parts"


async def test_a_walk_both_ways_reads_its_first_hops_as_the_two_steps(
    store: FalkorStore, filled: str
) -> None:
    walks = GraphWalks(store)
    causal = await _uuids(store, filled, CAUSAL)
    both = False
    for ids, cap in itertools.product(_subsets(causal), (1, 200)):
        batched = await walks.causal_steps_both(filled, ids, cap)
        single = (
            await walks.causal_steps(filled, ids, "up", cap),
            await walks.causal_steps(filled, ids, "down", cap),
        )
        assert batched == single
        both |= bool(single[0] and single[1])
    assert both, "no comparison had rows both ways"
