"""How long `polyg --help` takes: process start to exit, plain wall-clock timing.

Runs the installed console script (the virtual environment's `polyg`, not `uv run`, whose
own start would be counted too) `--rounds` times after one warm-up run, and prints the
median, the fastest and the slowest run, the CPU time per run (user + system: on a
shared machine it moves less with the load than the wall clock), and how many modules
the process imported.

Usage:
    uv run python scripts/bench_cli_help.py [--rounds 20] [--args "--help"]
"""

from __future__ import annotations

import argparse
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _polyg() -> str:
    beside = Path(sys.executable).with_name("polyg")
    found = str(beside) if beside.exists() else shutil.which("polyg")
    if found is None:
        raise SystemExit("no `polyg` script found: run `uv sync --all-packages` first")
    return found


def _imported_modules(polyg: str, args: list[str]) -> int:
    """How many modules the command imports, from `python -X importtime`."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", polyg, *args],
        capture_output=True,
        text=True,
        check=False,
    )
    return sum(1 for line in done.stderr.splitlines() if line.startswith("import time:")) - 1


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Time `polyg --help` (or other arguments).")
    parser.add_argument("--rounds", type=int, default=20, help="timed runs (default 20)")
    parser.add_argument("--args", default="--help", help="arguments to polyg (default --help)")
    opts = parser.parse_args(argv)
    if opts.rounds < 1:
        parser.error("--rounds must be at least 1")
    polyg = _polyg()
    args = shlex.split(opts.args)
    subprocess.run([polyg, *args], capture_output=True, check=True)
    times: list[float] = []
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    for _ in range(opts.rounds):
        start = time.perf_counter()
        subprocess.run([polyg, *args], capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (
        cpu_after.ru_utime - cpu_before.ru_utime + cpu_after.ru_stime - cpu_before.ru_stime
    ) / opts.rounds
    load = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
    print(f"polyg {opts.args}  ({polyg}, {opts.rounds} runs after one warm-up, load {load})")
    print(
        f"median {statistics.median(times):.3f} s   fastest {min(times):.3f} s   "
        f"slowest {max(times):.3f} s   CPU per run {cpu:.3f} s   "
        f"modules imported {_imported_modules(polyg, args)}"
    )


if __name__ == "__main__":
    main()
