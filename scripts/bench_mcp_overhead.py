"""MCP overhead: `get_entity` and `get_causal_chain` through the SDK client (Streamable HTTP
and stdio, against real `polyg-mcp` processes) next to the same reads run directly
against FalkorDB in the same run.

Usage:
    uv run python scripts/bench_mcp_overhead.py [--n 200] [--warmup 20]

Columns: `cypher` is one equivalent Cypher query through FalkorStore.query; `core`
is the polyg-core call the tool makes (name resolution + read, no MCP); `http` and
`stdio` are full tool calls through the MCP client. Ratios are against `cypher`.
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
from polyg_core.config import StorageSettings
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.local import MiniLMEmbedder
from polyg_core.storage.embedded import EmbeddedFalkorDB
from polyg_core.storage.store import FalkorStore
from polyg_core.text import normalize_description

GRAPH = "bench_mcp"
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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.asynccontextmanager
async def http_server(env: dict[str, str]) -> AsyncGenerator[str]:
    port = _free_port()
    proc = await anyio.open_process(
        [sys.executable, "-m", "polyg_server.main", "--http", "--port", str(port)],
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
                    raise RuntimeError(f"polyg-mcp --http exited with {proc.returncode}")
                await anyio.sleep(0.2)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        with anyio.fail_after(20):
            await proc.wait()


async def main_async(n: int, warmup: int, data_dir: Path) -> None:
    server = EmbeddedFalkorDB(data_dir)
    server.ensure_running()
    store = await FalkorStore(StorageSettings(data_dir=data_dir)).connect()
    try:
        memory = Memory(store=store, embedder=MiniLMEmbedder(), namespace=GRAPH)
        await seed(memory)
        results: dict[str, dict[str, list[float]]] = {"get_entity": {}, "get_causal_chain": {}}
        key = normalize_description(EFFECT)

        async def cypher_entity() -> None:
            res = await store.query(GRAPH, CYPHER_ENTITY, {"name": ENTITY}, read_only=True)
            assert res.rows

        async def cypher_chain() -> None:
            res = await store.query(GRAPH, CYPHER_CHAIN, {"key": key}, read_only=True)
            assert res.rows

        async def core_entity() -> None:
            ent = await memory.entities.get(GRAPH, ENTITY)
            await memory.entities.relationships(GRAPH, ent.uuid, "both", limit=100)

        async def core_chain() -> None:
            root = await memory.causal.get(GRAPH, EFFECT)
            await memory.causal.chain_from(GRAPH, root, 3, "upstream", max_paths=20)

        results["get_entity"]["cypher"] = await timed(cypher_entity, n, warmup)
        results["get_causal_chain"]["cypher"] = await timed(cypher_chain, n, warmup)
        results["get_entity"]["core"] = await timed(core_entity, n, warmup)
        results["get_causal_chain"]["core"] = await timed(core_chain, n, warmup)

        env = {**os.environ, "POLYG_DATA_DIR": str(data_dir), "FALKORDB_GRAPH": GRAPH}
        env.pop("LLM_MODEL", None)
        async with (
            http_server(env) as url,
            httpx2.AsyncClient(timeout=60) as http_client,
            Client(streamable_http_client(url, http_client=http_client)) as client,
        ):
            for tool, xs in (await mcp_calls(client, n, warmup)).items():
                results[tool]["http"] = xs
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "polyg_server.main"],
            env={
                "POLYG_DATA_DIR": str(data_dir),
                "FALKORDB_GRAPH": GRAPH,
                "POLYG_LOG_LEVEL": "WARNING",
                "PATH": os.environ.get("PATH", ""),
            },
        )
        with anyio.fail_after(600):
            async with Client(params) as client:
                for tool, xs in (await mcp_calls(client, n, warmup)).items():
                    results[tool]["stdio"] = xs
        await store.delete_graph(GRAPH)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="polyg-bench-") as tmp:
        anyio.run(main_async, args.n, args.warmup, Path(tmp))


if __name__ == "__main__":
    main()
