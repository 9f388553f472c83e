"""Stateless server replicas: several `polyg-mcp --http --stateless` processes on one store,
read-your-writes per client with FalkorDB read replicas, /health connection roles."""

from __future__ import annotations

import itertools
import json
import os
import signal
import sys
from collections.abc import AsyncGenerator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import anyio
import httpx
import httpx2
import pytest
from anyio.abc import Process
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from polyg_bench.replication import (
    LoopbackServer,
    ReplicaSet,
    free_port,
    replica_set,
    start_server,
)
from polyg_core.config import Settings, StorageSettings
from polyg_core.errors import StorageError
from polyg_core.jobs import open_redis
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.storage.store import FalkorStore
from polyg_server.app import create_server
from polyg_server.context import ServerContext, store_session_key
from polyg_server.http import HttpOptions, create_http_app
from polyg_server.main import sse_from, stateless_from, without_queue_on_cluster
from polyg_server.testing import serving
from pydantic import SecretStr

pytestmark = pytest.mark.anyio

API_KEY = "replica-test-key"


# -- helpers --------------------------------------------------------------------------------


class RoundRobin(httpx2.AsyncBaseTransport):
    """A load balancer in the client: requests go to the servers in turn.

    Tool calls take turns on their own counter (so consecutive tool calls always land
    on different servers, whatever else the client sends in between); every other
    request (initialize, notifications, the GET stream) takes turns on another.
    """

    def __init__(self, bases: list[str]) -> None:
        self.bases = [httpx2.URL(b) for b in bases]
        self.inner = httpx2.AsyncHTTPTransport()
        self.turns = {"tool": 0, "other": 0}
        self.calls: list[tuple[int, str]] = []
        """(server index, tool name) of every tools/call sent."""
        self.others: list[tuple[int, str]] = []
        """(server index, HTTP method) of every other request."""

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        tool: str | None = None
        if request.method == "POST":
            try:
                body = json.loads(request.content)
            except (ValueError, httpx2.RequestNotRead):
                body = None
            message = cast(dict[str, Any], body) if isinstance(body, dict) else {}
            if message.get("method") == "tools/call":
                tool = str(message["params"]["name"])
        kind = "other" if tool is None else "tool"
        index = self.turns[kind] % len(self.bases)
        self.turns[kind] += 1
        if tool is None:
            self.others.append((index, request.method))
        else:
            self.calls.append((index, tool))
        base = self.bases[index]
        request.url = request.url.copy_with(host=base.host, port=base.port)
        request.headers["host"] = f"{base.host}:{base.port}"
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def _polyg_mcp() -> list[str]:
    script = Path(sys.executable).parent / "polyg-mcp"
    return [str(script)] if script.exists() else [sys.executable, "-m", "polyg_server.main"]


@dataclass
class Replicas:
    """Server processes and their base URLs."""

    urls: list[str]
    processes: list[Process] = field(default_factory=lambda: [])


@asynccontextmanager
async def server_processes(
    falkordb: LoopbackServer, data_dir: Path, count: int = 2
) -> AsyncGenerator[Replicas]:
    """`count` `polyg-mcp --http --stateless` processes on one external FalkorDB."""
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("FALKORDB_", "POLYG_"))}
    env = {
        **base_env,
        "FALKORDB_HOST": "127.0.0.1",
        "FALKORDB_PORT": str(falkordb.port),
        "POLYG_DATA_DIR": str(data_dir),
        "POLYG_API_KEY": API_KEY,
        "POLYG_HTTP_STATELESS": "true",
        "POLYG_JOB_WORKERS": "1",
        "POLYG_TOOLS": "all",
        "POLYG_LOG_LEVEL": "WARNING",
    }
    replicas = Replicas(urls=[])
    try:
        for _ in range(count):
            port = free_port()
            proc = await anyio.open_process(
                [*_polyg_mcp(), "--http", "--host", "127.0.0.1", "--port", str(port)],
                env=env,
                stdout=None,
                stderr=None,
            )
            replicas.processes.append(proc)
            replicas.urls.append(f"http://127.0.0.1:{port}")
        async with httpx.AsyncClient() as http:
            with anyio.fail_after(60):
                for proc, url in zip(replicas.processes, replicas.urls, strict=True):
                    while True:
                        assert proc.returncode is None, "polyg-mcp exited at start"
                        try:
                            if (await http.get(f"{url}/health")).status_code == 200:
                                break
                        except httpx.TransportError:
                            pass
                        await anyio.sleep(0.1)
        yield replicas
    finally:
        with anyio.CancelScope(shield=True):
            for proc in replicas.processes:
                if proc.returncode is None:
                    proc.send_signal(signal.SIGTERM)
            for proc in replicas.processes:
                with anyio.move_on_after(15) as scope:
                    await proc.wait()
                if scope.cancelled_caught:
                    proc.kill()
                    await proc.wait()


def _bearer() -> dict[str, str]:
    return {"Authorization": f"Bearer {API_KEY}"}


async def _ok(client: Client, name: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(name, args)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


@pytest.fixture(scope="module")
def falkordb_node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoopbackServer]:
    node = start_server(Path(tmp_path_factory.mktemp("falkordb")))
    try:
        yield node
    finally:
        node.stop()


# -- two server processes answering one client in turn ------------------------------------


@pytest.mark.slow
async def test_two_stateless_servers_answer_one_client_alternately_with_consistent_results(
    falkordb_node: LoopbackServer, tmp_path: Path
) -> None:
    graph, scratch = "rr_memory", "rr_scratch"
    async with server_processes(falkordb_node, tmp_path) as servers:
        lb = RoundRobin(servers.urls)
        with anyio.fail_after(120):
            async with httpx2.AsyncClient(
                headers=_bearer(), timeout=60, transport=lb
            ) as http_client:
                transport = streamable_http_client(
                    f"{servers.urls[0]}/mcp", http_client=http_client
                )
                async with Client(transport) as client:
                    # A memory write on one server, read back on the other.
                    await _ok(
                        client,
                        "add_entity",
                        {"graph": graph, "name": "Ada Lovelace", "entity_type": "Person"},
                    )
                    detail = await _ok(
                        client, "get_entity", {"graph": graph, "entity": "ada lovelace"}
                    )
                    # A scratch graph created on one server, used on the other.
                    await _ok(client, "add_node", {"graph": scratch, "label": "AuthService"})
                    await _ok(client, "add_node", {"graph": scratch, "label": "UserStore"})
                    edge = await _ok(
                        client,
                        "add_edge",
                        {
                            "graph": scratch,
                            "source": "AuthService",
                            "target": "UserStore",
                            "relation": "depends_on",
                        },
                    )
                    nodes = await _ok(client, "list_nodes", {"graph": scratch})
                    # A queued remember: enqueued on one server, followed on both.
                    queued = await _ok(
                        client,
                        "remember",
                        {
                            "graph": graph,
                            "content": "Grace Hopper met Ada Lovelace in London in 1843.",
                            "wait": False,
                        },
                    )
                    seen_on: set[int] = set()
                    job: dict[str, Any] = {}
                    while job.get("status") != "done":
                        job = await _ok(client, "get_job", {"job_id": queued["job_id"]})
                        seen_on.add(lb.calls[-1][0])
                        assert job["status"] in ("queued", "running", "done"), job
                        if job["status"] != "done":
                            await anyio.sleep(0.2)
                    for _ in range(2):  # the finished job, as each server reports it
                        again = await _ok(client, "get_job", {"job_id": queued["job_id"]})
                        seen_on.add(lb.calls[-1][0])
                        assert again["status"] == "done"
                    recalled = await _ok(
                        client, "get_entity", {"graph": graph, "entity": "Grace Hopper"}
                    )

            # The explorer's cookie, issued by one server, is accepted by the other.
            async with httpx.AsyncClient(timeout=30) as http:
                login = await http.post(
                    f"{servers.urls[0]}/ui/login", data={"key": API_KEY}, follow_redirects=False
                )
                cookie = login.cookies.get("polyg_session")
                assert cookie
                listed = await http.get(
                    f"{servers.urls[1]}/api/graphs", cookies={"polyg_session": cookie}
                )
                http.cookies.clear()
                refused = await http.get(f"{servers.urls[1]}/api/graphs")

    # Every tool call went to the other server than the call before it.
    servers_of_calls = [i for i, _ in lb.calls]
    assert all(a != b for a, b in itertools.pairwise(servers_of_calls))
    assert {i for i, _ in lb.others} == {0, 1}  # initialize and the rest spread too
    assert [name for _, name in lb.calls[:6]] == [
        "add_entity",
        "get_entity",
        "add_node",
        "add_node",
        "add_edge",
        "list_nodes",
    ]
    assert detail["entity"]["name"] == "Ada Lovelace"
    assert sorted(n["label"] for n in nodes["nodes"]) == ["AuthService", "UserStore"]
    assert edge["created"] is True
    assert queued["queued"] is True
    assert seen_on == {0, 1}
    assert job["result"]["graph"] == graph
    assert recalled["entity"]["name"] == "Grace Hopper"
    assert listed.status_code == 200
    assert graph in json.dumps(listed.json())
    assert refused.status_code == 401


# -- read-your-writes with FalkorDB read replicas -----------------------------------------


@pytest.fixture(scope="module")
def replicas(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReplicaSet]:
    with replica_set(Path(tmp_path_factory.mktemp("replicas")), replicas=2) as group:
        yield group


@asynccontextmanager
async def replicated_server(
    group: ReplicaSet, graph: str, embedder: Embedder | None = None, **storage: Any
) -> AsyncGenerator[tuple[str, FalkorStore]]:
    """An in-process stateless HTTP server on the replica set; yields its URL and store."""
    settings = Settings(
        storage=group.settings(graph=graph, **storage), api_key=SecretStr(API_KEY), tools="all"
    )
    store = await FalkorStore(settings.storage).connect()
    try:
        ctx = ServerContext(store=store, settings=settings, embedder=embedder)
        app = create_http_app(create_server(ctx), ctx, HttpOptions(stateless=True))
        async with serving(app) as url:
            yield url, store
    finally:
        await store.close()


def _reads(store: FalkorStore) -> tuple[int, int]:
    """Reads served so far by the primary and by the replicas."""
    stats = store.routing_stats()
    return (
        sum(s.reads for s in stats if s.role == "primary"),
        sum(s.reads for s in stats if s.role == "replica"),
    )


@asynccontextmanager
async def _client(url: str, client_address: str) -> AsyncGenerator[Client]:
    headers = {**_bearer(), "X-Forwarded-For": client_address}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http_client,
        Client(streamable_http_client(f"{url}/mcp", http_client=http_client)) as c,
    ):
        yield c


async def test_a_clients_read_right_after_its_write_sees_the_write_with_replicas(
    replicas: ReplicaSet, embedder: Embedder
) -> None:
    graph = "ryw_memory"
    # Replica state is read once here and then not for a minute, so the replicas keep
    # counting as fresh: only the pin of the writing client sends its reads to the primary.
    async with replicated_server(
        replicas, graph, embedder, read_your_writes_ms=30_000, replica_check_ms=60_000
    ) as (url, store):
        with anyio.fail_after(90):
            async with _client(url, "10.0.0.1") as writer, _client(url, "10.0.0.2") as other:
                await _ok(writer, "add_entity", {"graph": graph, "name": "Seed"})
                await anyio.to_thread.run_sync(replicas.wait_synced)
                await store.refresh_replicas()
                for i in range(5):
                    name = f"Person {i}"
                    await _ok(writer, "add_entity", {"graph": graph, "name": name})
                    primary_before, replica_before = _reads(store)
                    read = await _ok(writer, "get_entity", {"graph": graph, "entity": name})
                    primary_after, replica_after = _reads(store)
                    assert read["entity"]["name"] == name
                    assert replica_after == replica_before  # pinned to the primary
                    assert primary_after > primary_before
                    # Another client is not pinned by this client's write.
                    seed = await _ok(other, "get_entity", {"graph": graph, "entity": "Seed"})
                    assert seed["entity"]["name"] == "Seed"
                    assert _reads(store)[1] > replica_after


# -- /health with replicas --------------------------------------------------------------------


async def test_health_reports_the_role_of_each_store_connection_with_replicas(
    replicas: ReplicaSet,
) -> None:
    async with (
        replicated_server(replicas, "health_roles") as (url, _store),
        httpx.AsyncClient() as http,
    ):
        with anyio.fail_after(20):
            detailed = await http.get(f"{url}/health", headers=_bearer())
            anonymous = await http.get(f"{url}/health")
    assert detailed.status_code == 200
    connections = detailed.json()["connections"]
    assert [c["role"] for c in connections] == ["primary", "replica", "replica"]
    assert [c["address"] for c in connections] == [
        replicas.primary.address,
        *(r.address for r in replicas.replicas),
    ]
    assert all(c["healthy"] for c in connections)
    assert anonymous.json() == {"status": "ok"}


# -- configuration and session keys ---------------------------------------------------------


def test_session_key_follows_the_mcp_session_or_else_the_client() -> None:
    stateful = store_session_key({"mcp-session-id": "abc"}, "10.0.0.9")
    a = store_session_key({"authorization": "Bearer k"}, "10.0.0.1")
    a_again = store_session_key({"authorization": "Bearer k"}, "10.0.0.1")
    b = store_session_key({"authorization": "Bearer k"}, "10.0.0.2")
    behind_lb = store_session_key(
        {"authorization": "Bearer k", "x-forwarded-for": "192.0.2.7, 10.0.0.1"}, "10.0.0.1"
    )
    assert stateful == "mcp:abc"
    assert a == a_again
    assert len({a, b, behind_lb}) == 3
    assert a is not None and "Bearer" not in a
    assert store_session_key(None, None) is None


@pytest.mark.parametrize(
    ("flag", "env", "expected"),
    [
        (None, {}, False),
        (None, {"POLYG_HTTP_STATELESS": "true"}, True),
        (None, {"POLYG_HTTP_STATELESS": "0"}, False),
        (False, {"POLYG_HTTP_STATELESS": "yes"}, False),
        (True, {}, True),
    ],
)
def test_stateless_comes_from_the_flag_else_the_environment(
    flag: bool | None, env: dict[str, str], expected: bool
) -> None:
    assert stateless_from(flag, env) is expected


def test_a_non_boolean_stateless_setting_is_refused_with_the_fix() -> None:
    with pytest.raises(ValueError, match="set it to true or false"):
        stateless_from(None, {"POLYG_HTTP_STATELESS": "maybe"})


def test_sse_responses_come_from_the_flag_else_the_environment_and_are_off_by_default() -> None:
    assert sse_from(None, {}) is False
    assert sse_from(None, {"POLYG_HTTP_SSE": "on"}) is True
    assert sse_from(False, {"POLYG_HTTP_SSE": "1"}) is False
    with pytest.raises(ValueError, match="POLYG_HTTP_SSE"):
        sse_from(None, {"POLYG_HTTP_SSE": "maybe"})


async def test_the_job_queue_refuses_a_cluster_and_names_the_alternative() -> None:
    store = FalkorStore(StorageSettings(cluster="127.0.0.1:1"))
    with pytest.raises(StorageError, match="wait: true"):
        await open_redis(store)


async def test_the_job_queue_uses_the_primary_when_replicas_are_configured(
    replicas: ReplicaSet,
) -> None:
    store = FalkorStore(replicas.settings())
    redis = await open_redis(store)
    try:
        info = await redis.info("replication")
        await redis.set("polyg:test:queue-write", b"1")
    finally:
        await redis.aclose()
    assert info["role"] == "master"


def test_a_cluster_runs_no_job_worker_and_remember_always_writes_at_once() -> None:
    settings = Settings(storage=StorageSettings(cluster="127.0.0.1:7000"), job_workers=4)
    without_queue_on_cluster(settings)
    assert settings.job_workers == 0
    assert settings.remember_wait_max_chars >= 100_000


# -- per-process caches -------------------------------------------------------------------


async def test_a_scratch_graph_deleted_on_one_server_and_reused_on_another_still_works(
    falkordb_node: LoopbackServer, embedder: Embedder
) -> None:
    storage = StorageSettings(host="127.0.0.1", port=falkordb_node.port, max_retries=1)
    settings = Settings(storage=storage, tools="all")
    stores = [await FalkorStore(storage).connect() for _ in range(2)]
    try:
        a, b = (
            Client(create_server(ServerContext(store=s, settings=settings, embedder=embedder)))
            for s in stores
        )
        async with a, b:
            with anyio.fail_after(60):
                await _ok(a, "add_node", {"graph": "stale_cache", "label": "AuthService"})
                await _ok(b, "delete_graph", {"graph": "stale_cache", "confirm": True})
                await _ok(a, "add_node", {"graph": "stale_cache", "label": "UserStore"})
                found = await _ok(a, "find_node", {"graph": "stale_cache", "query": "user store"})
        assert found["matches"][0]["label"] == "UserStore"
    finally:
        for s in stores:
            await s.close()
