"""polyg's MCP server: memory, MAGMA and graph-thinking tools over stdio and Streamable HTTP."""

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
    parse_profiles,
    register_tool,
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
    "parse_profiles",
    "register_tool",
]
