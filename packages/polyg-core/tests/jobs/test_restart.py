"""Jobs live in Redis with the append-only file on: they survive a restart of the server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from polyg_core.config import StorageSettings
from polyg_core.jobs import JobQueue
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.storage.embedded import EmbeddedFalkorDB
from polyg_core.storage.store import FalkorStore

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore:Call to deprecated setex:DeprecationWarning"),
]


@pytest.mark.slow
async def test_jobs_queued_before_a_restart_run_after_it(
    kit: Any, tmp_path: Path, embedder: Embedder
) -> None:
    settings = StorageSettings(data_dir=tmp_path, query_timeout_ms=30_000, embedded_linger_s=0)
    server = EmbeddedFalkorDB(tmp_path)
    await anyio.to_thread.run_sync(server.ensure_running)
    store = await FalkorStore(settings, embedded=server).connect()
    queue = await JobQueue.open(store, name="restart", policy=kit.fast)
    refs = [await queue.enqueue_remember(kit.note(i), graph="mem") for i in range(5)]
    await queue.close()
    await store.close()  # stops the server it owns (SIGTERM: the AOF is flushed)
    assert server.running_socket() is None

    store = await FalkorStore(settings).connect()  # starts a new server on the same data dir
    try:
        queue = await JobQueue.open(store, name="restart", policy=kit.fast)
        assert (await queue.stats()).queued == 5
        memory = Memory(store=store, embedder=embedder, namespace="mem")
        async with kit.make_worker(queue, memory).running():
            with anyio.fail_after(60):
                infos = await queue.wait([r.job_id for r in refs])
        assert {i.status for i in infos} == {"done"}
        contents = await kit.names(store, "mem", "S_Memory", "content")
        assert contents == sorted(kit.note(i) for i in range(5))
        await queue.close()
    finally:
        await store.close()
