"""recall stays read-only, and the memories it answered with are recorded as used
afterwards (decay restarts from then), batched per namespace by the server."""

from __future__ import annotations

import anyio
import pytest
from mcp import Client
from polyg_core.recall.decay import memory_meta
from polyg_core.storage.store import FalkorStore
from polyg_server.access import access_log, flush
from polyg_server.context import ServerContext
from polyg_server.testing import call

pytestmark = pytest.mark.anyio


async def _last_access(store: FalkorStore, ns: str, uuid: str) -> tuple[int, int]:
    meta = (await memory_meta(store, ns, [uuid]))[uuid]
    assert meta.created_ms is not None and meta.last_ms is not None
    return meta.created_ms, meta.last_ms


async def test_recall_over_mcp_records_the_memories_it_answered_with(
    memory_client: Client, store: FalkorStore, namespace: str
) -> None:
    await call(
        memory_client,
        "remember",
        {"content": "Odile Farrow repaired the bakery oven on Tuesday.", "wait": True},
    )
    answer = await call(memory_client, "recall", {"question": "Who repaired the bakery oven?"})
    uuids = [m["uuid"] for m in answer["memories"]]
    assert uuids
    # Written after the answer, in the background: wait (bounded) until it lands.
    with anyio.fail_after(30):
        while True:
            created, last = await _last_access(store, namespace, uuids[0])
            if last > created:
                break
            await anyio.sleep(0.05)
    tools = {t.name: t for t in (await memory_client.list_tools()).tools}
    annotations = tools["recall"].annotations
    assert annotations is not None and annotations.read_only_hint is True


async def test_noted_reads_are_written_once_per_namespace_in_one_flush(
    memory_ctx: ServerContext, store: FalkorStore, namespace: str
) -> None:
    memory = memory_ctx.require_memory()
    with anyio.fail_after(120):
        first = await memory.remember("Piet Lomax planted three pear trees.", graph=namespace)
        second = await memory.remember("Piet Lomax sold the old tractor.", graph=namespace)
        ids = [m for m in (first.memory_uuid, second.memory_uuid) if m]
        assert len(ids) == 2
        log = access_log(memory_ctx)
        log.note(namespace, [])  # an answer without memories leaves nothing to write
        assert log.pending == {}
        log.note(namespace, ids[:1])
        log.note(namespace, ids)
        assert set(log.pending[namespace]) == set(ids)
        assert await flush(memory_ctx) == 2
        assert log.pending == {}
        assert await flush(memory_ctx) == 0  # nothing left to write
        for uuid in ids:
            created, last = await _last_access(store, namespace, uuid)
            assert last > created
