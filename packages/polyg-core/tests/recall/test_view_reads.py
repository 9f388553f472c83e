"""A node in an expansion view is the node a full read of it gives, with the view's
score, and is built once, when it joins the view (invented services and people, the real
embedded server); a view that is full sends no read that could not change it."""

from __future__ import annotations

from typing import Any

import pytest
from polyg_core.memory import Memory
from polyg_core.recall.context_nodes import to_context
from polyg_core.recall.view_context import Seeds, ViewCollector, ViewContext
from polyg_core.recall.views import causal_view, entity_view, temporal_view
from polyg_core.storage.cypher import clean, props
from polyg_core.storage.schema import CAUSAL, ENTITY, EVENT, FACT
from polyg_core.storage.store import FalkorStore
from polyg_shared.intents import CausalDirection, DepthHints, Intent
from polyg_shared.retrieval import ContextNode, ViewResult
from polyg_shared.timeutil import parse_timestamp

pytestmark = pytest.mark.anyio

NOW = parse_timestamp("2026-06-01T12:00:00Z")
SERVICE = "Tarn relay"
PEOPLE = ["Mira Voss", "Osei Brandt", "Lin Hoang"]


@pytest.fixture
async def crowded(memory: Memory) -> str:
    """A relay with a dozen events, people linked to it and to each other, facts about
    it, and a causal chain that affects it: more rows than a small view holds."""
    ns = memory.namespace
    await memory.entities.ensure(ns, [SERVICE, *PEOPLE])
    for person in PEOPLE:
        await memory.entities.link(ns, person, SERVICE, "maintains", valid_from="2026-01-01")
    await memory.entities.link(ns, PEOPLE[0], PEOPLE[1], "reports_to", valid_from="2026-01-01")
    for day in range(1, 13):
        who = PEOPLE[day % len(PEOPLE)]
        await memory.temporal.add_event(
            ns,
            f"{who} restarted the {SERVICE} after alarm {day}",
            f"2026-03-{day:02d}T09:00:00Z",
            entities=[SERVICE, who],
        )
    await memory.temporal.add_fact(ns, SERVICE, "runs_on", "Kelso rack", valid_from="2026-01-05")
    await memory.temporal.add_fact(ns, SERVICE, "owned_by", PEOPLE[2], valid_from="2026-02-01")
    await memory.causal.add_link(
        ns, "relay disk filled up", "relay dropped messages", 0.8, entities=[SERVICE]
    )
    await memory.causal.add_link(
        ns, "log rotation was off", "relay disk filled up", 0.7, entities=[SERVICE]
    )
    return ns


async def _uuid_of(store: FalkorStore, ns: str, name: str) -> str:
    res = await store.query(
        ns, f"MATCH (e:{ENTITY} {{name: $n}}) RETURN e.uuid", {"n": name}, read_only=True
    )
    return str(res.rows[0][0])


async def _stored(store: FalkorStore, ns: str, node: ContextNode) -> ContextNode:
    """The node as a full read of its properties gives it, with the view's score."""
    res = await store.query(
        ns,
        f"MATCH (n:{node.label} {{uuid: $u}}) RETURN {props('n')}",
        {"u": node.uuid},
        read_only=True,
    )
    assert len(res.rows) == 1, node
    return to_context(node.label, clean(res.rows[0][0]), node.score)


def _context(memory: Memory, seeds: Seeds, cap: int) -> ViewContext:
    intent = Intent(
        entities=[SERVICE],
        causal_direction=CausalDirection.BOTH,
        depth_hints=DepthHints(semantic=1, entity=2, temporal=2, causal=2),
    )
    return ViewContext(memory.store, memory.namespace, intent, seeds, max_nodes=cap, now=NOW)


async def _views(memory: Memory, seeds: Seeds, cap: int) -> list[ViewResult]:
    ctx = _context(memory, seeds, cap)
    return [await entity_view(ctx, 2), await temporal_view(ctx, 2), await causal_view(ctx, 2)]


@pytest.mark.parametrize("cap", [3, 8, 50])
async def test_every_node_of_a_view_is_its_full_read_with_the_views_score(
    memory: Memory, crowded: str, cap: int
) -> None:
    relay = await _uuid_of(memory.store, crowded, SERVICE)
    person = await _uuid_of(memory.store, crowded, PEOPLE[0])
    seeds = Seeds(entities={relay: 1.0, person: 0.7})
    views = await _views(memory, seeds, cap)
    labels: set[str] = set()
    for view in views:
        assert view.status == "ok", view
        assert 0 < len(view.nodes) <= cap, view.view
        held = {n.uuid for n in view.nodes}
        assert len(held) == len(view.nodes)
        for node in view.nodes:
            assert node == await _stored(memory.store, crowded, node)
            labels.add(node.label)
        for edge in view.edges:
            assert edge.source in held and edge.target in held
    assert {ENTITY, EVENT, CAUSAL} <= labels
    if cap == 50:
        assert FACT in labels


async def test_a_full_temporal_view_keeps_the_newest_events_and_reads_no_entities(
    memory: Memory, crowded: str
) -> None:
    relay = await _uuid_of(memory.store, crowded, SERVICE)
    ctx = _context(memory, Seeds(entities={relay: 1.0}), cap=4)
    sent = sum(ep.reads for ep in memory.store.routing_stats())
    view = await temporal_view(ctx, 1)
    reads = sum(ep.reads for ep in memory.store.routing_stats()) - sent
    newest = await memory.store.query(
        crowded,
        f"MATCH (e:{EVENT})-[:X_INVOLVES]->(:{ENTITY} {{uuid: $u}}) "
        "RETURN e.uuid ORDER BY e.occurred_at DESC LIMIT 4",
        {"u": relay},
        read_only=True,
    )
    assert [n.uuid for n in view.nodes] == [str(u) for (u,) in newest.rows]
    assert all(n.label == EVENT and n.score == pytest.approx(0.9) for n in view.nodes)
    assert view.edges == []
    # The seeds' events and their facts: the entities the full view's events involve
    # could not join it, so they are not read.
    assert reads == 2


def _raw(uuid: str) -> dict[str, Any]:
    return {"uuid": uuid, "name": f"node {uuid}", "embedding": None}


def test_the_collector_keeps_the_best_score_the_first_label_and_its_cap() -> None:
    col = ViewCollector("temporal", 2)
    assert col.add(EVENT, _raw("a"), 0.5)
    assert not col.add(EVENT, _raw("a"), 0.9)  # known: its score is raised
    assert not col.add(ENTITY, _raw("a"), 0.95)  # known under its first label
    assert not col.add(EVENT, _raw("a"), 0.1)
    assert col.add(FACT, _raw("b"), -0.2)  # scores are never negative
    assert col.full
    assert not col.add(EVENT, _raw("c"), 1.0)
    assert [(n.uuid, n.label, n.score) for n in col.nodes.values()] == [
        ("a", EVENT, 0.95),
        ("b", FACT, 0.0),
    ]
    assert col.nodes["a"] == to_context(EVENT, clean(_raw("a")), 0.95)
    # Full, holding no entity: a read of entities cannot change it; of facts it can.
    assert not col.can_take([ENTITY])
    assert col.can_take([FACT])
