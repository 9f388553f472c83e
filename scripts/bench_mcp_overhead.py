"""MCP overhead: `get_entity` and `get_causal_chain` through the SDK client (Streamable HTTP
and stdio, against real `polyg-mcp` processes) next to the same reads run directly
against FalkorDB, and `get_entity` / `add_entity` next to the SDK's own minimal `echo`
tool, all in the same run.

Usage:
    uv run python scripts/bench_mcp_overhead.py [--n 200] [--warmup 20]

First table: `cypher` is one equivalent Cypher query through FalkorStore.query; `core`
is the polyg-core call the tool makes (name resolution + read, no MCP); `http` and
`stdio` are full tool calls through the MCP client. Ratios are against `cypher`.

Second table (per transport): an `MCPServer` with a single `echo(text) -> str` tool,
started as its own process on the same event loop as `polyg-mcp`, is called in turn
with each of: `get_entity` (by exact name), `add_entity_hash` (a new name each call, on
a `polyg-mcp` whose embedder is a hash, so the non-embedding part of a write shows on
its own) and `add_entity` (with the local MiniLM embedder). `echo` is that tool's own
echo median; ratios are against it. `embed` is one MiniLM embedding of such a name in
the bench process.

Third table: the same `get_entity` and `add_entity` (hash embedder) through
`PolygServer.call_tool` in the bench process, no transport: FalkorDB queries per call,
the median call, the median time inside those queries and the rest (validation,
handler, output).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult
from polyg_core.config import StorageSettings
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.local import MiniLMEmbedder
from polyg_core.storage.embedded import EmbeddedFalkorDB
from polyg_core.storage.store import FalkorStore
from polyg_core.testing.hashing import HashEmbedder
from polyg_core.text.normalize import normalize_description
from polyg_server.main import event_loop_options

SCRIPT = str(Path(__file__).resolve())

GRAPH = "bench_mcp"
FAKE_GRAPH = "bench_mcp_hash"
ENTITY = "auth-service"
EFFECT = "auth service crash"

CYPHER_ENTITY = (
    "MATCH (n:E_Entity {name: $name}) "
    "OPTIONAL MATCH (n)-[r:E_RELATES]-(m:E_Entity) "
    "RETURN n.uuid, n.name, n.entity_type, n.properties, "
    "collect([r.relationship_type, m.uuid, m.name])"
)
CYPHER_CHAIN = (
    "MATCH (root:C_Node {key: $key}) "
    "MATCH p = (c:C_Node)-[:C_CAUSES*1..3]->(root) "
    "RETURN [x IN nodes(p) | x.description], [r IN relationships(p) | r.confidence] LIMIT 20"
)


async def seed(memory: Memory) -> None:
    ns = GRAPH
    await memory.store.delete_graph(ns)
    e = memory.entities
    for name, kind in [
        (ENTITY, "Service"),
        ("deploy-v2.3.1", "Deployment"),
        ("AUTH_SECRET", "EnvVar"),
        ("Alice", "Person"),
        ("login-api", "Service"),
    ]:
        await e.add(ns, name, kind)
    await e.link(ns, "Alice", ENTITY, "owns")
    await e.link(ns, "deploy-v2.3.1", ENTITY, "deployed_to")
    await e.link(ns, "login-api", ENTITY, "depends_on")
    await e.link(ns, ENTITY, "AUTH_SECRET", "requires")
    c = memory.causal
    await c.add_link(ns, "deploy-v2.3.1", "missing AUTH_SECRET", 0.88, entities=["AUTH_SECRET"])
    await c.add_link(ns, "missing AUTH_SECRET", EFFECT, 0.95, entities=[ENTITY])
    await c.add_link(ns, EFFECT, "login failures", 0.9, entities=["login-api"])


async def timed(fn: Callable[[], Awaitable[Any]], n: int, warmup: int) -> list[float]:
    for _ in range(warmup):
        await fn()
    out: list[float] = []
    for _ in range(n):
        t = time.perf_counter()
        await fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def p95(xs: list[float]) -> float:
    return statistics.quantiles(xs, n=20)[-1]


async def mcp_calls(client: Client, n: int, warmup: int) -> dict[str, list[float]]:
    async def entity() -> None:
        r = await client.call_tool("get_entity", {"entity": ENTITY})
        assert not r.is_error, r.content

    async def chain() -> None:
        r = await client.call_tool("get_causal_chain", {"node": EFFECT, "depth": 3})
        assert not r.is_error, r.content

    return {
        "get_entity": await timed(entity, n, warmup),
        "get_causal_chain": await timed(chain, n, warmup),
    }


def serve_echo(port: int | None) -> None:
    """The SDK's minimal server: one `echo` tool, stdio (or Streamable HTTP on `port`)."""
    server: MCPServer[Any] = MCPServer("echo", log_level="WARNING")

    @server.tool()
    def echo(text: str) -> str:  # pyright: ignore[reportUnusedFunction]
        """Return the text."""
        return text

    async def run() -> None:
        if port is None:
            await server.run_stdio_async()
        else:
            await server.run_streamable_http_async(port=port, json_response=True)

    anyio.run(run, backend_options=event_loop_options())


def serve_polyg_hash(argv: list[str]) -> None:
    """`polyg-mcp` with `HashEmbedder` instead of the configured embedding model."""
    from polyg_server import main as server_main

    def hash_embedder(_settings: object) -> HashEmbedder:
        return HashEmbedder("bench-hash-384")

    setattr(server_main, "_embedder", hash_embedder)  # noqa: B010
    server_main.main(argv)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.asynccontextmanager
async def http_server(args: list[str], env: dict[str, str]) -> AsyncGenerator[str]:
    """Run `SCRIPT args --port P` (or `polyg_server.main` for args == []) on a free port."""
    port = _free_port()
    cmd = (
        [sys.executable, SCRIPT, *args, "--port", str(port)]
        if args
        else [sys.executable, "-m", "polyg_server.main", "--http", "--port", str(port)]
    )
    proc = await anyio.open_process(
        cmd,
        env={**env, "POLYG_LOG_LEVEL": "WARNING"},
        stdout=subprocess.DEVNULL,
        stderr=None,
    )
    try:
        with anyio.fail_after(120):
            while True:
                with (
                    contextlib.suppress(OSError),
                    socket.create_connection(("127.0.0.1", port), 0.2),
                ):
                    break
                if proc.returncode is not None:
                    raise RuntimeError(f"{' '.join(cmd)} exited with {proc.returncode}")
                await anyio.sleep(0.2)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        with anyio.fail_after(20):
            await proc.wait()


@contextlib.asynccontextmanager
async def http_client(url: str) -> AsyncGenerator[Client]:
    async with (
        httpx2.AsyncClient(timeout=60) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


def stdio_params(args: list[str], env: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=[SCRIPT, *args] if args else ["-m", "polyg_server.main"],
        env=env,
    )


async def paired_calls(
    echo: Client, polyg: Client, polyg_hash: Client, prefix: str, n: int, warmup: int
) -> dict[str, tuple[list[float], list[float]]]:
    """Per tool, n rounds of (echo, tool) calls in turn, so load changes hit both alike.

    One tool at a time: the MiniLM model's threads, busy after an embedding, would
    otherwise slow whatever call came next.
    """
    counter = iter(range(10**9))

    async def call(client: Client, tool: str, args: dict[str, Any]) -> None:
        r = await client.call_tool(tool, args)
        assert not r.is_error, r.content

    def add(client: Client) -> Callable[[], Awaitable[None]]:
        return lambda: call(
            client, "add_entity", {"name": f"{prefix} item {next(counter)}", "entity_type": "Item"}
        )

    tools: dict[str, Callable[[], Awaitable[None]]] = {
        "get_entity": lambda: call(polyg, "get_entity", {"entity": ENTITY}),
        "add_entity_hash": add(polyg_hash),
        "add_entity": add(polyg),
    }

    async def echo_call() -> None:
        await call(echo, "echo", {"text": ENTITY})

    out: dict[str, tuple[list[float], list[float]]] = {}
    for name, fn in tools.items():
        for _ in range(warmup):
            await echo_call()
            await fn()
        base: list[float] = []
        xs: list[float] = []
        for _ in range(n):
            for target, run in ((base, echo_call), (xs, fn)):
                t = time.perf_counter()
                await run()
                target.append((time.perf_counter() - t) * 1000)
        out[name] = (base, xs)
    return out


async def in_process(
    store: FalkorStore, n: int, warmup: int
) -> dict[str, tuple[int, list[float], list[float]]]:
    """The handlers through `PolygServer.call_tool` (no transport), hash embedder.

    Per tool: FalkorDB queries per call, call times and the time spent in queries.
    """
    from polyg_core.config import Settings
    from polyg_core.storage.store import QueryResult
    from polyg_server.app import create_server
    from polyg_server.context import ServerContext

    ctx = ServerContext(
        store=store,
        settings=Settings(),
        embedder=HashEmbedder("bench-hash-384"),
        default_namespace=FAKE_GRAPH,
    )
    server = create_server(ctx, profiles=["memory", "graph"])
    query = store.query
    spent: list[float] = []

    async def timed_query(*args: Any, **kwargs: Any) -> QueryResult:
        t = time.perf_counter()
        try:
            return await query(*args, **kwargs)
        finally:
            spent.append((time.perf_counter() - t) * 1000)

    counter = iter(range(10**9))
    calls: dict[str, Callable[[], dict[str, Any]]] = {
        # The seeded graph: exact names never embed, so the hash embedder is not used.
        "get_entity": lambda: {"entity": ENTITY, "graph": GRAPH},
        "add_entity_hash": lambda: {"name": f"inproc item {next(counter)}", "entity_type": "Item"},
    }
    out: dict[str, tuple[int, list[float], list[float]]] = {}
    setattr(store, "query", timed_query)  # noqa: B010
    try:
        for name, args in calls.items():
            tool = name.removesuffix("_hash")
            for _ in range(warmup):
                await server.call_tool(tool, args())
            spent.clear()
            r = await server.call_tool(tool, args())
            assert isinstance(r, CallToolResult), r
            assert not r.is_error, r.content
            queries = len(spent)
            xs: list[float] = []
            in_queries: list[float] = []
            for _ in range(n):
                spent.clear()
                t = time.perf_counter()
                await server.call_tool(tool, args())
                xs.append((time.perf_counter() - t) * 1000)
                in_queries.append(sum(spent))
            out[name] = (queries, xs, in_queries)
    finally:
        delattr(store, "query")
    return out


async def main_async(n: int, warmup: int, data_dir: Path) -> None:
    server = EmbeddedFalkorDB(data_dir)
    server.ensure_running()
    store = await FalkorStore(StorageSettings(data_dir=data_dir)).connect()
    paired: dict[str, dict[str, tuple[list[float], list[float]]]] = {}
    try:
        embedder = MiniLMEmbedder()
        memory = Memory(store=store, embedder=embedder, namespace=GRAPH)
        await seed(memory)
        await store.delete_graph(FAKE_GRAPH)
        results: dict[str, dict[str, list[float]]] = {"get_entity": {}, "get_causal_chain": {}}
        key = normalize_description(EFFECT)

        async def cypher_entity() -> None:
            res = await store.query(GRAPH, CYPHER_ENTITY, {"name": ENTITY}, read_only=True)
            assert res.rows

        async def cypher_chain() -> None:
            res = await store.query(GRAPH, CYPHER_CHAIN, {"key": key}, read_only=True)
            assert res.rows

        async def core_entity() -> None:
            await memory.entities.get_with_relationships(GRAPH, ENTITY, "both", limit=100)

        async def core_chain() -> None:
            root = await memory.causal.get(GRAPH, EFFECT)
            await memory.causal.chain_from(GRAPH, root, 3, "upstream", max_paths=20)

        embed_counter = iter(range(10**9))

        async def embed_name() -> None:
            await embedder.embed([f"embed item {next(embed_counter)}"])

        results["get_entity"]["cypher"] = await timed(cypher_entity, n, warmup)
        results["get_causal_chain"]["cypher"] = await timed(cypher_chain, n, warmup)
        results["get_entity"]["core"] = await timed(core_entity, n, warmup)
        results["get_causal_chain"]["core"] = await timed(core_chain, n, warmup)
        embed_ms = await timed(embed_name, n, warmup)
        local = await in_process(store, n, warmup)
        await store.delete_graph(FAKE_GRAPH)

        env = {
            **os.environ,
            "POLYG_DATA_DIR": str(data_dir),
            "FALKORDB_GRAPH": GRAPH,
            "POLYG_LOG_LEVEL": "WARNING",
            "POLYG_JOB_WORKERS": "0",
            # get_causal_chain and add_entity are outside the default profile.
            "POLYG_TOOLS": "all",
        }
        env.pop("LLM_MODEL", None)
        hash_env = {**env, "FALKORDB_GRAPH": FAKE_GRAPH}
        async with (
            http_server([], env) as url,
            http_server(["--serve", "echo"], env) as echo_url,
            http_server(["--serve", "polyg-hash"], hash_env) as hash_url,
            http_client(url) as client,
            http_client(echo_url) as echo,
            http_client(hash_url) as polyg_hash,
        ):
            for tool, xs in (await mcp_calls(client, n, warmup)).items():
                results[tool]["http"] = xs
            paired["http"] = await paired_calls(echo, client, polyg_hash, "http", n, warmup)
        with anyio.fail_after(600):
            async with (
                Client(stdio_params([], env)) as client,
                Client(stdio_params(["--serve", "echo"], env)) as echo,
                Client(stdio_params(["--serve", "polyg-hash"], hash_env)) as polyg_hash,
            ):
                for tool, xs in (await mcp_calls(client, n, warmup)).items():
                    results[tool]["stdio"] = xs
                paired["stdio"] = await paired_calls(echo, client, polyg_hash, "stdio", n, warmup)
        await store.delete_graph(GRAPH)
        await store.delete_graph(FAKE_GRAPH)
    finally:
        await store.close()
        server.stop()

    print(f"\nn={n} per cell (after {warmup} warm-up calls), times in ms, 127.0.0.1\n")
    print(f"{'tool':<18}{'path':<8}{'median':>9}{'p95':>9}{'median/cypher':>15}{'p95/cypher':>12}")
    for tool, cols in results.items():
        base_med = statistics.median(cols["cypher"])
        base_p95 = p95(cols["cypher"])
        for path, xs in cols.items():
            med, tail = statistics.median(xs), p95(xs)
            print(
                f"{tool:<18}{path:<8}{med:>9.2f}{tail:>9.2f}"
                f"{med / base_med:>15.1f}{tail / base_p95:>12.1f}"
            )
    print(f"\npaired rounds against the SDK's echo tool, n={n} rounds; embed (MiniLM, 1 name):")
    print(f"median {statistics.median(embed_ms):.2f} ms, p95 {p95(embed_ms):.2f} ms\n")
    print(
        f"{'tool':<18}{'path':<8}{'echo':>8}{'median':>9}{'p95':>9}"
        f"{'median/echo':>13}{'p95/echo':>10}"
    )
    for path, tools in paired.items():
        for tool, (base, xs) in tools.items():
            med, tail = statistics.median(xs), p95(xs)
            base_med = statistics.median(base)
            print(
                f"{tool:<18}{path:<8}{base_med:>8.2f}{med:>9.2f}{tail:>9.2f}"
                f"{med / base_med:>13.2f}{tail / p95(base):>10.2f}"
            )

    print(f"\nin process (PolygServer.call_tool, hash embedder), n={n}; times in ms\n")
    print(f"{'tool':<18}{'queries':>8}{'median':>9}{'in queries':>12}{'rest':>8}")
    for tool, (queries, xs, in_queries) in local.items():
        rest = [a - b for a, b in zip(xs, in_queries, strict=True)]
        print(
            f"{tool:<18}{queries:>8}{statistics.median(xs):>9.2f}"
            f"{statistics.median(in_queries):>12.2f}{statistics.median(rest):>8.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument(
        "--serve",
        choices=("echo", "polyg-hash"),
        help="run one of the bench's servers instead (the bench starts them itself)",
    )
    parser.add_argument("--port", type=int, help="with --serve: Streamable HTTP on this port")
    args = parser.parse_args()
    if args.serve == "echo":
        serve_echo(args.port)
        return
    if args.serve == "polyg-hash":
        http = ["--http", "--port", str(args.port)] if args.port is not None else []
        serve_polyg_hash(http)
        return
    with tempfile.TemporaryDirectory(prefix="polyg-bench-") as tmp:
        anyio.run(main_async, args.n, args.warmup, Path(tmp))


if __name__ == "__main__":
    main()
