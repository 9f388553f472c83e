"""Batched relation and event writes store what one-by-one writes store."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polyg_core.errors import InvalidInput, NodeNotFound
from polyg_core.graphs.bulk import (
    EventItem,
    RelationItem,
    add_events,
    add_relations,
    exact_entity_uuids,
)
from polyg_core.graphs.entity import EntityGraph
from polyg_core.graphs.temporal import TemporalGraph
from polyg_core.graphs.temporal_queries import CHAIN_EDGE_ROWS, CHAIN_EDGES
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.resolve import NameResolver
from polyg_core.storage.store import FalkorStore

pytestmark = pytest.mark.anyio

T0 = 1_760_000_000_000


@pytest.fixture
def entities(store: FalkorStore, embedder: Embedder) -> EntityGraph:
    return EntityGraph(store, embedder, NameResolver(store, embedder))


async def chains(store: FalkorStore, ns: str) -> dict[str, list[tuple[str, str]]]:
    """Every entity's T_BEFORE chain as (description, description) pairs."""
    res = await store.query(
        ns,
        f"{CHAIN_EDGE_ROWS}RETURN x.name, a.description, n.description",
    )
    out: dict[str, list[tuple[str, str]]] = {}
    for name, a, b in res.rows:
        out.setdefault(str(name), []).append((str(a), str(b)))
    return {k: sorted(v) for k, v in out.items()}


async def chain_times(store: FalkorStore, ns: str) -> dict[str, list[int]]:
    """Each entity's events in chain order (times), checking the chain is one ordered path."""
    res = await store.query(
        ns,
        "MATCH (ev:T_Event)-[:X_INVOLVES]->(x:E_Entity) RETURN x.uuid, x.name, ev.uuid, "
        "ev.occurred_at",
    )
    events: dict[str, dict[str, int]] = {}
    names: dict[str, str] = {}
    for xid, name, eid, t in res.rows:
        events.setdefault(str(xid), {})[str(eid)] = int(t)
        names[str(xid)] = str(name)
    res = await store.query(ns, CHAIN_EDGES)
    edges = await store.query(ns, "MATCH ()-[r:T_BEFORE]->() RETURN count(r)")
    pairs = await store.query(ns, "MATCH (a)-[:T_BEFORE]->(b) RETURN count(DISTINCT [a, b])")
    assert edges.scalar() == pairs.scalar(), "two T_BEFORE edges join one pair of events"
    assert edges.scalar() == len({(str(a), str(b)) for _, a, b in res.rows}), "a stale edge"
    nxt: dict[str, dict[str, str]] = {}
    for xid, a, b in res.rows:
        assert str(a) not in nxt.setdefault(str(xid), {}), "two T_BEFORE edges leave one event"
        nxt[str(xid)][str(a)] = str(b)
    out: dict[str, list[int]] = {}
    for xid, evs in events.items():
        links = nxt.get(xid, {})
        starts = set(evs) - set(links.values())
        assert len(starts) == 1, f"chain of {names[xid]} has {len(starts)} starts"
        order = [starts.pop()]
        while order[-1] in links:
            order.append(links[order[-1]])
        assert sorted(order) == sorted(evs), f"chain of {names[xid]} misses events"
        keys = [(evs[e], e) for e in order]
        assert keys == sorted(keys), f"chain of {names[xid]} is out of order"
        out[names[xid]] = [t for t, _ in keys]
    return out


async def involved(store: FalkorStore, ns: str) -> set[tuple[str, int, str]]:
    res = await store.query(
        ns,
        "MATCH (ev:T_Event)-[:X_INVOLVES]->(x:E_Entity) RETURN ev.description, ev.occurred_at, x.name",
    )
    return {(str(d), int(t), str(n)) for d, t, n in res.rows}


async def test_exact_names_resolve_in_one_query_and_ambiguous_ones_are_left_out(
    store: FalkorStore, namespace: str, entities: EntityGraph
) -> None:
    await entities.add_many(
        namespace,
        [("Alice", "person", None), ("Mercury", "planet", None), ("Mercury", "metal", None)],
    )
    got = await exact_entity_uuids(
        store,
        namespace,
        [("alice", None), ("Mercury", None), ("Mercury", "Metal"), ("nobody", None)],
    )
    alice = await entities.get(namespace, "Alice")
    metal = await entities.get(namespace, "Mercury", "metal")
    assert got == {("alice", None): alice.uuid, ("Mercury", "Metal"): metal.uuid}


async def test_relations_in_a_batch_are_written_once_and_report_what_was_new(
    store: FalkorStore, namespace: str, entities: EntityGraph
) -> None:
    await entities.add_many(namespace, [("api", "service", None), ("db", "service", None)])
    items = [
        RelationItem(("api", "service"), ("db", "service"), "calls", {"port": 5432}),
        RelationItem(("api", None), ("db", None), "CALLS"),  # same relation, other spelling
        RelationItem(("api", None), ("cache", None), "calls"),  # new entity for "cache"
        RelationItem(("api", None), ("API", None), "calls"),  # self-link
        RelationItem(("api", "database"), ("db", None), "calls"),  # no such typed entity
        RelationItem(("db", None), ("api", None), " "),  # blank relation name
    ]
    result = await add_relations(entities, namespace, items)
    assert result.outcomes[0] is True
    assert result.outcomes[1] is False
    assert result.outcomes[2] is True
    assert isinstance(result.outcomes[3], InvalidInput)
    assert "itself" in str(result.outcomes[3])
    assert isinstance(result.outcomes[4], NodeNotFound)
    assert isinstance(result.outcomes[5], InvalidInput)
    rels = await entities.relationships(namespace, "api", direction="out")
    assert sorted((r.target_name, r.relationship_type) for r in rels) == [
        ("cache", "calls"),
        ("db", "calls"),
    ]
    again = await add_relations(entities, namespace, items[:3])
    assert again.outcomes == [False, False, False]


async def test_events_in_a_batch_link_entities_and_keep_chains_in_time_order(
    store: FalkorStore, namespace: str, entities: EntityGraph
) -> None:
    items = [
        EventItem("C", T0 + 3000, entities=["svc"]),
        EventItem("A", T0 + 1000, entities=["svc", "db"]),
        EventItem("B", T0 + 2000, entities=["svc"]),
        EventItem("A", T0 + 1000, entities=["cache"]),  # same event, one more entity
        EventItem(" ", T0, entities=["svc"]),
        EventItem("bad time", "not a time", entities=["svc"]),
    ]
    result = await add_events(entities, namespace, items)
    assert result.outcomes[:4] == [True, True, True, False]
    assert isinstance(result.outcomes[4], InvalidInput)
    assert isinstance(result.outcomes[5], InvalidInput)
    assert await chains(store, namespace) == {"svc": [("A", "B"), ("B", "C")]}
    late = await add_events(
        entities,
        namespace,
        [
            EventItem("A2", T0 + 1500, entities=["svc"]),
            EventItem("D", T0 + 4000, entities=["svc", "db"]),
        ],
    )
    assert late.outcomes == [True, True]
    assert await chains(store, namespace) == {
        "svc": [("A", "A2"), ("A2", "B"), ("B", "C"), ("C", "D")],
        "db": [("A", "D")],
    }
    assert (await add_events(entities, namespace, items[:3])).outcomes == [False, False, False]


event_strategy = st.lists(
    st.tuples(
        st.sampled_from(["deploy", "rollback", "page", "restart", "alert"]),
        st.integers(0, 6),
        st.lists(st.sampled_from(["api", "db", "cache", "queue"]), min_size=1, max_size=3),
    ),
    min_size=1,
    max_size=14,
)


@settings(
    max_examples=12,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(events=event_strategy, split=st.integers(0, 14))
async def test_batches_store_the_same_events_and_chains_as_one_by_one_writes(
    store: FalkorStore,
    entities: EntityGraph,
    events: list[tuple[str, int, list[str]]],
    split: int,
) -> None:
    temporal = TemporalGraph(store, entities.embedder, entities.resolver)
    one, bulk = f"t_one_{uuid.uuid4().hex[:8]}", f"t_bulk_{uuid.uuid4().hex[:8]}"
    try:
        for desc, minute, names in events:
            await temporal.add_event(one, desc, T0 + minute * 60_000, entities=names)
        items = [EventItem(d, T0 + m * 60_000, entities=n) for d, m, n in events]
        await add_events(entities, bulk, items[:split])
        await add_events(entities, bulk, items[split:])
        assert await involved(store, bulk) == await involved(store, one)
        assert await chain_times(store, bulk) == await chain_times(store, one)
    finally:
        await store.delete_graph(one)
        await store.delete_graph(bulk)
