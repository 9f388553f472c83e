"""Fused memory scores come out in an order that does not hang on the string hash seed.

Equal fused scores are common (two memories found by one retriever alone with one score);
the sorts after fusion keep the fused order for them, so a set in between made the ranking
differ from one process to the next.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

_PROGRAM = """
from polyg_core.recall.memories import _fuse
lexical = {f"memory-{i:02d}": 0.5 for i in range(12)}
dense = {f"memory-{i:02d}": 0.25 for i in range(6, 18)}
fused = _fuse({"lexical": lexical, "dense": dense}, {"lexical": 1.0, "dense": 1.0})
print(",".join(fused))
"""


def _order(seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    done = subprocess.run(
        [sys.executable, "-c", _PROGRAM], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize("seed", ["1", "2", "3"])
def test_fused_order_is_the_same_under_every_hash_seed(seed: str) -> None:
    first = _order("0")
    assert first.split(",")[:12] == [f"memory-{i:02d}" for i in range(12)]
    assert _order(seed) == first
