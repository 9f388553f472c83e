"""scripts/test: a failing test still gets the coverage report, and fails the run."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("outcome", ["fails", "passes"])
def test_the_test_script_prints_coverage_and_keeps_the_test_status(
    tmp_path: Path, outcome: str
) -> None:
    year = 2025 if outcome == "fails" else 2026
    test_file = tmp_path / "test_one.py"
    test_file.write_text(
        "from polyg_shared.timeutil import parse_timestamp\n\n\n"
        "def test_one() -> None:\n"
        f"    assert parse_timestamp('2026-01-01').year == {year}\n"
    )
    # Its own coverage data files: a nested run must not touch the outer run's.
    env = {**os.environ, "COVERAGE_FILE": str(tmp_path / ".coverage")}
    env.pop("COVERAGE_PROCESS_START", None)
    done = subprocess.run(
        [str(ROOT / "scripts" / "test"), str(test_file), "-p", "no:cacheprovider"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = done.stdout
    for pkg in ("shared", "core", "server", "cli"):
        assert f"== polyg-{pkg} coverage" in out, out[-2000:]
    assert "TOTAL" in out
    assert done.returncode != 0  # one test covers far less than 80% (and may fail)
    if outcome == "fails":
        assert "1 failed" in out
        assert "== tests failed (pytest exit status 1)" in out
        assert done.returncode == 1
    else:
        assert "1 passed" in out and "tests failed" not in out
