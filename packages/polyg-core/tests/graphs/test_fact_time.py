"""Point-in-time facts: as of a time, over a period, a fact's history, whole-day dates."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from polyg_core.errors import InvalidInput, NodeNotFound
from polyg_core.graphs.temporal import TemporalGraph

pytestmark = pytest.mark.anyio


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


async def alice_history(temporal: TemporalGraph, ns: str) -> None:
    await temporal.add_fact(
        ns, "Alice", "works_on", "Payment Service", "2024-01-10", source="HR sheet"
    )
    await temporal.add_fact(
        ns, "Alice", "works_on", "Auth Service", "2025-06-01", source="Bob (standup)"
    )


async def test_facts_as_of_a_date_returns_the_fact_valid_then(
    temporal: TemporalGraph, namespace: str
) -> None:
    await alice_history(temporal, namespace)
    march = await temporal.facts(namespace, subject="Alice", as_of="2025-03-15")
    assert [f.object for f in march] == ["Payment Service"]
    now = await temporal.facts(namespace, subject="Alice")
    assert [f.object for f in now] == ["Auth Service"]
    # The day the new fact starts counts as a whole day: by its end Auth Service holds.
    switch_day = await temporal.facts(namespace, subject="Alice", as_of="2025-06-01")
    assert [f.object for f in switch_day] == ["Auth Service"]


async def test_facts_valid_during_a_period_include_every_overlapping_version(
    temporal: TemporalGraph, namespace: str
) -> None:
    await alice_history(temporal, namespace)
    march = await temporal.facts(namespace, subject="Alice", start="2025-03-01", end="2025-03-31")
    assert [f.object for f in march] == ["Payment Service"]
    spring = await temporal.facts(namespace, subject="Alice", start="2025-05-01", end="2025-06-30")
    assert [f.object for f in spring] == ["Payment Service", "Auth Service"]
    # The last day of a period is in it: a fact starting on 2025-06-01 is valid "until 2025-06-01".
    until = await temporal.facts(namespace, subject="Alice", start="2025-05-30", end="2025-06-01")
    assert [f.object for f in until] == ["Payment Service", "Auth Service"]
    with pytest.raises(InvalidInput, match="not several"):
        await temporal.facts(namespace, as_of="2025-03-01", start="2025-01-01")


async def test_fact_history_says_who_when_recorded_and_what_replaced_it(
    temporal: TemporalGraph, namespace: str
) -> None:
    await alice_history(temporal, namespace)
    current = (await temporal.facts(namespace, subject="Alice"))[0]
    versions = await temporal.fact_history(namespace, current.uuid)
    assert [(f.object, f.source) for f in versions] == [
        ("Payment Service", "HR sheet"),
        ("Auth Service", "Bob (standup)"),
    ]
    old, new = versions
    assert old.valid_from == utc("2024-01-10T00:00:00Z")
    assert old.valid_to == utc("2025-06-01T00:00:00Z")
    assert old.invalidated_by == new.uuid
    assert old.invalidated_at is not None and old.invalidated_at >= old.recorded_at
    assert new.valid_to is None and new.invalidated_at is None and new.invalidated_by is None
    by_name = await temporal.fact_history(namespace, subject="alice", predicate="Works On")
    assert [f.uuid for f in by_name] == [f.uuid for f in versions]
    with pytest.raises(NodeNotFound):
        await temporal.fact_history(namespace, "no-such-fact")
    with pytest.raises(InvalidInput, match="subject and predicate"):
        await temporal.fact_history(namespace, subject="Alice")


async def test_invalidated_fact_returns_when_it_was_ended(
    temporal: TemporalGraph, namespace: str
) -> None:
    written = await temporal.add_fact(namespace, "pool", "size", "20", "2026-01-01")
    ended = await temporal.invalidate_fact(namespace, written.fact.uuid, "2026-01-05T10:00:00Z")
    assert ended.valid_to == utc("2026-01-05T10:00:00Z")
    assert ended.invalidated_at is not None
    listed = await temporal.facts(namespace, subject="pool", history=True)
    assert listed[0].invalidated_at == ended.invalidated_at


async def test_a_date_only_valid_to_includes_that_whole_day(
    temporal: TemporalGraph, namespace: str
) -> None:
    written = await temporal.add_fact(
        namespace, "Alice", "on_call_for", "ledger-service", "2026-01-05", "2026-01-07"
    )
    assert written.fact.valid_to == utc("2026-01-08T00:00:00Z")
    late_on_the_7th = await temporal.facts(namespace, subject="Alice", as_of="2026-01-07T23:30:00Z")
    assert [f.object for f in late_on_the_7th] == ["ledger-service"]
    assert await temporal.facts(namespace, subject="Alice", as_of="2026-01-08T00:00:00Z") == []
    # A date object reads the same as the ISO date; a timestamp stays exact.
    other = await temporal.add_fact(
        namespace, "Bob", "on_call_for", "auth-service", date(2026, 1, 5), date(2026, 1, 6)
    )
    assert other.fact.valid_to == utc("2026-01-07T00:00:00Z")
    exact = await temporal.add_fact(
        namespace, "Carol", "on_call_for", "auth-service", "2026-01-05", "2026-01-06T00:00:00Z"
    )
    assert exact.fact.valid_to == utc("2026-01-06T00:00:00Z")


async def test_a_date_only_timeline_end_includes_that_day(
    temporal: TemporalGraph, namespace: str
) -> None:
    await temporal.add_event(
        namespace, "Auth service crashed on startup", "2026-01-07T14:05:00Z", entities=["auth"]
    )
    await temporal.add_event(namespace, "Auth service recovered", "2026-01-08T09:00:00Z")
    events = await temporal.timeline(namespace, start="2026-01-07", end="2026-01-07")
    assert [e.description for e in events] == ["Auth service crashed on startup"]
