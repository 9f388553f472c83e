"""An embedded FalkorDB that a test stops, kills and starts again on the same data dir.

A server that lives for the whole test hides replay bugs: what users keep across
sessions is written, the server is stopped (cleanly, or with SIGKILL), started
again on the same files, and only then read and searched.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from polyg_core.config import StorageSettings
from polyg_core.storage.embedded import EmbeddedFalkorDB
from polyg_core.storage.store import FalkorStore


@dataclass
class RestartableFalkorDB:
    """One embedded server per test, in its own data dir, under the test's control.

    Args:
        data_dir: where the server keeps its files.
        verify_indexes: passed to each start (False reproduces the unchecked state).
    """

    data_dir: Path
    verify_indexes: bool = True
    server: EmbeddedFalkorDB | None = field(default=None, init=False)
    starts: int = field(default=0, init=False)

    @property
    def socket_url(self) -> str:
        """The server as an external one (`FALKORDB_URL`): the store neither starts it nor
        compacts its append-only file."""
        return f"unix://{EmbeddedFalkorDB(self.data_dir).socket_path}"

    def settings(self, **update: Any) -> StorageSettings:
        """Embedded-mode settings on this data dir (the store reuses the running server)."""
        base = StorageSettings(
            data_dir=self.data_dir, query_timeout_ms=30_000, max_retries=3, embedded_linger_s=0
        )
        return base.model_copy(update=update)

    def start(self) -> EmbeddedFalkorDB:
        """Start the server (replaying its append-only file, if it has one)."""
        self.server = EmbeddedFalkorDB(self.data_dir, verify_indexes=self.verify_indexes)
        self.server.ensure_running()
        self.starts += 1
        return self.server

    def stop(self) -> None:
        """Stop it the way a session ends: SIGTERM after compacting the append-only file."""
        if self.server is not None:
            # Stores the test still holds are users too; the test decides when it stops.
            self.server.stop(force=True)

    def kill(self) -> None:
        """SIGKILL it (no compaction, no shutdown) and reap it."""
        server = self.server
        if server is None or server._process is None:  # pyright: ignore[reportPrivateUsage]
            raise RuntimeError("the test did not start this server")
        proc = server._process  # pyright: ignore[reportPrivateUsage]
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        server.owner = False
        # The test goes on as a process that no longer uses the dead server: a later
        # store in this process is then the last user and stops the server it starts.
        with contextlib.suppress(OSError):
            server._user_file.unlink()  # pyright: ignore[reportPrivateUsage]

    def restart(self, *, kill: bool = False) -> EmbeddedFalkorDB:
        """Stop (or kill) and start again on the same data dir."""
        if kill:
            self.kill()
        else:
            self.stop()
        return self.start()

    @contextlib.asynccontextmanager
    async def store(self, **update: Any) -> AsyncGenerator[FalkorStore]:
        """A connected store on this server for the duration of the block."""
        s = FalkorStore(self.settings(**update))
        await s.connect()
        try:
            yield s
        finally:
            await s.close()
