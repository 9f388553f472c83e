"""What a session that follows the last one pays for the embedded FalkorDB: a new start
against adopting a server left lingering (`POLYG_EMBEDDED_LINGER_S`), and the reaper's
memory while it waits.

Each round, on one data dir: a user with no linger starts the server (timed), leaves
with a linger (the server stays, a reaper waits), a second user adopts it (timed) and
leaves with no linger (the server stops). On an empty data dir the start is the floor;
on a large one it includes loading the data and rebuilding the vector indexes
(docs/benchmarks.md section 18). Pass `--data-dir` to time starts on an existing one.

Usage:
    uv run python scripts/bench_linger.py [--rounds 5] [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from polyg_core.storage.embedded import EmbeddedFalkorDB


def reaper_rss_mb(data_dir: Path) -> float | None:
    """RSS of the reaper waiting on `data_dir` (None if none is found)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
            reaper = any(a.endswith(b"storage/linger.py") for a in args)
            if not reaper or str(data_dir).encode() not in args:
                continue
            status = (entry / "status").read_text()
            for line in status.splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            continue
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--data-dir", type=Path, default=None)
    args = parser.parse_args()
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="polyg-linger-"))
    starts: list[float] = []
    adopts: list[float] = []
    rss: list[float] = []
    for _ in range(args.rounds):
        first = EmbeddedFalkorDB(data_dir, linger_s=0)
        t0 = time.perf_counter()
        first.ensure_running()
        starts.append((time.perf_counter() - t0) * 1000)
        first.linger_s = 60
        first.stop()  # the last user leaves: the server lingers
        time.sleep(1.0)  # the reaper has imported what it needs and waits
        mb = reaper_rss_mb(data_dir)
        if mb is not None:
            rss.append(mb)
        second = EmbeddedFalkorDB(data_dir, linger_s=0)
        t0 = time.perf_counter()
        second.ensure_running()
        adopts.append((time.perf_counter() - t0) * 1000)
        assert not second.owner, "the second user started a server instead of adopting it"
        second.stop()  # no linger: stops it now
    print(
        json.dumps(
            {
                "data_dir": str(data_dir),
                "start_ms": [round(x, 1) for x in starts],
                "adopt_ms": [round(x, 1) for x in adopts],
                "median_start_ms": round(statistics.median(starts), 1),
                "median_adopt_ms": round(statistics.median(adopts), 1),
                "reaper_rss_mb": [round(x, 1) for x in rss],
            }
        )
    )


if __name__ == "__main__":
    main()
