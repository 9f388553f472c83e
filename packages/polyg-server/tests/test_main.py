from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import anyio
import httpx
import pytest
from anyio.abc import ByteReceiveStream
from polyg_core.storage.embedded import EmbeddedFalkorDB

pytestmark = pytest.mark.anyio


def polyg_mcp() -> list[str]:
    script = Path(sys.executable).parent / "polyg-mcp"
    return [str(script)] if script.exists() else [sys.executable, "-m", "polyg_server.main"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def env_for(server: EmbeddedFalkorDB, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FALKORDB_", "POLYG_"))}
    return {**env, "POLYG_DATA_DIR": str(server.data_dir), "POLYG_LOG_LEVEL": "WARNING", **extra}


async def _read_all(stream: ByteReceiveStream | None) -> bytes:
    chunks: list[bytes] = []
    if stream is not None:
        try:
            while True:
                chunks.append(await stream.receive())
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            pass
    return b"".join(chunks)


async def test_http_mode_serves_health_and_stops_on_sigterm(
    falkordb_server: EmbeddedFalkorDB,
) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with anyio.fail_after(60):
        async with await anyio.open_process(
            [*polyg_mcp(), "--http", "--host", "127.0.0.1", "--port", str(port)],
            env=env_for(falkordb_server, POLYG_API_KEY="k-123"),
        ) as proc:
            try:
                async with httpx.AsyncClient() as http:
                    health: httpx.Response | None = None
                    while health is None:
                        try:
                            health = await http.get(f"{base}/health")
                        except httpx.TransportError:
                            assert proc.returncode is None, "polyg-mcp exited at start"
                            await anyio.sleep(0.1)
                    refused = await http.post(f"{base}/mcp", json={})
            finally:
                proc.send_signal(signal.SIGTERM)
                out, err = await _read_all(proc.stdout), await _read_all(proc.stderr)
                code = await proc.wait()
    assert health.status_code == 200
    assert health.json() == {"status": "ok"}
    assert refused.status_code == 401
    assert code == 0, err.decode()
    assert out == b""  # logs go to stderr only
    assert b"k-123" not in err
    assert falkordb_server.running_socket() is not None


def test_unknown_tool_profile_exits_with_a_message(falkordb_server: EmbeddedFalkorDB) -> None:
    proc = subprocess.run(
        polyg_mcp(),
        env=env_for(falkordb_server, POLYG_TOOLS="memory,everything"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=30,
    )
    assert proc.returncode == 2
    assert b"unknown name(s) 'everything'" in proc.stderr
    assert proc.stdout == b""


def test_the_server_loop_is_uvloop_when_it_is_installed() -> None:
    import asyncio

    from polyg_server.main import event_loop_options

    async def loop_module() -> str:
        return type(asyncio.get_running_loop()).__module__

    options = event_loop_options()
    assert options == {"use_uvloop": True}  # uvloop is a dependency of polyg-server
    assert anyio.run(loop_module, backend_options=options).startswith("uvloop")


def test_starting_the_server_loads_no_analysis_library() -> None:
    """rustworkx, scipy and pydot (about a second of imports) load when a tool needs them."""
    code = (
        "import sys, polyg_server.main, polyg_server.app\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'scipy', 'rustworkx', 'pydot'})\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == ""


def test_listing_the_tools_loads_neither_the_store_nor_the_memory_nor_the_model() -> None:
    """Over stdio the tools are listed while the context opens: nothing a call needs is
    imported for the listing (the Redis client, numpy, the graphs, the embedding model)."""
    code = (
        "import sys, anyio\n"
        "from polyg_core.config import Settings\n"
        "from polyg_server.app import create_server\n"
        "from polyg_server.context import ContextOpening\n"
        "async def main():\n"
        "    server = create_server(ContextOpening(Settings(tools='all')))\n"
        "    print(len(await server.list_tools()))\n"
        "anyio.run(main)\n"
        "heavy = {'redis', 'falkordb', 'numpy', 'onnxruntime', 'tokenizers', 'saq', 'litellm',\n"
        "         'polyg_core.memory', 'polyg_core.graphs.entity', 'polyg_core.storage.store'}\n"
        "print(','.join(sorted(heavy & set(sys.modules))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    count, loaded = out.stdout.splitlines()
    assert int(count) > 50
    assert loaded == ""


async def test_an_unreachable_falkordb_stops_the_stdio_server_with_the_reason() -> None:
    """The store connects after the handshake starts; when it cannot, calls answer with the
    reason and the server exits with status 1, as when it connected before serving."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FALKORDB_", "POLYG_"))}
    env.update(
        FALKORDB_HOST="127.0.0.1",
        FALKORDB_PORT=str(free_port()),
        POLYG_MAX_RETRIES="0",
        POLYG_LOG_LEVEL="WARNING",
    )
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "get_entity", "arguments": {"entity": "x"}},
        },
    ]
    async with await anyio.open_process(polyg_mcp(), env=env) as proc:
        assert proc.stdin is not None
        # stdin stays open: the server stops by itself.
        await proc.stdin.send(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
        with anyio.fail_after(60):
            stdout, stderr = await _read_all(proc.stdout), await _read_all(proc.stderr)
            code = await proc.wait()
    assert code == 1
    assert b"FalkorDB" in stderr and b"127.0.0.1" in stderr
    for line in stdout.splitlines():
        reply = json.loads(line)
        if reply.get("id") == 2:  # answered before the server stopped: an error with the reason
            assert reply["result"]["isError"] is True
            assert "could not start" in reply["result"]["content"][0]["text"]
