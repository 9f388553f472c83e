"""Start `polyg-mcp --http` as a child process on 127.0.0.1 for the benchmarks."""

from __future__ import annotations

import contextlib
import logging
import socket
import subprocess
import sys
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass

import anyio
from anyio.abc import Process

logger = logging.getLogger(__name__)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class RunningServer:
    """A started HTTP server: its MCP endpoint and its process."""

    url: str
    process: Process

    @property
    def pid(self) -> int:
        return self.process.pid


@contextlib.asynccontextmanager
async def http_server(
    env: Mapping[str, str], *, startup_s: float = 120.0
) -> AsyncGenerator[RunningServer]:
    """Run `python -m polyg_server.main --http` on a free loopback port until the block ends.

    Args:
        env: the child's whole environment (FalkorDB location, graph, no LLM_MODEL...).
        startup_s: how long to wait for the port to accept connections.

    Raises:
        RuntimeError: the server exited or did not listen within `startup_s`.
    """
    port = free_port()
    proc = await anyio.open_process(
        [sys.executable, "-m", "polyg_server.main", "--http", "--port", str(port)],
        env={**env, "POLYG_LOG_LEVEL": "WARNING"},
        stdout=subprocess.DEVNULL,
        stderr=None,
    )
    try:
        with anyio.fail_after(startup_s):
            while True:
                with (
                    contextlib.suppress(OSError),
                    socket.create_connection(("127.0.0.1", port), 0.2),
                ):
                    break
                if proc.returncode is not None:
                    raise RuntimeError(
                        f"polyg-mcp --http exited with {proc.returncode}; see its stderr above"
                    )
                await anyio.sleep(0.2)
        yield RunningServer(f"http://127.0.0.1:{port}/mcp", proc)
    finally:
        proc.terminate()
        with anyio.move_on_after(20):
            await proc.wait()
        if proc.returncode is None:
            proc.kill()
