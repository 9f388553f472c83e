"""polyg's MCP server: memory, retrieval-step and scratch-graph tools over stdio and Streamable HTTP."""

from polyg_server.app import create_server
from polyg_server.context import ServerContext
from polyg_server.http import HttpOptions, create_http_app
from polyg_server.registry import (
    DESTRUCTIVE,
    READ_ONLY,
    WRITE,
    WRITE_IDEMPOTENT,
    PolygServer,
    ToolInput,
    ToolSpec,
    list_tool_specs,
    register_tool,
    select_tools,
)

__all__ = [
    "DESTRUCTIVE",
    "READ_ONLY",
    "WRITE",
    "WRITE_IDEMPOTENT",
    "HttpOptions",
    "PolygServer",
    "ServerContext",
    "ToolInput",
    "ToolSpec",
    "create_http_app",
    "create_server",
    "list_tool_specs",
    "register_tool",
    "select_tools",
]
