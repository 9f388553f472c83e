"""Build the wheels and start `polyg-mcp` from them with uvx, as a user would, then talk MCP to it.

    uv run python scripts/check_uvx.py

No index upload: uvx installs polyg's packages from the freshly built wheels
(`--find-links`) and their dependencies from PyPI; nothing pulls torch (the
embedding model's files come in polyg-minilm, which depends on nothing).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parent.parent


async def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        wheels = Path(tmp) / "wheels"
        await anyio.run_process(
            ["uv", "build", "--all-packages", "-q", "-o", str(wheels)], cwd=ROOT
        )
        params = StdioServerParameters(
            command="uvx",
            args=[
                "--find-links",
                str(wheels),
                "--from",
                "polyg-mcp",
                "polyg-mcp",
            ],
            env={**os.environ, "POLYG_DATA_DIR": str(Path(tmp) / "data"), "POLYG_TOOLS": "all"},
        )
        started = time.perf_counter()
        with anyio.fail_after(600):
            async with Client(params) as client:
                ready = time.perf_counter() - started
                tools = (await client.list_tools()).tools
                stats = await client.call_tool("get_statistics", {})
                name = client.server_info.name if client.server_info else "?"
        print(f"server: {name}; ready in {ready:.1f}s")
        print(f"tools/list: {len(tools)} tools")
        print(f"get_statistics: error={stats.is_error} content={stats.structured_content}")
        return 1 if stats.is_error or not tools else 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
