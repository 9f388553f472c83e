"""The polyg-mcp application: `polyg-mcp` starts the MCP server (stdio by default)."""

from polyg_server.main import main

__all__ = ["main"]
