"""Are acknowledged writes in the append-only file when the server is SIGKILLed?

    uv run python scripts/probe_aof_kill.py --runs 12 --fsync everysec --busy-disk

Each run starts the embedded FalkorDB on a fresh data dir, sends 5 writes one at a
time (each acknowledged), reads the AOF's incremental files at once, and SIGKILLs the
server. Under `everysec`, redis does not write its buffer while the previous second's
background fsync is still running (up to 2 s), yet it replies: on a busy disk the
acknowledged writes of that window are only in the server's memory, and a SIGKILL drops
them. Under `always` each write is written and fsynced before its reply. `--busy-disk`
keeps the disk busy meanwhile with a synchronous writer (a `dd ... oflag=dsync` of
temporary data, stopped and removed at the end).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import tempfile
from pathlib import Path

import redis
from polyg_core.storage.embedded import EmbeddedFalkorDB

WRITES = 5


def one_run(fsync: str) -> int:
    """Acknowledged writes found in the AOF right after the last reply, before the kill."""
    with tempfile.TemporaryDirectory(prefix="polyg-aof-probe-") as tmp:
        server = EmbeddedFalkorDB(Path(tmp), appendfsync=fsync, verify_indexes=False)
        client = redis.Redis(unix_socket_path=server.ensure_running())
        try:
            for i in range(WRITES):
                client.execute_command("GRAPH.QUERY", "probe", f"CREATE (:W {{n: 'write {i};'}})")
            aof = Path(tmp) / "falkordb" / "appendonlydir"
            held = b"".join(p.read_bytes() for p in aof.glob("*.incr.aof"))
        finally:
            client.close()
            proc = server._process  # pyright: ignore[reportPrivateUsage]
            if proc is not None:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        return sum(f"write {i};".encode() in held for i in range(WRITES))


def main() -> int:
    p = argparse.ArgumentParser(description="Acknowledged writes vs a SIGKILL of the server.")
    p.add_argument("--runs", type=int, default=12)
    p.add_argument("--fsync", choices=["everysec", "always"], default="everysec")
    p.add_argument("--busy-disk", action="store_true", help="keep the disk busy meanwhile")
    args = p.parse_args()
    busy: subprocess.Popen[bytes] | None = None
    ballast = Path(tempfile.gettempdir()) / f"polyg-aof-probe-ballast-{os.getpid()}"
    if args.busy_disk:
        busy = subprocess.Popen(
            ["dd", "if=/dev/zero", f"of={ballast}", "bs=1M", "count=4000", "oflag=dsync"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    short = 0
    try:
        for run in range(args.runs):
            found = one_run(args.fsync)
            short += found < WRITES
            print(f"run {run}: {WRITES} acknowledged, {found} in the file before the kill")
    finally:
        if busy is not None:
            busy.terminate()
            busy.wait(timeout=10)
            ballast.unlink(missing_ok=True)
    print(
        f"{args.fsync}: runs with acknowledged writes missing from the file: {short} of {args.runs}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
