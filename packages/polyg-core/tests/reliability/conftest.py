"""A FalkorDB the test can kill and bring back, and a store that does not restart it itself.

The store reaches the server through `FALKORDB_URL`-style settings (a unix socket
URL), as with an external server: when the server dies the store reports
`StorageUnavailable` until the test restarts it, so each test controls how long an
outage lasts. The session's shared server is never touched.
"""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from polyg_core.config import StorageSettings
from polyg_core.storage.embedded import EmbeddedFalkorDB
from polyg_core.storage.store import FalkorStore


@dataclass
class Outage:
    """An embedded FalkorDB in its own data dir that can be SIGKILLed and restarted."""

    server: EmbeddedFalkorDB
    kills: int = 0

    @property
    def url(self) -> str:
        return f"unix://{self.server.socket_path}"

    def settings(self, **update: object) -> StorageSettings:
        base = StorageSettings(url=self.url, max_retries=1, query_timeout_ms=30_000)
        return base.model_copy(update=update)

    def kill(self) -> None:
        """SIGKILL the server (no AOF flush, no clean shutdown) and reap it."""
        proc = self.server.process
        assert proc is not None, "the test did not start this server"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        self.kills += 1

    def restart(self) -> None:
        """Start the server again on the same data dir (it replays the append-only file)."""
        self.server.ensure_running()

    async def restart_after(self, seconds: float) -> None:
        await anyio.sleep(seconds)
        await anyio.to_thread.run_sync(self.restart)


@pytest.fixture
def outage(tmp_path: Path) -> Iterator[Outage]:
    server = EmbeddedFalkorDB(tmp_path / "faults")
    server.ensure_running()
    yield Outage(server)
    server.stop()


@pytest.fixture
async def fault_store(outage: Outage) -> AsyncIterator[FalkorStore]:
    s = FalkorStore(outage.settings())
    await s.connect()
    yield s
    await s.close()
