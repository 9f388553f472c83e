"""Queued remember through the MCP server: throughput, call latency, start-up and idle cost.

    uv run python scripts/bench_jobs_mcp.py [--jobs 100] [--idle-s 10] [--http]

On a private embedded FalkorDB, with the rule-based extractor and the server's
in-process job worker at its default concurrency (POLYG_JOB_WORKERS' default):

- throughput: `remember` with wait=false for every note through a real MCP client
  (in memory, or Streamable HTTP on 127.0.0.1 with --http), from the first call to
  the last job done (list_jobs polled every 0.2 s);
- the latency of one queued remember call (median and p95);
- what the worker adds to a session's start and stop (workers=4 against workers=0);
- the Redis commands an idle server with a worker sends per second.

A warm-up run (not reported) loads the embedding model and the first graph.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from polyg_core.config import Settings, StorageSettings
from polyg_core.jobs import JobQueue
from polyg_core.providers.embeddings.local import MiniLMEmbedder
from polyg_core.storage.store import FalkorStore
from polyg_server.app import create_server
from polyg_server.context import JobOptions, ServerContext


def note(i: int) -> str:
    return (
        f"On 2026-01-{1 + i % 28:02d} deploy d{i} of service svc{i} failed "
        f"because config key K{i} was missing."
    )


@asynccontextmanager
async def session(ctx: ServerContext, http: bool) -> AsyncGenerator[Client]:
    if not http:
        async with Client(create_server(ctx)) as client:
            yield client
        return
    import httpx2
    from mcp.client.streamable_http import streamable_http_client
    from polyg_server.http import create_http_app
    from polyg_server.testing import serving

    async with (
        serving(create_http_app(create_server(ctx), ctx)) as url,
        httpx2.AsyncClient(timeout=30) as http_client,
        Client(streamable_http_client(f"{url}/mcp", http_client=http_client)) as client,
    ):
        yield client


def context(
    store: FalkorStore, settings: Settings, embedder: Any, graph: str, workers: int
) -> ServerContext:
    return ServerContext(
        store=store,
        settings=settings.model_copy(
            update={"storage": store.settings.model_copy(update={"graph": graph})}
        ),
        embedder=embedder,
        jobs=JobOptions(workers=workers, queue_name=f"bench_{graph}"),
    )


async def cleanup(store: FalkorStore, ctx: ServerContext) -> None:
    queue = await JobQueue.open(store, name=ctx.jobs.queue_name)
    keys = [k async for k in queue.redis.scan_iter(match=f"saq:*{ctx.jobs.queue_name}*")]
    if keys:
        await queue.redis.delete(*keys)
    await queue.close()
    await store.delete_graph(ctx.default_namespace)


async def throughput(ctx: ServerContext, n: int, http: bool) -> tuple[float, list[float], Any]:
    call_ms: list[float] = []
    async with session(ctx, http) as client:
        started = time.perf_counter()
        for i in range(n):
            t0 = time.perf_counter()
            res = await client.call_tool("remember", {"content": note(i), "wait": False})
            call_ms.append((time.perf_counter() - t0) * 1000)
            assert not res.is_error, res
        with anyio.fail_after(60 + n):
            while True:
                res = await client.call_tool("list_jobs", {"limit": 1})
                stats = (res.structured_content or {})["stats"]
                if stats["queued"] == 0 and stats["running"] == 0:
                    break
                await anyio.sleep(0.2)
        elapsed = time.perf_counter() - started
    return n / elapsed, call_ms, stats


async def start_stop_ms(ctx: ServerContext, rounds: int) -> float:
    times: list[float] = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        async with Client(create_server(ctx)) as client:
            await client.list_tools()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


async def redis_commands(queue: JobQueue) -> int:
    info: dict[str, Any] = await queue.redis.info("stats")
    return int(info["total_commands_processed"])


async def command_counts(queue: JobQueue) -> dict[str, int]:
    info: dict[str, Any] = await queue.redis.info("commandstats")
    return {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in info.items()}


async def main(args: argparse.Namespace) -> None:
    data = Path(tempfile.mkdtemp(prefix="polyg-bench-jobs-mcp-"))
    store = await FalkorStore(StorageSettings(data_dir=data)).connect()
    embedder = MiniLMEmbedder()
    settings = Settings(storage=store.settings, log_level="WARNING", tools="memory,list_jobs")
    workers = JobOptions.from_settings(settings).workers
    transport = "Streamable HTTP" if args.http else "in-memory"
    try:
        warm = context(store, settings, embedder, "warmup", workers)
        await throughput(warm, 10, args.http)
        await cleanup(store, warm)

        ctx = context(store, settings, embedder, f"b{uuid.uuid4().hex[:8]}", workers)
        rate, call_ms, stats = await throughput(ctx, args.jobs, args.http)
        await cleanup(store, ctx)
        call_ms.sort()
        print(f"queued remember over MCP ({transport} client), rule-based, {workers} workers")
        print(
            f"  {args.jobs} jobs: {rate:6.2f} jobs/s  done={stats['done']} failed={stats['failed']}"
        )
        print(
            f"  one queued remember call: median {statistics.median(call_ms):.1f} ms, "
            f"p95 {call_ms[int(len(call_ms) * 0.95) - 1]:.1f} ms"
        )

        idle = context(store, settings, embedder, "idle", workers)
        none = context(store, settings, embedder, "idle", 0)
        print(
            f"  session start+stop: {await start_stop_ms(idle, 5):.0f} ms with the worker, "
            f"{await start_stop_ms(none, 5):.0f} ms without (median of 5)"
        )
        probe = await JobQueue.open(store, name="probe")
        async with Client(create_server(idle)):
            await anyio.sleep(2)  # past the start-up calls
            before = await redis_commands(probe)
            counts = await command_counts(probe)
            await anyio.sleep(args.idle_s)
            with_worker = (await redis_commands(probe) - before - 2) / args.idle_s
            after = await command_counts(probe)
        busiest = sorted(((after[k] - counts.get(k, 0), k) for k in after), reverse=True)[:6]
        before = await redis_commands(probe)
        await anyio.sleep(args.idle_s)
        baseline = (await redis_commands(probe) - before - 2) / args.idle_s
        await probe.close()
        await cleanup(store, idle)
        print(
            f"  idle Redis commands/s: {with_worker:.1f} with an idle worker, "
            f"{baseline:.1f} without (over {args.idle_s:g} s)"
        )
        print("  idle worker's commands:", ", ".join(f"{k} {n}" for n, k in busiest if n))
    finally:
        await store.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=100)
    parser.add_argument("--idle-s", type=float, default=10.0)
    parser.add_argument("--http", action="store_true")
    anyio.run(main, parser.parse_args())
