"""The server's tools, one module per group; each module exposes `TOOLS`."""

from __future__ import annotations

from typing import Any

from polyg_server.registry import ToolSpec
from polyg_server.tools import admin, engine, jobs, magma, memory, probabilistic, reads


def builtin_tool_specs() -> list[ToolSpec[Any, Any]]:
    """Every tool polyg ships, before profile filtering (add a module's `TOOLS` here)."""
    return [
        *memory.TOOLS,
        *reads.TOOLS,
        *admin.TOOLS,
        *magma.TOOLS,
        *engine.TOOLS,
        *probabilistic.TOOLS,
        *jobs.TOOLS,
    ]


__all__ = ["builtin_tool_specs"]
