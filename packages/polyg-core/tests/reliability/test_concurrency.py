"""Concurrent writers: one entity per normalised name, one causal node per description,
and namespaces that never see each other's writes."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

import anyio
import pytest
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.storage.store import FalkorStore
from polyg_core.text.normalize import normalize_name

pytestmark = pytest.mark.anyio

REF = "2026-01-10T12:00:00Z"
SPELLINGS = [
    "Ledger Service",
    "ledger service",
    "LEDGER SERVICE",
    "ledger-service",
    "ledger_service",
    "LedgerService",
    "  Ledger   Service ",
    "ledger.service",
    "Ledger-Service",
    "LEDGER_SERVICE",
]


async def run_all(n: int, call: Callable[[int], Coroutine[Any, Any, None]]) -> None:
    async with anyio.create_task_group() as tg:
        for i in range(n):
            tg.start_soon(call, i)


def test_the_spellings_share_one_key() -> None:
    assert len({normalize_name(s) for s in SPELLINGS}) == 1


async def test_twenty_concurrent_add_entity_calls_in_any_spelling_make_one_entity(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    mem = Memory(store=store, embedder=embedder, namespace=namespace)
    created: list[bool] = []
    uuids: set[str] = set()

    async def add(i: int) -> None:
        entity, was_created = await mem.entities.add(
            namespace, SPELLINGS[i % len(SPELLINGS)], "Service", {f"k{i}": i}
        )
        created.append(was_created)
        uuids.add(entity.uuid)

    with anyio.fail_after(60):
        await run_all(20, add)
    res = await store.query(
        namespace, "MATCH (e:E_Entity) RETURN e.uuid, e.properties", read_only=True
    )
    assert len(res.rows) == 1, res.rows
    assert uuids == {res.rows[0][0]}
    assert created.count(True) == 1


async def test_concurrent_remember_calls_naming_one_new_entity_make_one_entity(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    mem = Memory(store=store, embedder=embedder, namespace=namespace)
    spellings = ["ledger-service", "Ledger-Service", "LEDGER-SERVICE", "ledger-Service"]

    async def remember(i: int) -> None:
        name = spellings[i % len(spellings)]
        result = await mem.remember(
            f"The {name} restarted {i} times because node-{i} ran out of memory.",
            reference_time=REF,
        )
        assert result.created

    with anyio.fail_after(90):
        await run_all(20, remember)
    res = await store.query(
        namespace,
        "MATCH (e:E_Entity {name_key: $k}) RETURN e.uuid, e.entity_type",
        {"k": normalize_name("ledger service")},
        read_only=True,
    )
    assert len(res.rows) == 1, res.rows
    memories = await store.query(namespace, "MATCH (m:S_Memory) RETURN count(m)", read_only=True)
    assert memories.scalar() == 20


async def test_of_ten_identical_concurrent_remember_calls_exactly_one_says_created(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    mem = Memory(store=store, embedder=embedder, namespace=namespace)
    created: list[bool] = []
    uuids: set[str] = set()

    async def remember(i: int) -> None:
        result = await mem.remember(
            "The billing-worker crashed after the queue filled up.", reference_time=REF
        )
        created.append(result.created)
        uuids.add(result.memory_uuid)

    with anyio.fail_after(90):
        await run_all(10, remember)
    memories = await store.query(namespace, "MATCH (m:S_Memory) RETURN count(m)", read_only=True)
    assert memories.scalar() == 1
    assert len(uuids) == 1
    assert created.count(True) == 1


async def test_concurrent_causal_links_sharing_a_cause_make_one_cause_node(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    mem = Memory(store=store, embedder=embedder, namespace=namespace)
    causes = ["Disk full on db-1", "disk full on DB-1", "DISK FULL ON DB-1.", "disk  full on db-1"]

    async def link(i: int) -> None:
        await mem.causal.add_link(namespace, causes[i % len(causes)], f"job {i} crashed", 0.8)

    with anyio.fail_after(60):
        await run_all(20, link)
    res = await store.query(
        namespace,
        "MATCH (c:C_Node) OPTIONAL MATCH (c)-[r:C_CAUSES]->() "
        "RETURN c.key, count(r) ORDER BY count(r) DESC",
        read_only=True,
    )
    assert res.rows[0] == ["disk full on db 1", 20]
    assert len(res.rows) == 21  # the cause and twenty distinct effects
    assert {n for _, n in res.rows[1:]} == {0}


async def test_concurrent_writes_to_two_namespaces_never_leak(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    other = f"{namespace}_b"
    mem = Memory(store=store, embedder=embedder, namespace=namespace)
    spaces = {namespace: "alpha", other: "beta"}
    order = list(spaces)

    async def write(i: int) -> None:
        ns = order[i % 2]
        tag = spaces[ns]
        await mem.entities.add(ns, f"{tag}-entity-{i}", "Thing")
        await mem.temporal.add_event(
            ns, f"{tag} event {i}", "2026-01-07T14:00:00Z", entities=[f"{tag}-entity-{i}"]
        )
        await mem.causal.add_link(ns, f"{tag} cause {i}", f"{tag} effect {i}", 0.5)

    try:
        with anyio.fail_after(90):
            await run_all(20, write)
        for ns, tag in spaces.items():
            res = await store.query(
                ns,
                "MATCH (n) WHERE NOT n:P_Meta RETURN coalesce(n.name, n.description)",
                read_only=True,
            )
            texts = [str(t) for (t,) in res.rows]
            assert len(texts) == 10 * 4  # entity, event, cause, effect per write
            leaked = [t for t in texts if not t.startswith(tag)]
            assert leaked == [], f"written elsewhere, read back in {ns}: {leaked}"
    finally:
        await store.delete_graph(other)
