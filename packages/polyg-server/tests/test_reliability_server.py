"""The HTTP server while FalkorDB dies and comes back, and while a query runs too long."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult
from polyg_core.config import Settings, StorageSettings
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.storage.embedded import EmbeddedFalkorDB
from polyg_core.storage.store import FalkorStore
from polyg_server.app import create_server
from polyg_server.context import ServerContext
from polyg_server.http import create_http_app
from polyg_server.registry import READ_ONLY, ToolInput, ToolSpec, register_tool
from polyg_server.testing import serving, text_of
from pydantic import BaseModel

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
def own_falkordb(tmp_path: Path) -> Iterator[EmbeddedFalkorDB]:
    server = EmbeddedFalkorDB(tmp_path / "db")
    server.ensure_running()
    yield server
    server.stop()


def kill(server: EmbeddedFalkorDB) -> None:
    proc = server.process
    assert proc is not None
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


async def test_http_server_reports_the_outage_and_serves_again_after_falkordb_returns(
    own_falkordb: EmbeddedFalkorDB, embedder: Embedder
) -> None:
    storage = StorageSettings(url=f"unix://{own_falkordb.socket_path}", max_retries=1)
    store = FalkorStore(storage)
    await store.connect()
    ctx = ServerContext(
        store=store, settings=Settings(storage=storage, tools="all"), embedder=embedder
    )
    app = create_http_app(create_server(ctx), ctx)

    async def add(client: Client, i: int) -> CallToolResult:
        args: dict[str, Any] = {"name": f"svc-{i}", "entity_type": "Service"}
        return await client.call_tool("add_entity", args)

    try:
        async with (
            serving(app) as url,
            httpx.AsyncClient(timeout=20) as http,
            httpx2.AsyncClient(timeout=30) as http_client,
        ):
            transport = streamable_http_client(f"{url}/mcp", http_client=http_client)
            async with Client(transport) as client:
                with anyio.fail_after(90):
                    before = [await add(client, i) for i in range(5)]
                    kill(own_falkordb)
                    during = [await add(client, 5)]  # each waits out the client retries
                    health_down = await http.get(f"{url}/health")
                    await anyio.to_thread.run_sync(own_falkordb.ensure_running)
                    after = [await add(client, i) for i in range(8, 12)]
                    health_up = await http.get(f"{url}/health")
                    stats = await client.call_tool("get_statistics", {})
    finally:
        await store.close()
    assert not any(r.is_error for r in before)
    for r in during:
        assert r.is_error and text_of(r).startswith("Storage unavailable:"), text_of(r)
        assert "Retry the call once FalkorDB is reachable" in text_of(r)
    assert health_down.status_code == 503
    assert not any(r.is_error for r in after), [text_of(r) for r in after]
    assert health_up.status_code == 200
    assert stats.structured_content is not None
    assert stats.structured_content["graphs"]["entity"]["nodes"] == 9  # 5 before + 4 after


class SlowArgs(ToolInput):
    pass


class SlowOut(BaseModel):
    count: int


async def slow_count(ctx: ServerContext, inp: SlowArgs) -> SlowOut:
    ns = ctx.namespace(inp.graph)
    res = await ctx.store.query(
        ns,
        "MATCH (a:G_Node), (b:G_Node), (c:G_Node) RETURN count(a.i + b.i + c.i)",
        read_only=True,
    )
    return SlowOut(count=int(res.scalar(0)))


async def test_a_query_over_the_timeout_is_a_tool_error_naming_the_setting(
    falkordb_settings: StorageSettings, namespace: str
) -> None:
    storage = falkordb_settings.model_copy(update={"query_timeout_ms": 50, "graph": namespace})
    store = FalkorStore(storage)
    await store.connect()
    try:
        await store.query(namespace, "UNWIND range(1, 2000) AS i CREATE (:G_Node {i: i})")
        ctx = ServerContext(store=store, settings=Settings(storage=storage, tools="all"))
        server = create_server(ctx)
        spec = ToolSpec(
            name="slow_count",
            description="A deliberately slow query.",
            input_model=SlowArgs,
            output_model=SlowOut,
            handler=slow_count,
            annotations=READ_ONLY,
            profile="admin",
        )
        register_tool(server, spec)
        async with Client(server) as client:
            with anyio.fail_after(30):
                slow = await client.call_tool("slow_count", {})
                fine = await client.call_tool("get_statistics", {})
    finally:
        await store.delete_graph(namespace)
        await store.close()
    assert slow.is_error
    assert text_of(slow).startswith("Query timeout:")
    assert "POLYG_QUERY_TIMEOUT_MS" in text_of(slow)
    assert not fine.is_error


def test_storage_errors_inside_a_task_group_keep_their_meaning() -> None:
    from polyg_core.errors import StorageUnavailable
    from polyg_server.errors import tool_error_text

    down = StorageUnavailable("FalkorDB at x is unreachable.")
    grouped = ExceptionGroup("views", [ValueError("other view"), ExceptionGroup("knn", [down])])
    assert tool_error_text("semantic_search", grouped).startswith("Storage unavailable:")
    assert tool_error_text("t", ExceptionGroup("g", [ValueError("x")])).startswith("internal error")
