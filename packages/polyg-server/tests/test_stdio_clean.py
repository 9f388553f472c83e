"""stdio mode: stdout carries MCP messages only, whatever logs and prints at DEBUG.

litellm, for one, writes its DEBUG records to stdout; one such line in the stream
breaks the client's session. The server runs here as a user runs it (`polyg-mcp`
over stdio) with POLYG_LOG_LEVEL=DEBUG and a model configured against the loopback
LLM stand-in, through `tee` so the test sees every byte the client received.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Any, cast

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from polyg_core.storage.embedded import EmbeddedFalkorDB
from polyg_core.testing.llm_server import Reply, ScriptedLLMServer
from polyg_server.testing import INITIALIZE, polyg_mcp_command

pytestmark = pytest.mark.anyio


def _answer(messages: list[dict[str, Any]]) -> Reply:
    """Any chat request gets an empty JSON object: polyg falls back where it needs more."""
    return Reply.json({})


async def test_stdio_stdout_holds_only_json_rpc_at_debug_with_an_llm(
    falkordb_server: EmbeddedFalkorDB, namespace: str, tmp_path: Path
) -> None:
    wire = tmp_path / "stdout.jsonl"
    command = " ".join(shlex.quote(part) for part in polyg_mcp_command())
    async with ScriptedLLMServer(responder=_answer) as llm:
        params = StdioServerParameters(
            command="bash",
            args=["-c", f"{command} | tee {shlex.quote(str(wire))}"],
            env={
                "POLYG_DATA_DIR": str(falkordb_server.data_dir),
                "FALKORDB_GRAPH": namespace,
                "POLYG_LOG_LEVEL": "DEBUG",
                "LLM_MODEL": "openai/stand-in",
                "LLM_BASE_URL": llm.api_base,
                "OPENAI_API_KEY": "test-key",
                "LITELLM_LOG": "DEBUG",
            },
        )
        with anyio.fail_after(120):
            async with Client(params) as client:
                tools = (await client.list_tools()).tools
                remembered = await client.call_tool(
                    "remember",
                    {"content": "The nightly backup job failed because the disk was full."},
                )
                recalled = await client.call_tool(
                    "recall", {"question": "Why did the nightly backup job fail?"}
                )
        chat_requests = len(llm.chat_requests)
    assert tools
    assert not remembered.is_error, remembered.content
    assert not recalled.is_error, recalled.content
    assert chat_requests > 0, "the model was never asked: the LLM path did not run"
    lines = wire.read_text(encoding="utf-8").splitlines()
    assert len(lines) >= 4  # initialize, tools/list and two tool results at least
    assert [line[:200] for line in lines if not _is_json_rpc(line)] == []


def _is_json_rpc(line: str) -> bool:
    try:
        message = json.loads(line)
    except ValueError:
        return False
    return isinstance(message, dict) and cast(dict[str, Any], message).get("jsonrpc") == "2.0"


async def test_stdio_server_answers_and_exits_cleanly_when_stdin_closes(
    falkordb_server: EmbeddedFalkorDB, namespace: str
) -> None:
    initialize = INITIALIZE
    with anyio.fail_after(120):
        done = await anyio.run_process(
            polyg_mcp_command(),
            input=(json.dumps(initialize) + "\n").encode(),
            env={
                **os.environ,
                "POLYG_DATA_DIR": str(falkordb_server.data_dir),
                "FALKORDB_GRAPH": namespace,
                "POLYG_LOG_LEVEL": "DEBUG",
                "LLM_MODEL": "openai/stand-in",
                "LLM_BASE_URL": "http://127.0.0.1:9/v1",
            },
            check=False,
        )
    stdout, stderr = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == 0, stderr[-2000:]
    assert "Traceback" not in stderr, stderr[-2000:]
    (line,) = stdout.splitlines()  # the initialize result and nothing else, exit included
    assert json.loads(line)["result"]["serverInfo"]["name"] == "polyg"
