"""Event chains in their lean form: one `T_BEFORE` edge per pair of events that follow
each other directly among the events of an entity both involve, with no properties.

Whatever the order of writes, updates and deletes, the edges are exactly the union of
every entity's consecutive pairs (checked against that definition computed here), one
edge per pair; a namespace written by an older version (one edge per entity, carrying
the entity's uuid, events with ISO copies of their times) still reads and is kept right
by the same writes.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

import anyio
import pytest
from polyg_core.graphs.base import iso_ms
from polyg_core.graphs.bulk import EventItem, add_events
from polyg_core.graphs.entity import EntityGraph
from polyg_core.graphs.temporal import TemporalGraph
from polyg_core.graphs.temporal_queries import CHAIN_EDGES
from polyg_core.recall.context_nodes import to_context
from polyg_core.storage.store import FalkorStore

pytestmark = pytest.mark.anyio

T0 = 1_767_225_600_000  # 2026-01-01
HOUR = 3_600_000


async def expected_pairs(store: FalkorStore, ns: str) -> set[tuple[str, str]]:
    """The union of every entity's consecutive pairs, by the definition: each entity's
    events in (occurred_at, uuid) order."""
    res = await store.query(
        ns,
        "MATCH (ev:T_Event)-[:X_INVOLVES]->(x:E_Entity) RETURN x.uuid, ev.uuid, ev.occurred_at",
    )
    by_entity: dict[str, list[tuple[int, str]]] = {}
    for x, ev, t in res.rows:
        by_entity.setdefault(str(x), []).append((int(t), str(ev)))
    pairs: set[tuple[str, str]] = set()
    for events in by_entity.values():
        events.sort()
        pairs |= {(a[1], b[1]) for a, b in itertools.pairwise(events)}
    return pairs


async def stored_pairs(store: FalkorStore, ns: str) -> list[tuple[str, str]]:
    res = await store.query(ns, "MATCH (a:T_Event)-[:T_BEFORE]->(b:T_Event) RETURN a.uuid, b.uuid")
    return [(str(a), str(b)) for a, b in res.rows]


async def assert_chains_right(store: FalkorStore, ns: str, *, lean: bool = True) -> None:
    edges = await stored_pairs(store, ns)
    if lean:
        assert len(edges) == len(set(edges)), "two T_BEFORE edges join one pair of events"
        props = await store.query(
            ns, "MATCH ()-[r:T_BEFORE]->() WHERE size(keys(r)) > 0 RETURN count(r)"
        )
        assert props.scalar() == 0
    assert set(edges) == await expected_pairs(store, ns)


async def test_chains_hold_exactly_the_consecutive_pairs_whatever_the_write_order(
    store: FalkorStore, temporal: TemporalGraph, entities: EntityGraph, namespace: str
) -> None:
    rng = random.Random(38)
    crew = ["pilot", "navigator", "purser", "deckhand"]
    with anyio.fail_after(240):
        # Events out of time order, many sharing two or three crew members, some at the
        # same instant (ordered by uuid then).
        for i in range(40):
            who = rng.sample(crew, rng.randint(1, 3))
            at = T0 + rng.randint(0, 30) * HOUR
            await temporal.add_event(namespace, f"harbour log entry {i}", at, entities=who)
        await assert_chains_right(store, namespace)
        for i in range(0, 40, 7):
            await temporal.delete_event(namespace, f"harbour log entry {i}")
        await assert_chains_right(store, namespace)
        for i in (3, 11, 26):
            await temporal.update_event(
                namespace,
                f"harbour log entry {i}",
                occurred_at=T0 + rng.randint(0, 30) * HOUR,
                entities=rng.sample(crew, 2),
            )
        await assert_chains_right(store, namespace)
        assert await entities.delete(namespace, "deckhand")
        await assert_chains_right(store, namespace)
        await entities.merge(namespace, "purser", "navigator")
        await assert_chains_right(store, namespace)


async def test_an_event_between_two_shared_events_keeps_the_edge_the_other_chain_needs(
    store: FalkorStore, temporal: TemporalGraph, namespace: str
) -> None:
    with anyio.fail_after(60):
        await temporal.add_event(namespace, "kiln lit", T0, entities=["Ottilie", "Bertram"])
        await temporal.add_event(
            namespace, "kiln opened", T0 + 5 * HOUR, entities=["Ottilie", "Bertram"]
        )
        # Between them in Ottilie's chain only: Bertram's chain still needs lit -> opened.
        await temporal.add_event(namespace, "glaze mixed", T0 + 2 * HOUR, entities=["Ottilie"])
        await assert_chains_right(store, namespace)
        chains = await store.query(namespace, CHAIN_EDGES)
        ottilie = await store.query(namespace, "MATCH (x:E_Entity {name: 'Ottilie'}) RETURN x.uuid")
        assert sum(1 for x, _, _ in chains.rows if x == ottilie.scalar()) == 2
        assert len(chains.rows) == 3  # Ottilie's two edges and Bertram's one


async def write_old_shape(store: FalkorStore, ns: str, names: Sequence[str]) -> None:
    """What an older version stored: ISO copies of event times, one chain edge per entity
    carrying the entity's uuid (two parallel edges where two chains share a pair)."""
    await store.query(
        ns,
        "UNWIND $names AS n CREATE (:E_Entity {uuid: n + '-id', name: n, name_key: n, "
        "entity_type: 'entity'})",
        {"names": list(names)},
    )
    rows = [
        {"u": f"old-{i}", "d": f"old shift {i}", "t": T0 + i * HOUR, "iso": iso_ms(T0 + i * HOUR)}
        for i in range(3)
    ]
    await store.query(
        ns,
        "UNWIND $rows AS r CREATE (ev:T_Event {uuid: r.u, description: r.d, occurred_at: r.t, "
        "occurred_at_iso: r.iso, recorded_at: r.t, recorded_at_iso: r.iso}) "
        "WITH ev UNWIND $names AS n MATCH (x:E_Entity {name: n}) CREATE (ev)-[:X_INVOLVES]->(x)",
        {"rows": rows, "names": list(names)},
    )
    await store.query(
        ns,
        "UNWIND $names AS n UNWIND [[0, 1], [1, 2]] AS p "
        "MATCH (a:T_Event {uuid: 'old-' + toString(p[0])}), (b:T_Event {uuid: 'old-' + "
        "toString(p[1])}) CREATE (a)-[:T_BEFORE {entity: n + '-id'}]->(b)",
        {"names": list(names)},
    )


async def test_a_namespace_written_before_still_reads_and_relinks(
    store: FalkorStore, temporal: TemporalGraph, namespace: str
) -> None:
    with anyio.fail_after(60):
        await temporal.add_event(namespace, "setup", T0 - HOUR)  # schema and metadata
        await write_old_shape(store, namespace, ["Wendeline", "Casimir"])
        old = await store.query(namespace, "MATCH (ev:T_Event {uuid: 'old-1'}) RETURN ev {.*}")
        node = to_context("T_Event", dict(old.scalar()), 1.0)
        assert node.attributes["occurred_at_iso"] == iso_ms(T0 + HOUR)
        near = await temporal.events_near(namespace, ["Wendeline-id"], depth=1)
        assert {(e.before, e.after) for e in near.edges} == {("old-0", "old-1"), ("old-1", "old-2")}
        assert {e.entity for e in near.edges} == {"Wendeline-id", "Casimir-id"}
        # New events between and after the old ones: the chains come out right.
        await temporal.add_event(namespace, "mid shift", T0 + HOUR // 2, entities=["Wendeline-id"])
        await temporal.add_event(namespace, "late shift", T0 + 9 * HOUR, entities=["Casimir-id"])
        await assert_chains_right(store, namespace, lean=False)
        new = await store.query(
            namespace, "MATCH (ev:T_Event {description: 'mid shift'}) RETURN ev {.*}"
        )
        assert "occurred_at_iso" not in new.scalar()
        assert to_context("T_Event", dict(new.scalar()), 1.0).attributes[
            "occurred_at_iso"
        ] == iso_ms(T0 + HOUR // 2)
        await temporal.delete_event(namespace, "old-1")
        await assert_chains_right(store, namespace, lean=False)


async def test_batches_appended_or_interleaved_leave_exactly_the_consecutive_pairs(
    store: FalkorStore, entities: EntityGraph, namespace: str
) -> None:
    rng = random.Random(7)
    riders = [f"rider-{i}" for i in range(6)]
    with anyio.fail_after(240):
        # First batches in time order (each appends to every chain), then batches whose
        # events land between stored ones.
        for lo in range(0, 60, 20):
            items = [
                EventItem(f"stage {i} finished", T0 + i * HOUR, entities=rng.sample(riders, 2))
                for i in range(lo, lo + 20)
            ]
            await add_events(entities, namespace, items)
            await assert_chains_right(store, namespace)
        for _ in range(3):
            items = [
                EventItem(
                    f"sprint at {t} min",
                    T0 + t * 60_000,
                    entities=rng.sample(riders, rng.randint(1, 3)),
                )
                for t in rng.sample(range(0, 60 * 60), 15)
            ]
            await add_events(entities, namespace, items)
            await assert_chains_right(store, namespace)
