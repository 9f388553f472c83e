"""`polyg bench` where the unpublished benchmark package is absent (an install from PyPI)."""

from __future__ import annotations

import subprocess
import sys

# sys.modules[name] = None is Python's own way to make a module unimportable.
WITHOUT_BENCH = (
    "import sys; sys.modules['polyg_bench'] = None; "
    "from polyg_cli.app import main; sys.argv = ['polyg', 'bench', 'scale', '--size', '10']; "
    "main()"
)


def test_bench_without_the_bench_package_says_it_runs_from_a_clone() -> None:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_BENCH],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "runs from a clone of the polyg repository" in done.stderr
    assert "Traceback" not in done.stderr


def test_bench_help_lists_the_benchmarks_from_the_repository() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "from polyg_cli.app import main; main()", "bench", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "retrieval" in done.stdout and "scale" in done.stdout
