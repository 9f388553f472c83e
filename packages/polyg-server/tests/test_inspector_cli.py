"""The MCP Inspector CLI drives `polyg-mcp` over stdio with seed 000's argument names.

The Inspector (npm `@modelcontextprotocol/inspector`, pinned in tests/inspector/) is
the client the specification's users reach for first. Each call starts `polyg-mcp`
as the Inspector does and uses exactly the names of seed 000's "MCP Tools" section.
Skipped, with the reason, when node/npm are missing or the npm registry cannot be
reached to install it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from polyg_core.storage.embedded import EmbeddedFalkorDB

pytestmark = pytest.mark.anyio

INSPECTOR_DIR = Path(__file__).parent / "inspector"
INSPECTOR = INSPECTOR_DIR / "node_modules" / ".bin" / "mcp-inspector"


def _inspector() -> Path:
    if INSPECTOR.exists():
        return INSPECTOR
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        pytest.skip("node and npm are needed for the MCP Inspector CLI")
    installed = subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=INSPECTOR_DIR,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if installed.returncode != 0 or not INSPECTOR.exists():
        pytest.skip(f"npm could not install the MCP Inspector: {installed.stderr.strip()[-300:]}")
    return INSPECTOR


def _polyg_mcp() -> str:
    script = Path(sys.executable).parent / "polyg-mcp"
    assert script.exists(), "polyg-mcp is not installed in this environment"
    return str(script)


class Inspector:
    """Runs one Inspector CLI call against a fresh `polyg-mcp` process."""

    def __init__(self, binary: Path, env: dict[str, str]) -> None:
        self.binary = binary
        self.env = env

    def run(self, method: str, tool: str | None = None, **args: Any) -> dict[str, Any]:
        command = [str(self.binary), "--cli"]
        for key, value in self.env.items():
            command += ["-e", f"{key}={value}"]
        command += [_polyg_mcp(), "--method", method]
        if tool is not None:
            command += ["--tool-name", tool]
        for key, value in args.items():
            command += ["--tool-arg", f"{key.removesuffix('_')}={value}"]
        done = subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)
        assert done.returncode == 0, f"{tool}: {done.stdout[-1000:]}\n{done.stderr[-2000:]}"
        return json.loads(done.stdout)

    def call(self, tool: str, **args: Any) -> dict[str, Any]:
        result = self.run("tools/call", tool, **args)
        assert result.get("isError") is False, (tool, args, result.get("content"))
        return result["structuredContent"]


@pytest.mark.slow
async def test_the_inspector_cli_calls_the_spec_tools_with_the_spec_names(
    falkordb_server: EmbeddedFalkorDB, namespace: str
) -> None:
    inspector = Inspector(
        _inspector(),
        {
            "POLYG_DATA_DIR": str(falkordb_server.data_dir),
            "FALKORDB_GRAPH": namespace,
            "POLYG_LOG_LEVEL": "WARNING",
            "POLYG_JOB_WORKERS": "0",
            "POLYG_TOOLS": "memory,graph,search_semantic,clear_graph,export_graph",
        },
    )
    tools = {t["name"] for t in inspector.run("tools/list")["tools"]}
    assert {"search_semantic", "get_entity", "recall", "query_timeline"} <= tools

    inspector.call("add_entity", name="Alice", entity_type="Person")
    inspector.call("add_entity", name="auth-service", entity_type="Service")
    inspector.call("link_entities", source="Alice", target="auth-service", relationship="owns")
    entity = inspector.call("get_entity", name="auth-service", include_relationships="true")
    assert [r["relationship_type"] for r in entity["relationships"]] == ["owns"]
    inspector.call("add_event", description="deploy v2.3.1", occurred_at="2026-01-07T14:32:00Z")
    timeline = inspector.call("query_timeline", from_="2026-01-07", to="2026-01-08")
    assert [e["description"] for e in timeline["events"]] == ["deploy v2.3.1"]
    inspector.call("add_causal_link", cause="AUTH_SECRET missing", effect="auth crash")
    chain = inspector.call("get_causal_chain", event="auth crash", direction="upstream")
    assert chain["root"]["description"] == "auth crash"
    why = inspector.call("explain_why", event="auth crash")
    assert why["root_causes"] == ["AUTH_SECRET missing"]
    found = inspector.call("search_semantic", query="auth crash", limit="3")
    assert found["hits"]
    answer = inspector.call("recall", query="Why did auth crash?", max_results="5")
    assert answer["answer"]
    exported = inspector.call("export_graph", format="json")
    assert json.loads(exported["text"])
    cleared = inspector.call("clear_graph", graph="causal", confirm="true")
    assert cleared["which"] == "causal"
