"""Where a `get_entity` call's CPU goes, next to the SDK's echo tool: the parts a loaded
machine does not distort (issue 38 item 5).

    uv run python scripts/bench_call_cpu.py [--n 2000]

Both tools are called in this process through an in-memory MCP client session (the same
client and server code as stdio, without the pipes), alternated, and each call's
main-thread CPU (`time.thread_time`) is split: the FalkorDB round trip's client work
(redis-py sending and receiving: `execute_command`), reading its reply
(`storage.reply.read_reply`), the rest of `FalkorStore.query` (parameters, command,
retries), and the remainder (the MCP client and server, validation, handler, output and
JSON, both ways). The stdio transport adds the same framing and pipe writes to both
tools, plus the bytes of the reply; its size is printed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import polyg_core.storage.store as store_module
from mcp import Client
from mcp.server.mcpserver import MCPServer
from polyg_core.config import Settings, StorageSettings
from polyg_core.memory import Memory
from polyg_core.storage.embedded import EmbeddedFalkorDB
from polyg_core.storage.store import FalkorStore
from polyg_core.testing.hashing import HashEmbedder
from polyg_core.testing.scripts import load_script
from polyg_server.app import create_server
from polyg_server.context import ServerContext

OVERHEAD = load_script(Path(__file__).with_name("bench_mcp_overhead.py"))
GRAPH = OVERHEAD.GRAPH
ENTITY = OVERHEAD.ENTITY


class _Meter:
    """Main-thread CPU inside a wrapped callable, summed until reset."""

    def __init__(self) -> None:
        self.ms = 0.0

    def wrap_async(self, fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def wrapped(*args: Any, **kwargs: Any) -> Any:
            t = time.thread_time()
            try:
                return await fn(*args, **kwargs)
            finally:
                self.ms += (time.thread_time() - t) * 1000

        return wrapped

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            t = time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.ms += (time.thread_time() - t) * 1000

        return wrapped


async def seed(store: FalkorStore) -> None:
    """The entities, relations and causal chain `bench_mcp_overhead.py` measures over stdio."""
    await OVERHEAD.seed(
        Memory(store=store, embedder=HashEmbedder("bench-hash-384"), namespace=GRAPH)
    )


async def measure(n: int, data_dir: Path) -> None:
    EmbeddedFalkorDB(data_dir).ensure_running()
    store = await FalkorStore(StorageSettings(data_dir=data_dir)).connect()
    try:
        await seed(store)
        ctx = ServerContext(
            store=store,
            settings=Settings(),
            embedder=HashEmbedder("bench-hash-384"),
            default_namespace=GRAPH,
        )
        polyg = create_server(ctx, profiles=["memory"])
        echo = MCPServer("echo")

        @echo.tool()
        def echo_tool(text: str) -> str:  # pyright: ignore[reportUnusedFunction]
            """Return the text."""
            return text

        query, redis_io, reply = _Meter(), _Meter(), _Meter()
        db = await store._ensure_db()  # pyright: ignore[reportPrivateUsage]
        connection = db.connection
        connection.execute_command = redis_io.wrap_async(connection.execute_command)  # type: ignore[method-assign]
        store_module.read_reply = reply.wrap(store_module.read_reply)  # type: ignore[assignment]
        store.query = query.wrap_async(store.query)  # type: ignore[method-assign]
        cpu: dict[str, list[float]] = {"echo": [], "get_entity": []}
        parts: dict[str, list[float]] = {"redis": [], "reply": [], "query_rest": []}
        sizes: dict[str, int] = {}
        async with Client(polyg) as pc, Client(echo) as ec:  # pyright: ignore[reportArgumentType]
            calls: dict[str, Callable[[], Awaitable[Any]]] = {
                "echo": lambda: ec.call_tool("echo_tool", {"text": ENTITY}),
                "get_entity": lambda: pc.call_tool("get_entity", {"entity": ENTITY}),
            }
            for name, call in calls.items():
                r = await call()
                sizes[name] = len(json.dumps(r.model_dump(mode="json", by_alias=True)))
            for i in range(n + 50):
                for name, call in calls.items():
                    query.ms = redis_io.ms = reply.ms = 0.0
                    t = time.thread_time()
                    result = await call()
                    spent = (time.thread_time() - t) * 1000
                    assert not result.is_error, result.content
                    if i < 50:
                        continue
                    cpu[name].append(spent)
                    if name == "get_entity":
                        parts["redis"].append(redis_io.ms)
                        parts["reply"].append(reply.ms)
                        parts["query_rest"].append(query.ms - redis_io.ms - reply.ms)
        echo_ms, entity_ms = statistics.fmean(cpu["echo"]), statistics.fmean(cpu["get_entity"])
        print(f"n={n} calls each, alternated; main-thread CPU per call, mean (median) in ms")
        print(f"echo (SDK MCPServer)       {echo_ms:.3f} ({statistics.median(cpu['echo']):.3f})")
        print(
            f"get_entity                 {entity_ms:.3f} ({statistics.median(cpu['get_entity']):.3f})"
            f"  = {entity_ms / echo_ms:.2f}x echo"
        )
        for key, label in (
            ("redis", "  FalkorDB round trip, redis-py send/receive"),
            ("reply", "  reading the reply (storage.reply)"),
            ("query_rest", "  rest of FalkorStore.query"),
        ):
            print(f"{label:44s} {statistics.fmean(parts[key]):.3f}")
        rest = entity_ms - sum(statistics.fmean(v) for v in parts.values())
        print(f"{'  everything else (MCP both ways, handler)':44s} {rest:.3f}")
        print(f"difference to echo's call: {entity_ms - echo_ms:.3f} ms")
        print(f"result size (JSON bytes): echo {sizes['echo']}, get_entity {sizes['get_entity']}")
    finally:
        await store.delete_graph(GRAPH)
        await store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--data-dir", type=Path)
    args = parser.parse_args()
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="polyg-call-cpu-"))
    anyio.run(measure, args.n, data_dir)


if __name__ == "__main__":
    main()
