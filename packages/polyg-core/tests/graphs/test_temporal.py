"""Temporal graph: events, timelines, bi-temporal facts (seed 000's unit-test table)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from itertools import pairwise

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polyg_core.errors import InvalidInput, NodeNotFound
from polyg_core.graphs.temporal import TemporalGraph
from polyg_core.graphs.temporal_queries import CHAIN_EDGE_ROWS
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.resolve import NameResolver
from polyg_core.storage.store import FalkorStore
from polyg_shared.nodes import Fact

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def cached(embedder: Embedder) -> Embedder:
    # The local embedder caches vectors itself; each text is embedded once per session.
    return embedder


@pytest.fixture
def graph(store: FalkorStore, cached: Embedder) -> TemporalGraph:
    return TemporalGraph(store, cached, NameResolver(store, cached))


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


async def chain_of(store: FalkorStore, ns: str, entity: str) -> list[tuple[str, str]]:
    res = await store.query(
        ns,
        f"{CHAIN_EDGE_ROWS}WITH x, a, n WHERE x.name = $n RETURN a.description, n.description",
        {"n": entity},
    )
    return sorted((str(a), str(b)) for a, b in res.rows)


# -- events -------------------------------------------------------------------------------------


async def test_add_event_stores_utc_time_and_links_entities(
    graph: TemporalGraph, namespace: str
) -> None:
    event = await graph.add_event(
        namespace,
        "Deployment v2.3.1 started",
        "2026-01-07T16:00:00+02:00",
        duration_ms=90_000,
        entities=["deploy-v2.3.1", "auth-service"],
    )
    assert event.occurred_at == utc("2026-01-07T14:00:00Z")
    assert event.duration_ms == 90_000
    assert event.entities == ["auth-service", "deploy-v2.3.1"]
    assert "embedding" not in event.model_dump()


async def test_adding_the_same_event_again_keeps_one_event(
    graph: TemporalGraph, namespace: str, store: FalkorStore
) -> None:
    first = await graph.add_event(namespace, "backup ran", "2026-01-07T01:00:00Z", entities=["db"])
    again = await graph.add_event(
        namespace, "backup ran", "2026-01-07T02:00:00+01:00", entities=["db"]
    )
    assert again.uuid == first.uuid
    count = await store.query(namespace, "MATCH (e:T_Event) RETURN count(e)")
    assert count.scalar() == 1


async def test_each_entity_keeps_its_own_time_ordered_chain_when_events_arrive_late(
    graph: TemporalGraph, namespace: str, store: FalkorStore
) -> None:
    await graph.add_event(namespace, "A", "2026-01-07T10:00:00Z", entities=["svc"])
    await graph.add_event(namespace, "D", "2026-01-07T13:00:00Z", entities=["svc", "db"])
    await graph.add_event(namespace, "B", "2026-01-07T11:00:00Z", entities=["svc"])
    await graph.add_event(namespace, "C", "2026-01-07T12:00:00Z", entities=["svc", "db"])
    await graph.add_event(namespace, "E", "2026-01-07T09:00:00Z", entities=["db"])

    assert await chain_of(store, namespace, "svc") == [("A", "B"), ("B", "C"), ("C", "D")]
    assert await chain_of(store, namespace, "db") == [("C", "D"), ("E", "C")]


async def test_deleting_an_event_joins_the_chain_around_it(
    graph: TemporalGraph, namespace: str, store: FalkorStore
) -> None:
    for hour, name in ((10, "A"), (11, "B"), (12, "C")):
        await graph.add_event(namespace, name, f"2026-01-07T{hour}:00:00Z", entities=["svc", "db"])

    deleted = await graph.delete_event(namespace, "B")
    assert deleted.description == "B"
    assert await chain_of(store, namespace, "svc") == [("A", "C")]
    assert await chain_of(store, namespace, "db") == [("A", "C")]
    await graph.delete_event(namespace, "A")
    assert await chain_of(store, namespace, "svc") == []
    assert [e.description for e in await graph.timeline(namespace)] == ["C"]
    with pytest.raises(NodeNotFound):
        await graph.delete_event(namespace, "A")


async def test_updating_an_event_moves_it_in_time_and_rebuilds_the_chains(
    graph: TemporalGraph, namespace: str, store: FalkorStore
) -> None:
    for hour, name in ((10, "A"), (11, "B"), (12, "C")):
        await graph.add_event(namespace, name, f"2026-01-07T{hour}:00:00Z", entities=["svc"])
    await graph.add_event(namespace, "X", "2026-01-07T09:00:00Z", entities=["db"])

    moved = await graph.update_event(namespace, "A", occurred_at="2026-01-07T13:00:00Z")
    assert moved.occurred_at.hour == 13
    assert await chain_of(store, namespace, "svc") == [("B", "C"), ("C", "A")]

    renamed = await graph.update_event(
        namespace, moved.uuid, description="A2", duration_ms=5, entities=["db"]
    )
    assert (renamed.description, renamed.duration_ms, renamed.entities) == ("A2", 5, ["db"])
    assert await chain_of(store, namespace, "svc") == [("B", "C")]
    assert await chain_of(store, namespace, "db") == [("X", "A2")]
    with pytest.raises(NodeNotFound):
        await graph.update_event(namespace, "A", description="again")
    with pytest.raises(InvalidInput):
        await graph.update_event(
            namespace, "B", description="C", occurred_at="2026-01-07T12:00:00Z"
        )


async def test_timeline_range_is_inclusive_and_ordered(
    graph: TemporalGraph, namespace: str
) -> None:
    for hour in (9, 10, 11, 12):
        await graph.add_event(namespace, f"tick {hour}", f"2026-01-07T{hour:02d}:00:00Z")

    inside = await graph.timeline(namespace, "2026-01-07T10:00:00Z", "2026-01-07T11:00:00Z")
    assert [e.description for e in inside] == ["tick 10", "tick 11"]
    newest = await graph.timeline(namespace, order="desc", limit=3)
    assert [e.description for e in newest] == ["tick 12", "tick 11", "tick 10"]


async def test_timeline_returns_events_older_than_a_year(
    graph: TemporalGraph, namespace: str
) -> None:
    await graph.add_event(namespace, "company founded", "1999-03-01")
    await graph.add_event(namespace, "first outage", "2019-06-15T08:00:00Z")
    await graph.add_event(namespace, "yesterday's deploy", datetime.now(UTC) - timedelta(days=1))

    everything = await graph.timeline(namespace)
    assert [e.description for e in everything] == [
        "company founded",
        "first outage",
        "yesterday's deploy",
    ]
    old = await graph.timeline(namespace, end="2020-01-01")
    assert [e.description for e in old] == ["company founded", "first outage"]


async def test_timeline_compares_times_across_timezone_offsets(
    graph: TemporalGraph, namespace: str
) -> None:
    # 23:30 in New York on the 7th is 04:30 UTC on the 8th.
    await graph.add_event(namespace, "late deploy", "2026-01-07T23:30:00-05:00")
    await graph.add_event(namespace, "tokyo standup", "2026-01-08T09:00:00+09:00")

    on_the_8th = await graph.timeline(namespace, "2026-01-08", "2026-01-08T23:59:59Z")
    assert [(e.description, e.occurred_at) for e in on_the_8th] == [
        ("tokyo standup", utc("2026-01-08T00:00:00Z")),
        ("late deploy", utc("2026-01-08T04:30:00Z")),
    ]
    in_berlin = await graph.timeline(
        namespace, "2026-01-08T01:00:00+01:00", "2026-01-08T01:00:00+01:00"
    )
    assert [e.description for e in in_berlin] == ["tokyo standup"]


async def test_timeline_filters_by_entity_under_any_spelling(
    graph: TemporalGraph, namespace: str
) -> None:
    await graph.add_event(
        namespace, "auth restarted", "2026-01-07T10:00:00Z", entities=["auth-service"]
    )
    await graph.add_event(namespace, "db vacuumed", "2026-01-07T11:00:00Z", entities=["postgres"])

    events = await graph.timeline(namespace, entity="Auth Service")
    assert [e.description for e in events] == ["auth restarted"]
    with pytest.raises(NodeNotFound, match="No entity named 'payments'"):
        await graph.timeline(namespace, entity="payments")


async def test_timeline_refuses_bad_arguments_with_a_fix(
    graph: TemporalGraph, namespace: str
) -> None:
    with pytest.raises(InvalidInput, match="swap them"):
        await graph.timeline(namespace, "2026-02-01", "2026-01-01")
    with pytest.raises(InvalidInput, match="start: 'last tuesday' is not an ISO 8601"):
        await graph.timeline(namespace, "last tuesday")
    with pytest.raises(InvalidInput, match="limit must be between 1 and 1000"):
        await graph.timeline(namespace, limit=0)
    with pytest.raises(InvalidInput, match="description is empty"):
        await graph.add_event(namespace, "   ", "2026-01-01")


async def test_events_near_follows_t_before_within_the_timeframe(
    graph: TemporalGraph, namespace: str
) -> None:
    await graph.add_event(
        namespace, "deploy", "2026-01-07T14:00:00Z", entities=["deployer", "auth"]
    )
    await graph.add_event(namespace, "crash", "2026-01-07T14:05:00Z", entities=["auth"])
    await graph.add_event(namespace, "page on-call", "2026-01-07T14:06:00Z", entities=["auth"])
    await graph.add_event(namespace, "next week", "2026-01-14T14:00:00Z", entities=["auth"])
    ids = await graph.store.query(namespace, "MATCH (x:E_Entity {name: 'deployer'}) RETURN x.uuid")
    seed = [str(ids.scalar())]

    direct = await graph.events_near(namespace, seed, depth=0)
    assert [e.description for e in direct.events] == ["deploy"]
    day = await graph.events_near(namespace, seed, "2026-01-07", "2026-01-07T23:59:59Z", depth=5)
    assert [e.description for e in day.events] == ["deploy", "crash", "page on-call"]
    assert sorted(day.hops.values()) == [0, 1, 2]
    assert len(day.edges) == 2
    capped = await graph.events_near(namespace, seed, depth=5, limit=2)
    assert len(capped.events) == 2
    assert capped.truncated


# -- facts --------------------------------------------------------------------------------------


async def test_new_fact_closes_the_current_one_for_the_same_subject_and_predicate(
    graph: TemporalGraph, namespace: str
) -> None:
    old = await graph.add_fact(namespace, "Alice", "works_on", "Payment Service", "2024-01-01")
    new = await graph.add_fact(namespace, "alice", "Works On", "Auth Service", "2025-06-01")

    assert new.status == "superseded"
    assert [f.uuid for f in new.invalidated] == [old.fact.uuid]
    closed = new.invalidated[0]
    assert closed.valid_to == utc("2025-06-01T00:00:00Z")
    assert closed.invalidated_by == new.fact.uuid
    current = await graph.facts(namespace, subject="Alice", predicate="works_on")
    assert [f.object for f in current] == ["Auth Service"]


async def test_invalidation_is_scoped_to_subject_and_predicate(
    graph: TemporalGraph, namespace: str
) -> None:
    await graph.add_fact(namespace, "Alice", "works_on", "Payments", "2024-01-01")
    await graph.add_fact(namespace, "Alice", "lives_in", "Berlin", "2024-01-01")
    await graph.add_fact(namespace, "Bob", "works_on", "Payments", "2024-01-01")
    write = await graph.add_fact(namespace, "Alice", "works_on", "Auth", "2025-01-01")

    assert [f.object for f in write.invalidated] == ["Payments"]
    current = await graph.facts(namespace)
    assert sorted((f.subject, f.predicate, f.object) for f in current) == [
        ("Alice", "lives_in", "Berlin"),
        ("Alice", "works_on", "Auth"),
        ("Bob", "works_on", "Payments"),
    ]


async def test_the_same_fact_again_is_not_recorded_twice(
    graph: TemporalGraph, namespace: str
) -> None:
    first = await graph.add_fact(namespace, "auth-service", "owner", "Platform team")
    again = await graph.add_fact(namespace, "Auth Service", "owner", "platform team")

    assert again.status == "existing"
    assert again.fact.uuid == first.fact.uuid
    assert again.invalidated == []
    assert len(await graph.facts(namespace, history=True)) == 1


async def test_an_older_fact_is_inserted_as_history_without_closing_the_newer(
    graph: TemporalGraph, namespace: str
) -> None:
    current = await graph.add_fact(namespace, "Alice", "works_on", "Auth Service", "2025-06-01")
    history = await graph.add_fact(
        namespace, "Alice", "works_on", "Payment Service", "2024-01-01", "2025-05-31"
    )
    open_ended_history = await graph.add_fact(
        namespace, "Alice", "works_on", "Search", "2023-01-01"
    )

    assert history.status == "created"
    assert history.invalidated == []
    # An open-ended fact that starts earlier ends where the next one begins.
    assert open_ended_history.fact.valid_to == utc("2024-01-01T00:00:00Z")
    now = await graph.facts(namespace, subject="Alice")
    assert [(f.uuid, f.valid_to) for f in now] == [(current.fact.uuid, None)]
    in_2024 = await graph.facts(namespace, subject="Alice", as_of="2024-07-01")
    assert [f.object for f in in_2024] == ["Payment Service"]
    # A date-only valid_to includes that day: Payment Service holds through 2025-05-31.
    last_day = await graph.facts(namespace, subject="Alice", as_of="2025-05-31T12:00:00Z")
    assert [f.object for f in last_day] == ["Payment Service"]
    assert history.fact.valid_to == utc("2025-06-01T00:00:00Z")


async def test_a_fact_inside_an_older_interval_cuts_it_and_stops_at_the_next(
    graph: TemporalGraph, namespace: str
) -> None:
    a = await graph.add_fact(namespace, "svc", "version", "1.0", "2020-01-01")
    b = await graph.add_fact(namespace, "svc", "version", "2.0", "2022-01-01")
    c = await graph.add_fact(namespace, "svc", "version", "1.5", "2021-01-01")

    assert c.status == "superseded"
    assert [f.uuid for f in c.invalidated] == [a.fact.uuid]
    assert c.invalidated[0].valid_to == utc("2021-01-01T00:00:00Z")
    assert c.fact.valid_to == utc("2022-01-01T00:00:00Z")
    history = await graph.facts(namespace, subject="svc", history=True)
    assert [
        (f.object, f.valid_from.year, f.valid_to.year if f.valid_to else None) for f in history
    ] == [
        ("1.0", 2020, 2021),
        ("1.5", 2021, 2022),
        ("2.0", 2022, None),
    ]
    assert history[2].uuid == b.fact.uuid


async def test_restating_a_closed_fact_with_a_longer_validity_extends_it(
    graph: TemporalGraph, namespace: str
) -> None:
    first = await graph.add_fact(namespace, "Bob", "role", "SRE", "2020-01-01", "2021-01-01")
    longer = await graph.add_fact(namespace, "Bob", "role", "SRE", "2020-06-01")

    assert longer.status == "extended"
    assert longer.fact.uuid == first.fact.uuid
    assert longer.fact.valid_to is None


async def test_point_in_time_includes_valid_from_and_excludes_valid_to(
    graph: TemporalGraph, namespace: str
) -> None:
    await graph.add_fact(namespace, "db", "primary", "db-1", "2026-01-01T00:00:00Z")
    await graph.add_fact(namespace, "db", "primary", "db-2", "2026-01-01T12:00:00+02:00")

    def objects(facts: list[Fact]) -> list[str]:
        return [f.object for f in facts]

    assert objects(await graph.facts(namespace, as_of="2026-01-01T00:00:00Z")) == ["db-1"]
    assert objects(await graph.facts(namespace, as_of="2026-01-01T09:59:59.999Z")) == ["db-1"]
    assert objects(await graph.facts(namespace, as_of="2026-01-01T10:00:00Z")) == ["db-2"]
    assert await graph.facts(namespace, as_of="2025-12-31T23:59:59Z") == []


async def test_invalidate_fact_ends_it_and_keeps_it_in_history(
    graph: TemporalGraph, namespace: str
) -> None:
    write = await graph.add_fact(namespace, "Carol", "on_call", "yes", "2026-01-01")
    ended = await graph.invalidate_fact(namespace, write.fact.uuid, at="2026-01-05T00:00:00Z")

    assert ended.valid_to == utc("2026-01-05T00:00:00Z")
    assert await graph.facts(namespace, subject="Carol") == []
    assert [f.uuid for f in await graph.facts(namespace, subject="Carol", history=True)] == [
        write.fact.uuid
    ]
    again = await graph.invalidate_fact(namespace, write.fact.uuid, at="2026-01-09")
    assert again.valid_to == ended.valid_to
    with pytest.raises(InvalidInput, match="only valid from 2026-01-01"):
        await graph.invalidate_fact(namespace, write.fact.uuid, at="2025-01-01")
    with pytest.raises(NodeNotFound):
        await graph.invalidate_fact(namespace, uuid.uuid4().hex)


async def test_facts_are_found_through_their_entities(graph: TemporalGraph, namespace: str) -> None:
    await graph.add_fact(namespace, "auth-service", "status", "down", entities=["AUTH_SECRET"])
    await graph.add_fact(namespace, "billing", "status", "up")
    ids = await graph.store.query(namespace, "MATCH (x:E_Entity) RETURN x.name, x.uuid")
    entity = {str(n): str(u) for n, u in ids.rows}

    by_name = await graph.facts(namespace, entity="AUTH SECRET")
    assert [f.subject for f in by_name] == ["auth-service"]
    for_seeds = await graph.facts_for(namespace, [entity["auth-service"], entity["billing"]])
    assert sorted(f.subject for f in for_seeds) == ["auth-service", "billing"]


async def test_add_fact_refuses_bad_intervals_with_a_fix(
    graph: TemporalGraph, namespace: str
) -> None:
    with pytest.raises(InvalidInput, match="must be after valid_from"):
        await graph.add_fact(namespace, "x", "y", "z", "2026-01-02", "2026-01-01")
    with pytest.raises(InvalidInput, match="valid_from: 'soon'"):
        await graph.add_fact(namespace, "x", "y", "z", "soon")
    with pytest.raises(InvalidInput, match="one of as_of"):
        await graph.facts(namespace, as_of="2026-01-01", history=True)


# -- properties of the validity intervals ------------------------------------------------------

_DAY = datetime(2026, 1, 1, tzinfo=UTC)
_ops = st.lists(
    st.tuples(
        st.sampled_from(["A", "B", "C"]),
        st.integers(0, 20),
        st.one_of(st.none(), st.integers(1, 10)),
    ),
    min_size=1,
    max_size=7,
)


@pytest.fixture
async def scratch(store: FalkorStore) -> AsyncIterator[list[str]]:
    made: list[str] = []
    yield made
    for ns in made:
        await store.delete_graph(ns)


@settings(
    max_examples=20,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=_ops)
async def test_validity_intervals_never_overlap(
    graph: TemporalGraph, scratch: list[str], ops: list[tuple[str, int, int | None]]
) -> None:
    ns = f"t_prop_{uuid.uuid4().hex[:10]}"
    scratch.append(ns)
    for obj, start, length in ops:
        valid_to = _DAY + timedelta(days=start + length) if length else None
        await graph.add_fact(ns, "svc", "state", obj, _DAY + timedelta(days=start), valid_to)

    history = await graph.facts(ns, history=True)
    assert sum(1 for f in history if f.valid_to is None) <= 1
    spans = sorted(
        (f.valid_from, f.valid_to or datetime.max.replace(tzinfo=UTC))
        for f in history
        if f.valid_to is None or f.valid_to > f.valid_from
    )
    for (_, end), (start, _) in pairwise(spans):
        assert end <= start
    for day in range(0, 32, 3):
        at = _DAY + timedelta(days=day, hours=12)
        holding = await graph.facts(ns, subject="svc", predicate="state", as_of=at)
        assert len(holding) <= 1
        expected = [s for s in spans if s[0] <= at < s[1]]
        assert len(holding) == len(expected)


async def test_a_multi_valued_predicate_keeps_every_value_current(
    graph: TemporalGraph, namespace: str
) -> None:
    for year, skill in ((2023, "Python"), (2024, "Go"), (2025, "Rust")):
        await graph.add_fact(namespace, "Ines Borrow", "skills", skill, f"{year}-01-01")
    current = await graph.facts(namespace, subject="Ines Borrow", predicate="skills")
    assert sorted(f.object for f in current) == ["Go", "Python", "Rust"]
    assert {f.cardinality for f in current} == {"multi"}


async def test_a_single_valued_predicate_keeps_one_current_value_and_its_history(
    graph: TemporalGraph, namespace: str
) -> None:
    await graph.add_fact(namespace, "Ines Borrow", "team", "Atlas", "2024-01-01")
    await graph.add_fact(namespace, "Ines Borrow", "team", "Beacon", "2025-03-01")
    current = await graph.facts(namespace, subject="Ines Borrow", predicate="team")
    history = await graph.fact_history(namespace, subject="Ines Borrow", predicate="team")
    assert [f.object for f in current] == ["Beacon"]
    assert [f.object for f in history] == ["Atlas", "Beacon"]
    assert history[0].valid_to == utc("2025-03-01T00:00:00Z")


async def test_the_caller_says_a_predicate_is_multi_valued(
    graph: TemporalGraph, namespace: str
) -> None:
    await graph.add_fact(namespace, "Ines Borrow", "mentors", "Tomas Reye", "2024-01-01")
    await graph.add_fact(
        namespace, "Ines Borrow", "mentors", "Lena Oduya", "2025-01-01", cardinality="multi"
    )
    unknown = await graph.facts(namespace, subject="Ines Borrow", predicate="mentors")
    assert sorted(f.object for f in unknown) == ["Lena Oduya", "Tomas Reye"]
    await graph.add_fact(namespace, "Ines Borrow", "desk", "4B", "2024-01-01")
    await graph.add_fact(namespace, "Ines Borrow", "desk", "5C", "2025-01-01")
    desks = await graph.facts(namespace, subject="Ines Borrow", predicate="desk")
    assert [f.object for f in desks] == ["5C"]
    with pytest.raises(InvalidInput, match="cardinality must be"):
        await graph.add_fact(namespace, "Ines Borrow", "desk", "6D", cardinality="many")
