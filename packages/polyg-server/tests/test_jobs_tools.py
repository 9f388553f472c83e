"""Queued remember over MCP: wait, get_job, list/cancel/retry, failures in statistics, restarts."""

from __future__ import annotations

import json
from typing import Any, Protocol

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from polyg_core.config import Settings
from polyg_core.jobs import QUEUE_NAME, JobPolicy
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.providers.llm.base import LLM
from polyg_core.storage.store import FalkorStore
from polyg_core.testing.llm_server import Reply, ScriptedLLMServer
from polyg_server.app import create_server
from polyg_server.context import JobOptions, ServerContext
from polyg_server.http import create_http_app
from polyg_server.testing import data_of, serving, text_of

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore:Call to deprecated setex:DeprecationWarning"),
    # A model call cut off by the shutdown leaves litellm's coroutine unawaited.
    pytest.mark.filterwarnings("ignore:coroutine .* was never awaited:RuntimeWarning"),
]

FAST = JobPolicy(
    max_attempts=3, retry_delay_s=0.1, max_retry_delay_s=0.5, timeout_s=60, heartbeat_s=2
)
NOTE = "On 2026-01-10 the billing-service was rolled back because invoices failed."


class MakeCtx(Protocol):
    def __call__(
        self,
        *,
        workers: int,
        llm: LLM | None = None,
        grace_s: int = 1,
        settings: Settings | None = None,
    ) -> ServerContext: ...


@pytest.fixture
def jobs_ctx(
    store: FalkorStore, server_settings: Settings, cached_embedder: Embedder, queue_name: str
) -> MakeCtx:
    """Server contexts on the test's store and queue, with `workers` job workers."""

    def make(
        *,
        workers: int,
        llm: LLM | None = None,
        grace_s: int = 1,
        settings: Settings | None = None,
    ) -> ServerContext:
        return ServerContext(
            store=store,
            settings=settings or server_settings,
            embedder=cached_embedder,
            llm=llm,
            jobs=JobOptions(
                workers=workers,
                queue_name=queue_name,
                policy=FAST,
                sweep_s=1,
                shutdown_grace_s=grace_s,
                dequeue_timeout_s=1.0,
            ),
        )

    return make


async def follow(client: Client, job_id: str, until: set[str], timeout_s: float = 30) -> Any:
    """Call get_job until the job reaches one of `until` (bounded)."""
    with anyio.fail_after(timeout_s):
        while True:
            info = data_of(await client.call_tool("get_job", {"job_id": job_id}))
            if info["status"] in until:
                return info
            await anyio.sleep(0.1)


async def test_remember_without_waiting_answers_a_job_that_get_job_follows_to_done(
    store: FalkorStore,
    jobs_ctx: MakeCtx,
    namespace: str,
) -> None:
    ctx = jobs_ctx(workers=2)
    async with Client(create_server(ctx)) as client:
        with anyio.fail_after(20):
            queued = data_of(await client.call_tool("remember", {"content": NOTE, "wait": False}))
        assert queued["queued"] is True
        assert queued["status"] in ("queued", "running")
        assert queued["graph"] == namespace
        assert "get_job" in queued["next_step"]
        assert "memory_uuid" not in queued
        info = await follow(client, queued["job_id"], {"done", "failed"})
        assert info["status"] == "done", info
        assert info["result"]["created"] is True
        names = [e["name"] for e in info["result"]["entities"]]
        assert names
        with anyio.fail_after(20):
            entity = await client.call_tool("get_entity", {"entity": names[0]})
            again = data_of(await client.call_tool("remember", {"content": NOTE, "wait": True}))
        assert data_of(entity)["entity"]["name"] == names[0]
    # The queued text was written once; remembering it again synchronously adds nothing.
    assert again["created"] is False
    assert again["memory_uuid"] == info["result"]["memory_uuid"]
    res = await store.query(namespace, "MATCH (m:S_Memory) RETURN m.content", read_only=True)
    assert [row[0] for row in res.rows] == [NOTE]


async def test_long_text_is_queued_by_default_and_short_text_or_wait_true_is_written_at_once(
    jobs_ctx: MakeCtx,
    server_settings: Settings,
) -> None:
    # No worker: queued jobs stay queued, so nothing long is extracted here.
    ctx = jobs_ctx(workers=0)
    long_text = " ".join(f"Service s{i} calls service s{i + 1}." for i in range(120))
    assert len(long_text) > server_settings.remember_wait_max_chars == 2000
    async with Client(create_server(ctx)) as client:
        with anyio.fail_after(30):
            tools = {t.name: t for t in (await client.list_tools()).tools}
            long_ref = data_of(await client.call_tool("remember", {"content": long_text}))
            short = data_of(await client.call_tool("remember", {"content": NOTE}))
            forced = data_of(
                await client.call_tool(
                    "remember", {"content": "The cache was flushed twice.", "wait": True}
                )
            )
    schema = tools["remember"].output_schema
    assert schema is not None and schema["type"] == "object"
    assert {"wait", "content"} <= set(tools["remember"].input_schema["properties"])
    assert long_ref["queued"] is True and long_ref["status"] == "queued"
    assert "POLYG_JOB_WORKERS=0" in long_ref["next_step"]
    # The synchronous answer is the plain RememberResult, as before.
    assert short["created"] is True and "queued" not in short and "job_id" not in short
    assert {"memory_uuid", "entities", "events", "usage"} <= set(short)
    assert forced["created"] is True and "job_id" not in forced


async def test_a_smaller_configured_threshold_queues_shorter_text(
    jobs_ctx: MakeCtx,
    server_settings: Settings,
) -> None:
    settings = server_settings.model_copy(update={"remember_wait_max_chars": 20})
    ctx = jobs_ctx(workers=0, settings=settings)
    async with Client(create_server(ctx)) as client:
        with anyio.fail_after(20):
            ref = data_of(await client.call_tool("remember", {"content": NOTE}))
    assert ref["queued"] is True


async def test_list_cancel_and_retry_jobs_over_mcp(
    jobs_ctx: MakeCtx,
    namespace: str,
) -> None:
    ctx = jobs_ctx(workers=0)
    async with Client(create_server(ctx)) as client:
        with anyio.fail_after(30):
            first = data_of(
                await client.call_tool("remember", {"content": NOTE, "wait": False, "who": "ops"})
            )
            second = data_of(
                await client.call_tool(
                    "remember", {"content": "The cache was flushed twice.", "wait": False}
                )
            )
            dup = data_of(await client.call_tool("remember", {"content": NOTE, "wait": False}))
            listed = data_of(await client.call_tool("list_jobs", {"graph": namespace}))
            cancelled = data_of(await client.call_tool("cancel_job", {"job_id": first["job_id"]}))
            again = await client.call_tool("cancel_job", {"job_id": first["job_id"]})
            only_cancelled = data_of(
                await client.call_tool("list_jobs", {"graph": namespace, "status": ["cancelled"]})
            )
            retried = data_of(await client.call_tool("retry_job", {"job_id": first["job_id"]}))
            pending_retry = await client.call_tool("retry_job", {"job_id": second["job_id"]})
            missing = await client.call_tool("get_job", {"job_id": "remember:nope:0"})
    assert dup["job_id"] == first["job_id"] and dup["deduplicated"] is True
    assert {j["job_id"] for j in listed["jobs"]} == {first["job_id"], second["job_id"]}
    assert listed["stats"]["queued"] == 2
    assert cancelled["status"] == "cancelled"
    assert again.is_error and "already finished" in text_of(again)
    assert [j["job_id"] for j in only_cancelled["jobs"]] == [first["job_id"]]
    assert retried["status"] == "queued"
    assert pending_retry.is_error and "only failed or cancelled" in text_of(pending_retry)
    assert missing.is_error and "list_jobs" in text_of(missing)


async def test_a_job_that_cannot_succeed_ends_failed_and_shows_in_get_statistics(
    store: FalkorStore,
    jobs_ctx: MakeCtx,
    namespace: str,
) -> None:
    # The graph was built with another embedding model: no attempt can succeed.
    await store.ensure_vectors(namespace, "other/model", 8)
    ctx = jobs_ctx(workers=1)
    async with Client(create_server(ctx)) as client:
        with anyio.fail_after(20):
            ref = data_of(await client.call_tool("remember", {"content": NOTE, "wait": False}))
        info = await follow(client, ref["job_id"], {"done", "failed", "cancelled"})
        with anyio.fail_after(20):
            stats = data_of(await client.call_tool("get_statistics", {}))
            failed = data_of(await client.call_tool("list_jobs", {"status": ["failed"]}))
    assert info["status"] == "failed"
    assert info["error"] and "EmbeddingMismatch" in info["error"]
    assert stats["jobs"]["failed"] == 1
    assert stats["jobs"]["done"] == 0
    assert [j["job_id"] for j in failed["jobs"]] == [ref["job_id"]]


def _extraction(_messages: list[dict[str, Any]]) -> str:
    return json.dumps(
        {
            "entities": [{"name": "billing-service", "entity_type": "Service"}],
            "relations": [],
            "events": [],
            "facts": [],
            "causal_links": [],
            "concepts": [],
            "category": "episodic",
        }
    )


async def test_a_job_running_at_shutdown_runs_again_after_a_restart_without_duplicates(
    store: FalkorStore,
    jobs_ctx: MakeCtx,
    namespace: str,
) -> None:

    slow = {"on": True}

    def respond(messages: list[dict[str, Any]]) -> str | Reply:
        if slow["on"]:
            return Reply.slow(4, _extraction(messages))
        return _extraction(messages)

    async with ScriptedLLMServer(responder=respond) as llm_server:
        llm = llm_server.provider(timeout_s=30, max_retries=0)
        first = jobs_ctx(workers=1, llm=llm, grace_s=0)
        async with Client(create_server(first)) as client:
            with anyio.fail_after(20):
                ref = data_of(await client.call_tool("remember", {"content": NOTE, "wait": False}))
            await follow(client, ref["job_id"], {"running"})
        # The server stopped while the model was still answering: the job is back in line.
        slow["on"] = False
        second = jobs_ctx(workers=1, llm=llm)
        async with Client(create_server(second)) as client:
            interrupted = data_of(await client.call_tool("get_job", {"job_id": ref["job_id"]}))
            info = await follow(client, ref["job_id"], {"done", "failed"})
    assert interrupted["status"] in ("queued", "running")
    assert info["status"] == "done", info
    assert info["attempts"] == 2
    res = await store.query(
        namespace,
        "MATCH (e:E_Entity {name: 'billing-service'}) RETURN count(e)",
        read_only=True,
    )
    assert res.scalar(0) == 1
    res = await store.query(namespace, "MATCH (m:S_Memory) RETURN count(m)", read_only=True)
    assert res.scalar(0) == 1


async def test_the_http_server_runs_queued_remember_jobs_in_process(
    jobs_ctx: MakeCtx,
) -> None:
    ctx = jobs_ctx(workers=1)
    app = create_http_app(create_server(ctx), ctx)
    async with serving(app) as url:
        with anyio.fail_after(40):
            async with httpx2.AsyncClient(timeout=20) as http_client:
                transport = streamable_http_client(f"{url}/mcp", http_client=http_client)
                async with Client(transport) as client:
                    ref = data_of(
                        await client.call_tool("remember", {"content": NOTE, "wait": False})
                    )
                    info = await follow(client, ref["job_id"], {"done", "failed"})
                    stats = data_of(await client.call_tool("get_statistics", {}))
    assert info["status"] == "done", info
    assert info["worker_id"]
    assert stats["jobs"]["done"] == 1
    assert stats["total_nodes"] > 0


def test_the_server_queues_on_the_core_default_queue() -> None:
    """The server names the default queue without importing the queue (saq, Redis)."""
    assert JobOptions().queue_name == QUEUE_NAME
