"""Waiting on processes in tests: whether a FalkorDB server process is alive, and a bounded
poll."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["server_alive", "wait_until"]


def server_alive(pid: int) -> bool:
    """Whether `pid` is a running FalkorDB (redis-server) process."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return b"redis-server" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def wait_until(check: Callable[[], bool], timeout_s: float = 60.0) -> bool:
    """Poll `check` every 50 ms until it holds (True) or `timeout_s` passes (False)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return False
