"""FalkorDB SIGKILLed in the middle of work: clear errors, recovery, nothing acknowledged lost.

A `remember` is a sequence of single-query writes (each node with its edges and
cross-links is one query) ended by the S_Memory node, so the memory node is only
ever present with all its parts. An import writes batch by batch (the entities of
a batch are one UNWIND query). The tests check both against a server killed with
SIGKILL (no shutdown, no AOF flush by redis itself) and started again on the same
append-only file.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from polyg_core.errors import StorageUnavailable
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.storage.store import FalkorStore
from polyg_core.transfer import RecordWriter
from polyg_core.transfer.records import Item, parse_record
from polyg_shared.retrieval import RememberResult

from .conftest import Outage

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

NS = "faults"
REF = "2026-01-10T12:00:00Z"


def text(i: int) -> str:
    return f"The deploy of billing-{i} failed because CONFIG_{i} was missing."


async def rows(store: FalkorStore, cypher: str, **params: Any) -> list[list[Any]]:
    return (await store.query(NS, cypher, params, read_only=True)).rows


async def memory_present(store: FalkorStore, content: str) -> bool:
    found = await rows(store, "MATCH (m:S_Memory {content: $c}) RETURN count(m)", c=content)
    return found[0][0] == 1


async def parts_present(store: FalkorStore, i: int) -> bool:
    """The event, the causal link with its entity cross-links, for the i-th text."""
    events = await rows(
        store,
        "MATCH (ev:T_Event)-[:X_INVOLVES]->(e:E_Entity) WHERE ev.description CONTAINS $d "
        "RETURN count(DISTINCT e)",
        d=f"billing-{i} failed",
    )
    links = await rows(
        store,
        "MATCH (c:C_Node)-[:C_CAUSES]->(x:C_Node) WHERE c.description CONTAINS $c "
        "AND x.description CONTAINS $x "
        "MATCH (c)-[:X_AFFECTS]->(e:E_Entity) RETURN count(DISTINCT e)",
        c=f"CONFIG_{i}",
        x=f"billing-{i}",
    )
    return events[0][0] >= 1 and links[0][0] >= 1


async def assert_no_duplicates(store: FalkorStore) -> None:
    for label, key in (("E_Entity", "name_key"), ("C_Node", "key"), ("S_Memory", "content_hash")):
        dup = await rows(
            store,
            f"MATCH (n:{label}) WITH n.{key} AS k, count(n) AS c WHERE c > 1 RETURN k, c",
        )
        assert dup == [], f"duplicate {label}: {dup}"
    orphans = await rows(store, "MATCH (c:C_Node) WHERE NOT (c)-[:C_CAUSES]-() RETURN count(c)")
    assert orphans == [[0]], "a causal node without its link (a half-written add_causal_link)"


async def test_remember_stream_survives_a_kill_and_loses_nothing_acknowledged(
    outage: Outage, fault_store: FalkorStore, embedder: Embedder
) -> None:
    mem = Memory(store=fault_store, embedder=embedder, namespace=NS)
    n = 12
    acked: dict[int, RememberResult] = {}
    failed: dict[int, str] = {}
    fourth = anyio.Event()
    restarted = anyio.Event()

    async def kill_mid_call() -> None:
        await fourth.wait()
        await anyio.sleep(0.15)  # inside the next remember's writes
        outage.kill()
        await outage.restart_after(1.5)
        restarted.set()

    async def stream() -> None:
        for i in range(n):
            try:
                acked[i] = await mem.remember(text(i), reference_time=REF)
            except StorageUnavailable as exc:
                failed[i] = str(exc)
                await anyio.sleep(0.3)  # a client backing off
            if len(acked) == 4:
                fourth.set()

    with anyio.fail_after(120):
        async with anyio.create_task_group() as tg:
            tg.start_soon(kill_mid_call)
            tg.start_soon(stream)
        await restarted.wait()

        assert failed, "the kill landed outside the stream; no call saw the outage"
        for message in failed.values():
            assert "unreachable" in message and "reconnects on the next call" in message
        assert len(acked) > 4, "the memory did not work again after FalkorDB came back"
        assert all(r.created for r in acked.values())

        # Every acknowledged write is there, with its parts, after the kill and restart.
        for i, result in acked.items():
            assert await memory_present(fault_store, text(i)), f"acknowledged memory {i} lost"
            assert await parts_present(fault_store, i), f"acknowledged memory {i} lost parts"
            for node in [*result.entities, *result.events]:
                found = await rows(fault_store, "MATCH (x {uuid: $u}) RETURN count(x)", u=node.uuid)
                assert found == [[1]], f"{node.label} {node.name!r} of memory {i} lost"
        # An unacknowledged memory is whole or absent: never a memory node without its parts.
        for i in failed:
            if await memory_present(fault_store, text(i)):
                assert await parts_present(fault_store, i)
        await assert_no_duplicates(fault_store)

        # Sending the failed ones again completes them, without duplicating anything.
        for i in failed:
            again = await mem.remember(text(i), reference_time=REF)
            assert again.memory_uuid
        for i in range(n):
            assert await memory_present(fault_store, text(i))
            assert await parts_present(fault_store, i)
        await assert_no_duplicates(fault_store)
        counts = await rows(fault_store, "MATCH (m:S_Memory) RETURN count(m)")
        assert counts == [[n]]
        causes = await rows(fault_store, "MATCH ()-[r:C_CAUSES]->() RETURN count(r)")
        assert causes == [[n]]


def import_items(batches: int, per_batch: int) -> Iterator[Item]:
    line = 0
    for b in range(batches):
        for j in range(per_batch):
            i = b * per_batch + j
            line += 1
            yield line, parse_record({"kind": "entity", "name": f"host-{i}", "type": "Host"}, line)
        for j in range(per_batch // 4):
            i = b * per_batch + j
            line += 1
            record = {
                "kind": "relation",
                "source": f"host-{i}",
                "target": f"host-{i + 1}",
                "type": "connects_to",
            }
            yield line, parse_record(record, line)


async def test_bulk_import_killed_midway_raises_and_a_rerun_completes_it_exactly_once(
    outage: Outage, fault_store: FalkorStore, embedder: Embedder
) -> None:
    batches, per_batch = 4, 40
    batch_size = per_batch + per_batch // 4
    writer = RecordWriter.build(fault_store, embedder, batch_size=batch_size)
    acked_records: list[int] = []
    second_batch = anyio.Event()

    def progress(seen: int) -> None:
        acked_records.append(seen)
        if seen >= 2 * batch_size:
            second_batch.set()

    async def kill_mid_batch() -> None:
        await second_batch.wait()
        await anyio.sleep(0.05)
        outage.kill()

    caught: list[StorageUnavailable] = []

    async def run_import() -> None:
        try:
            await writer.run(NS, lambda: import_items(batches, per_batch), on_progress=progress)
        except StorageUnavailable as exc:
            caught.append(exc)

    with anyio.fail_after(120):
        async with anyio.create_task_group() as tg:
            tg.start_soon(kill_mid_batch)
            tg.start_soon(run_import)
        # The import stops at the outage with the store's error, not a report of failed records.
        assert len(caught) == 1 and "unreachable" in str(caught[0])
        await anyio.to_thread.run_sync(outage.restart)

        done_batches = max(acked_records) // batch_size
        assert 2 <= done_batches < batches
        entities = (await rows(fault_store, "MATCH (e:E_Entity) RETURN count(e)"))[0][0]
        # Acknowledged batches are all there; the batch in flight is all or nothing.
        assert entities >= done_batches * per_batch
        assert entities % per_batch == 0, f"{entities} entities: a batch was half written"
        for b in range(done_batches):
            found = await rows(
                fault_store,
                "MATCH (a:E_Entity)-[r:E_RELATES]->(:E_Entity) WHERE a.name IN $names "
                "RETURN count(r)",
                names=[f"host-{b * per_batch + j}" for j in range(per_batch // 4)],
            )
            assert found == [[per_batch // 4]], f"relations of acknowledged batch {b} lost"

        report = await writer.run(NS, lambda: import_items(batches, per_batch))
        assert report.failed == 0, report.to_dict()["errors"][:3]
        assert report.kind("entity").merged >= done_batches * per_batch
    total = await rows(fault_store, "MATCH (e:E_Entity) RETURN count(e)")
    assert total == [[batches * per_batch]]
    rels = await rows(fault_store, "MATCH ()-[r:E_RELATES]->() RETURN count(r)")
    assert rels == [[batches * (per_batch // 4)]]
    await assert_no_duplicates(fault_store)
