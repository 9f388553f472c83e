"""Jobs on the LLM path (scripted loopback model): 429s, failing content, killed workers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from polyg_core.jobs import JobQueue
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.storage.embedded import EmbeddedFalkorDB
from polyg_core.storage.store import FalkorStore
from polyg_core.testing.llm_server import Reply, ScriptedLLMServer

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore:Call to deprecated setex:DeprecationWarning"),
]


@pytest.fixture
async def llm_server(kit: Any) -> AsyncIterator[ScriptedLLMServer]:
    def respond(messages: list[dict[str, Any]]) -> str | Reply:
        text = kit.note_of(messages)
        if "POISON" in text:
            return Reply.error(500, message="the model crashed on this note")
        return kit.extraction_for(text)

    async with ScriptedLLMServer(responder=respond) as server:
        yield server


@pytest.fixture
def llm_memory(
    store: FalkorStore, embedder: Embedder, namespace: str, llm_server: ScriptedLLMServer
) -> Memory:
    """The test's memory, its model the scripted server."""
    llm = llm_server.provider(timeout_s=10, max_retries=2)
    return Memory(store=store, embedder=embedder, llm=llm, namespace=namespace)


@pytest.mark.slow
async def test_eighty_queued_jobs_through_the_model_finish_with_the_right_graph(
    kit: Any,
    store: FalkorStore,
    llm_memory: Memory,
    namespace: str,
    queue: JobQueue,
    llm_server: ScriptedLLMServer,
) -> None:
    n = 80
    memory = llm_memory
    refs = [await queue.enqueue_remember(kit.note(i), graph=namespace) for i in range(n)]
    assert len({r.job_id for r in refs}) == n
    with anyio.fail_after(20 + n * 0.5):
        async with kit.make_worker(queue, memory).running():
            infos = await queue.wait([r.job_id for r in refs])
    assert {i.status for i in infos} == {"done"}
    assert all(i.result and not i.result["degraded"] for i in infos)
    assert all(i.usage and i.usage.llm_calls == 1 for i in infos)
    assert (await queue.stats(namespace)).done == n
    assert len(llm_server.chat_requests) == n

    entities = await kit.names(store, namespace, "E_Entity", "name")
    expected = {f"{p}{i}" for i in range(n) for p in ("svc", "d", "K")}
    assert sorted(entities) == sorted(expected)  # each once, nothing else
    events = await kit.names(store, namespace, "T_Event", "description")
    assert sorted(events) == sorted(f"deploy d{i} of svc{i} failed" for i in range(n))
    causes = await kit.names(store, namespace, "C_Node", "description")
    for i in range(n):
        assert causes.count(f"config key K{i} missing") == 1
        assert causes.count(f"deploy d{i} failed") == 1
    memories = await kit.names(store, namespace, "S_Memory", "content")
    assert memories == sorted(kit.note(i) for i in range(n))


async def test_jobs_slow_down_while_the_model_answers_429_then_all_finish(
    kit: Any,
    store: FalkorStore,
    llm_memory: Memory,
    namespace: str,
    queue: JobQueue,
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.push(*[Reply.error(429, retry_after=0.4) for _ in range(4)])
    memory = llm_memory
    refs = [await queue.enqueue_remember(kit.note(i), graph=namespace) for i in range(8)]
    started = time.monotonic()
    async with kit.make_worker(queue, memory).running():
        with anyio.fail_after(60):
            infos = await queue.wait([r.job_id for r in refs])
    elapsed = time.monotonic() - started
    assert {i.status for i in infos} == {"done"}
    # Extracted by the model, not by the rules: waiting out 429s never degrades a job.
    assert all(i.result and not i.result["degraded"] for i in infos)
    assert all(i.usage and i.usage.llm_calls == 1 for i in infos)
    assert len(llm_server.chat_requests) == 8 + 4
    assert elapsed >= 0.4 * 2  # at least two pauses back to back
    entities = await kit.names(store, namespace, "E_Entity", "name")
    assert {f"svc{i}" for i in range(8)} <= set(entities)


async def test_content_that_always_fails_ends_failed_with_the_error_and_is_counted(
    kit: Any,
    store: FalkorStore,
    llm_memory: Memory,
    namespace: str,
    queue: JobQueue,
    llm_server: ScriptedLLMServer,
) -> None:
    memory = llm_memory
    good = await queue.enqueue_remember(kit.note(1), graph=namespace)
    bad = await queue.enqueue_remember("POISON " + kit.note(2), graph=namespace)
    async with kit.make_worker(queue, memory).running():
        with anyio.fail_after(60):
            ok, failed = await queue.wait([good.job_id, bad.job_id])
    assert ok.status == "done"
    assert failed.status == "failed"
    assert failed.attempts == kit.fast.max_attempts
    assert failed.error and "ProviderUnavailable" in failed.error
    assert "the model crashed on this note" in failed.error
    assert len(failed.errors) == kit.fast.max_attempts
    stats = await queue.stats(namespace)
    assert (stats.done, stats.failed) == (1, 1)
    # Never reported as done, and nothing of it was written.
    contents = await kit.names(store, namespace, "S_Memory", "content")
    assert contents == [kit.note(1)]


@pytest.mark.slow
async def test_a_worker_killed_mid_job_loses_nothing_and_duplicates_nothing(
    kit: Any,
    store: FalkorStore,
    llm_memory: Memory,
    namespace: str,
    queue: JobQueue,
    llm_server: ScriptedLLMServer,
    falkordb_server: EmbeddedFalkorDB,
) -> None:
    llm_server.push(Reply.slow(30.0, kit.extraction_for(kit.note(5))))
    ref = await queue.enqueue_remember(kit.note(5), graph=namespace)
    env = {
        **os.environ,
        "POLYG_DATA_DIR": str(falkordb_server.data_dir),
        "LLM_MODEL": "openai/test-model",
        "LLM_BASE_URL": llm_server.api_base,
        "OPENAI_API_KEY": "test",
        "POLYG_LOG_LEVEL": "WARNING",
    }
    env.pop("FALKORDB_HOST", None)
    env.pop("FALKORDB_URL", None)
    proc = await anyio.open_process(
        [sys.executable, "-m", "polyg_core.jobs", "--queue", queue.queue.name, "--sweep", "1"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        with anyio.fail_after(60):
            while not llm_server.chat_requests:
                assert proc.returncode is None, "the worker process exited early"
                await anyio.sleep(0.1)
        running = await queue.get(ref.job_id)
        assert running.status == "running" and running.attempts == 1
        proc.send_signal(signal.SIGKILL)
        with anyio.fail_after(10):
            await proc.wait()
    finally:
        if proc.returncode is None:
            proc.kill()
            with anyio.fail_after(10):
                await proc.wait()

    memory = llm_memory
    async with kit.make_worker(queue, memory).running():
        with anyio.fail_after(60):
            (info,) = await queue.wait([ref.job_id])
    assert info.status == "done"
    assert info.attempts == 2
    assert await kit.names(store, namespace, "S_Memory", "content") == [kit.note(5)]
    entities = await kit.names(store, namespace, "E_Entity", "name")
    assert sorted(entities) == sorted(set(entities))
    assert await kit.names(store, namespace, "C_Node", "description") == sorted(
        ["config key K5 missing", "deploy d5 failed"]
    )
