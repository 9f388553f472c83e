"""Test support: serve an ASGI app on a free loopback port for the length of a block, the
request a test client opens an MCP session with, and reading tool results."""

from __future__ import annotations

import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Final

import anyio
import uvicorn
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import CallToolResult, TextContent
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


def text_of(result: CallToolResult) -> str:
    """The text of a tool result's first content block (a tool error's message)."""
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def data_of(result: CallToolResult) -> dict[str, Any]:
    """The structured result of a tool call; a tool error fails with its message."""
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    return result.structured_content


async def call(
    client: Client, tool: str, args: dict[str, Any], timeout_s: float = 120
) -> dict[str, Any]:
    """Call a tool (within `timeout_s`) and return its structured result (`data_of`)."""
    with anyio.fail_after(timeout_s):
        result = await client.call_tool(tool, args)
    return data_of(result)


def polyg_mcp_command() -> list[str]:
    """The command that starts the `polyg-mcp` server of this environment (its script,
    else the module)."""
    script = Path(sys.executable).parent / "polyg-mcp"
    return [str(script)] if script.exists() else [sys.executable, "-m", "polyg_server.main"]


def stdio_server(data_dir: Path, namespace: str, **env: str) -> StdioServerParameters:
    """How a client starts `polyg-mcp` over stdio as a user runs it: on the embedded
    FalkorDB in `data_dir`, `namespace` its default graph, `env` on top (warnings only
    unless `POLYG_LOG_LEVEL` is given)."""
    command, *args = polyg_mcp_command()
    return StdioServerParameters(
        command=command,
        args=args,
        env={
            "POLYG_DATA_DIR": str(data_dir),
            "FALKORDB_GRAPH": namespace,
            "POLYG_LOG_LEVEL": "WARNING",
            **env,
        },
    )
