"""Percentiles and timing loops shared by the benchmark runners."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def percentile(samples: list[float], q: float) -> float:
    """The q-quantile (0..1) of `samples` by the nearest-rank method (0.0 when empty)."""
    if not samples:
        return 0.0
    ordered = sorted(samples)
    rank = max(1, math.ceil(q * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


@dataclass
class Timing:
    """Latency samples of one operation, in milliseconds."""

    name: str
    samples: list[float]

    @property
    def p50(self) -> float:
        return percentile(self.samples, 0.50)

    @property
    def p95(self) -> float:
        return percentile(self.samples, 0.95)

    @property
    def p99(self) -> float:
        return percentile(self.samples, 0.99)

    def row(self) -> dict[str, Any]:
        """The summary as a plain dict (name, n, p50, p95, p99 in ms)."""
        return {
            "name": self.name,
            "n": len(self.samples),
            "p50": round(self.p50, 2),
            "p95": round(self.p95, 2),
            "p99": round(self.p99, 2),
        }


async def timed(
    name: str, fn: Callable[[int], Awaitable[Any]], iterations: int, warmup: int = 5
) -> Timing:
    """Call `fn(i)` `warmup` times untimed, then `iterations` times timed."""
    for i in range(warmup):
        await fn(i)
    samples: list[float] = []
    for i in range(iterations):
        t0 = time.perf_counter()
        await fn(i)
        samples.append((time.perf_counter() - t0) * 1000)
    return Timing(name, samples)


def rss_bytes(pid: int | None = None) -> int | None:
    """Resident set size of a process (this one by default) from /proc, or None."""
    path = Path(f"/proc/{pid or os.getpid()}/status")
    try:
        for line in path.read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None
