"""Throughput of the HTTP server under concurrent MCP clients (Streamable HTTP, 127.0.0.1).

Each cell opens `clients` SDK client sessions (each its own HTTP connection pool),
waits until all are initialised, then lets them call tools back to back until the
cell's request budget or time limit is spent. QPS is completed calls over the wall
time from the start signal to the last completion; an error is a tool result with
`is_error` or an exception. Workloads:

* `direct`: `get_entity` on random generated names;
* `recall`: `recall` on the rule-based path (the server has no LLM configured);
* `mixed`: 80% `get_entity`, 20% `add_entity` (new names; the server embeds them).
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from polyg_bench.stats import percentile

try:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "the load benchmark needs the MCP client: pip install polyg-server (or uv sync)"
    ) from exc

logger = logging.getLogger(__name__)

WORKLOADS = ("direct", "recall", "mixed")


@dataclass
class LoadCell:
    """One (workload, clients) measurement."""

    workload: str
    clients: int
    latencies: list[float] = field(default_factory=lambda: [])
    errors: int = 0
    wall_s: float = 0.0
    first_error: str | None = None

    @property
    def completed(self) -> int:
        return len(self.latencies) + self.errors

    @property
    def qps(self) -> float:
        return self.completed / self.wall_s if self.wall_s else 0.0

    def row(self) -> dict[str, Any]:
        return {
            "workload": self.workload,
            "clients": self.clients,
            "requests": self.completed,
            "qps": round(self.qps, 1),
            "p50": round(percentile(self.latencies, 0.5), 2),
            "p99": round(percentile(self.latencies, 0.99), 2),
            "error_rate": round(self.errors / self.completed, 4) if self.completed else 0.0,
            "wall_s": round(self.wall_s, 2),
            "first_error": self.first_error,
        }


def _call(
    workload: str, rng: random.Random, names: Sequence[str], i: int
) -> tuple[str, dict[str, Any]]:
    if workload == "recall":
        name = rng.choice(names)
        return "recall", {"question": f"What happened to {name}?"}
    if workload == "mixed" and rng.random() < 0.2:
        return "add_entity", {
            "name": f"load entity {i} {rng.getrandbits(32):x}",
            "entity_type": "service",
        }
    return "get_entity", {"entity": rng.choice(names), "limit": 20}


async def run_cell(
    url: str,
    workload: str,
    clients: int,
    names: Sequence[str],
    *,
    max_requests: int,
    max_seconds: float,
    seed: int = 5,
) -> LoadCell:
    """Measure one cell (see module doc); never more than `max_requests` calls."""
    cell = LoadCell(workload, clients)
    budget = [max_requests]
    ready = anyio.Event()
    connected = [0]
    all_connected = anyio.Event()
    deadline = [0.0]
    last_done = [0.0]

    async def worker(w: int) -> None:
        rng = random.Random(seed * 1000 + w)
        async with (
            httpx2.AsyncClient(timeout=120) as http_client,
            Client(streamable_http_client(url, http_client=http_client)) as client,
        ):
            if w == 0:  # one untimed call loads the server's model and caches
                tool, args = _call(workload, rng, names, -1)
                try:
                    await client.call_tool(tool, args)
                except Exception:  # the timed calls will count and report failures
                    logger.info("warm-up call failed", exc_info=True)
            connected[0] += 1
            if connected[0] == clients:
                all_connected.set()
            await ready.wait()
            i = 0
            while budget[0] > 0 and time.perf_counter() < deadline[0]:
                budget[0] -= 1
                tool, args = _call(workload, rng, names, w * 1_000_000 + i)
                i += 1
                t0 = time.perf_counter()
                try:
                    res = await client.call_tool(tool, args)
                    failed = bool(res.is_error)
                    why = str(res.content)[:200] if failed else None
                except Exception as exc:  # a failed call is counted, not raised
                    failed, why = True, f"{type(exc).__name__}: {exc}"[:200]
                if failed:
                    cell.errors += 1
                    cell.first_error = cell.first_error or why
                else:
                    cell.latencies.append((time.perf_counter() - t0) * 1000)
                last_done[0] = time.perf_counter()

    start = 0.0
    async with anyio.create_task_group() as tg:
        for w in range(clients):
            tg.start_soon(worker, w)
        with anyio.fail_after(300):
            await all_connected.wait()
        start = time.perf_counter()
        deadline[0] = start + max_seconds
        ready.set()
    cell.wall_s = max(0.0, last_done[0] - start)
    logger.info("%s x%d: %s", workload, clients, cell.row())
    return cell
