"""Test support: serve an ASGI app on a free loopback port for the length of a block, and
the request a test client opens an MCP session with."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any, Final

import anyio
import uvicorn
from starlette.types import ASGIApp

from polyg_server.http_server import HttpLimits, server_config

MCP_HEADERS: Final = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
}
"""The headers of a Streamable HTTP request to /mcp."""

INITIALIZE: Final[dict[str, Any]] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}
"""The JSON-RPC request that opens an MCP session (over HTTP or as the first stdio line)."""


@asynccontextmanager
async def serving(app: ASGIApp, limits: HttpLimits | None = None) -> AsyncGenerator[str]:
    """Run the app on 127.0.0.1 (a free port), configured as `polyg-mcp --http` runs it
    (`limits`: its time and connection limits); yield its base URL."""
    config = server_config(app, host="127.0.0.1", port=0, limits=limits, graceful_shutdown_s=2)
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve)
        with anyio.fail_after(10):
            while not server.started:  # noqa: ASYNC110 - uvicorn exposes no start event
                await anyio.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            server.should_exit = True
