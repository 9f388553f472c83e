"""Every code block of README.md and the package READMEs runs, as a reader would run it.

- `python` blocks run as scripts in a fresh directory (embedded FalkorDB under a
  temporary POLYG_DATA_DIR).
- `bash`/`sh` blocks run line by line from the repository root with bash; the one
  exception is `bash scripts/test`, the suite this test is part of.
- `json` blocks holding an `mcpServers` config start each server exactly as written
  (with `/path/to/polyg` standing for this clone) and talk MCP to it over stdio.
- A block preceded by `<!-- readme-test: skip: REASON -->` is skipped with its reason.
- A block without a language is an illustration (output, a diagram) and is not run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parents[3]
READMES = [ROOT / "README.md", *sorted((ROOT / "packages").glob("*/README.md"))]
CLONE_PLACEHOLDER = "/path/to/polyg"
RECURSIVE = {"bash scripts/test": "the test suite this test belongs to"}
"""Shell lines not run here, with the reason."""

_FENCE = re.compile(r"^```([\w-]*)\s*$")
_SKIP = re.compile(r"^<!--\s*readme-test:\s*skip:\s*(.+?)\s*-->$")


@dataclass(frozen=True)
class Block:
    """One fenced code block of a README."""

    readme: Path
    line: int
    language: str
    code: str
    skip: str | None

    @property
    def id(self) -> str:
        return f"{self.readme.relative_to(ROOT)}:{self.line}:{self.language}"


def readme_blocks(path: Path) -> list[Block]:
    """The fenced blocks of a markdown file, with the skip reason written before each."""
    blocks: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if fence is None:
            i += 1
            continue
        start = i
        i += 1
        body: list[str] = []
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i])
            i += 1
        previous = next((ln.strip() for ln in reversed(lines[:start]) if ln.strip()), "")
        skip = _SKIP.match(previous)
        blocks.append(
            Block(path, start + 1, fence.group(1), "\n".join(body) + "\n", skip and skip.group(1))
        )
        i += 1
    return blocks


BLOCKS = [b for readme in READMES for b in readme_blocks(readme)]
RUNNABLE = [b for b in BLOCKS if b.language]
EXAMPLE_CONFIGS = sorted((ROOT / "examples").glob("*/*.json"))


def _env(tmp_path: Path) -> dict[str, str]:
    """A reader's shell: no FalkorDB or LLM settings, and not inside this test's venv."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FALKORDB_", "LLM_"))}
    venv = env.pop("VIRTUAL_ENV", None) or sys.prefix
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(venv)
    )
    env["POLYG_DATA_DIR"] = str(tmp_path / "data")
    env.pop("COVERAGE_PROCESS_START", None)
    return env


def shell_lines(code: str) -> list[str]:
    """The commands of a shell block: one per line, comments and blank lines dropped."""
    out: list[str] = []
    for raw in code.splitlines():
        line = re.sub(r"\s+#.*$", "", raw).strip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


def test_the_readmes_have_the_blocks_this_test_runs() -> None:
    ids = {b.id for b in RUNNABLE}
    languages = {b.language for b in RUNNABLE}
    assert languages <= {"python", "bash", "sh", "json"}, languages
    assert any(b.readme.name == "README.md" and b.readme.parent == ROOT for b in RUNNABLE)
    quick_start = [b for b in BLOCKS if "uv run polyg demo" in b.code]
    assert len(quick_start) == 1 and quick_start[0].skip is None, ids
    assert shell_lines(quick_start[0].code) == [
        "python3 -m pip install uv && uv run polyg demo",
        "bash scripts/test",
    ]


@pytest.mark.slow
@pytest.mark.parametrize("block", RUNNABLE, ids=lambda b: b.id)
def test_readme_block_runs(block: Block, tmp_path: Path) -> None:
    if block.skip:
        pytest.skip(block.skip)
    if block.language == "python":
        _run_python(block, tmp_path)
    elif block.language in ("bash", "sh"):
        _run_shell(block, tmp_path)
    else:
        config = json.loads(block.code)
        servers: dict[str, Any] = config.get("mcpServers", {})
        assert servers, f"{block.id}: a json block is an MCP client config with mcpServers"
        for name, server in servers.items():
            anyio.run(_talk_to_server, block, name, server, tmp_path)


def test_the_example_configs_are_found() -> None:
    names = {p.name for p in EXAMPLE_CONFIGS}
    assert {"claude_desktop_config.json", "mcp.json"} <= names


@pytest.mark.slow
@pytest.mark.parametrize("path", EXAMPLE_CONFIGS, ids=lambda p: str(p.relative_to(ROOT)))
def test_example_client_config_starts_the_server(path: Path, tmp_path: Path) -> None:
    block = Block(path, 1, "json", path.read_text(encoding="utf-8"), None)
    servers: dict[str, Any] = json.loads(block.code)["mcpServers"]
    stdio = {name: s for name, s in servers.items() if "command" in s}
    assert stdio, f"{block.id} starts no stdio server"
    for name, server in stdio.items():
        anyio.run(_talk_to_server, block, name, server, tmp_path)


def _run_python(block: Block, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(block.code, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"{block.id} failed:\n{done.stdout}\n{done.stderr}"
    assert done.stdout.strip(), f"{block.id} printed nothing"
    if "recall(" in block.code:
        assert "AUTH_SECRET" in done.stdout, done.stdout


def _run_shell(block: Block, tmp_path: Path) -> None:
    for line in shell_lines(block.code):
        if line in RECURSIVE:
            continue
        done = subprocess.run(
            ["bash", "-c", line],
            cwd=ROOT,
            env=_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, f"{block.id}: {line!r} failed:\n{done.stdout}\n{done.stderr}"
        if "polyg demo" in line:
            assert "demo finished" in done.stdout, done.stdout
            assert "AUTH_SECRET" in done.stdout, done.stdout


async def _talk_to_server(block: Block, name: str, server: dict[str, Any], tmp_path: Path) -> None:
    command = str(server["command"])
    args = [str(a).replace(CLONE_PLACEHOLDER, str(ROOT)) for a in server.get("args", [])]
    if command == "uvx":
        pytest.skip(f"{block.id}: {name} runs polyg-mcp from PyPI, where it is not published yet")
    assert shutil.which(command), f"{block.id}: {command} is not on PATH"
    env = {**_env(tmp_path), **{k: str(v) for k, v in server.get("env", {}).items()}}
    params = StdioServerParameters(command=command, args=args, env=env, cwd=tmp_path)
    with anyio.fail_after(300):
        async with Client(params) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            stats = await client.call_tool("query_timeline", {})
    assert {"recall", "remember", "query_timeline"} <= tools
    assert not stats.is_error, stats.content
