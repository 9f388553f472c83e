"""examples/library/remember_recall.py runs against the real store and answers with the chain."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from polyg_core.memory import Memory
from polyg_core.testing.scripts import load_script

pytestmark = pytest.mark.anyio

EXAMPLE = Path(__file__).resolve().parents[4] / "examples" / "library" / "remember_recall.py"


def _load() -> Any:
    return load_script(EXAMPLE)


async def test_the_library_example_remembers_and_explains_the_failure(
    memory: Memory, namespace: str
) -> None:
    report: str = await _load().run(memory, graph=namespace)
    assert report.count("remembered:") == 3
    chain = [line.strip() for line in report.splitlines() if "(confidence " in line]
    assert len(chain) == 2, report
    assert chain[0].startswith("deploy of deploy-v2.3.1 -> missing AUTH_SECRET"), report
    assert "auth-service crashed" in chain[1], report
    stats = await memory.statistics(namespace)
    assert stats.graphs["causal"].nodes >= 2
    assert stats.cross_links.get("X_INVOLVES", 0) >= 1
