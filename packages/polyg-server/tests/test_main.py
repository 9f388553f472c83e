from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import anyio
import httpx
import pytest
from anyio.abc import ByteReceiveStream
from polyg_core.storage.embedded import EmbeddedFalkorDB
from polyg_server.testing import INITIALIZE

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


def _stdio_messages(calls: int) -> list[dict[str, object]]:
    messages: list[dict[str, object]] = [
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    for i in range(calls):
        messages.append(
            {
                "jsonrpc": "2.0",
                "id": 2 + i,
                "method": "tools/call",
                "params": {
                    "name": "add_entity",
                    "arguments": {"name": f"Ines Varga {i}", "entity_type": "person"},
                },
            }
        )
    return messages


async def _stdio_run(
    env: dict[str, str], calls: int
) -> tuple[dict[int, dict[str, object]], bytes, int]:
    """Send the handshake and `calls` tool calls, close stdin; the replies by id, stderr
    and the exit status."""
    async with await anyio.open_process(polyg_mcp(), env=env) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        await proc.stdin.send(
            b"".join(json.dumps(m).encode() + b"\n" for m in _stdio_messages(calls))
        )
        replies: dict[int, dict[str, object]] = {}
        buffer = b""
        with anyio.fail_after(90):
            # Every call is answered before stdin closes: the server stays up meanwhile.
            while len(replies) < calls + 1:
                chunk = await proc.stdout.receive()
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    if line.strip():
                        reply = json.loads(line)
                        replies[int(reply["id"])] = reply
            await proc.stdin.aclose()
            stdout, stderr = await _read_all(proc.stdout), await _read_all(proc.stderr)
            code = await proc.wait()
    assert not stdout.strip() or all(json.loads(x) for x in stdout.splitlines())
    return replies, stderr, code


def _external_env(port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FALKORDB_", "POLYG_"))}
    env.update(
        FALKORDB_HOST="127.0.0.1",
        FALKORDB_PORT=str(port),
        POLYG_MAX_RETRIES="0",
        POLYG_LOG_LEVEL="WARNING",
        POLYG_TOOLS="all",
    )
    return env


async def test_an_unreachable_falkordb_answers_every_call_with_the_reason() -> None:
    """The store connects after the handshake starts; when it cannot, the server stays up
    and every tool call answers with the reason (trying to connect again first); when
    stdin closes, it exits with status 1 and the reason."""
    port = free_port()
    replies, stderr, code = await _stdio_run(_external_env(port), calls=2)
    for call_id in (2, 3):
        result = replies[call_id]["result"]
        assert isinstance(result, dict)
        assert result["isError"] is True
        text = result["content"][0]["text"]  # type: ignore[index]
        assert "could not start" in text and f"127.0.0.1:{port}" in text
        assert "unreachable" in text
    assert code == 1
    assert b"FalkorDB" in stderr and b"127.0.0.1" in stderr
    assert b"Traceback" not in stderr


async def test_a_port_that_is_not_falkordb_is_named_in_one_line() -> None:
    """FALKORDB_PORT at something that is not Redis (here an HTTP answer): no traceback,
    a short message that says what is wrong and what to set."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    port = server.getsockname()[1]

    def answer_http() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.recv(1024)
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    thread = threading.Thread(target=answer_http, daemon=True)
    thread.start()
    try:
        replies, stderr, code = await _stdio_run(_external_env(port), calls=1)
    finally:
        server.close()
    result = replies[2]["result"]
    assert isinstance(result, dict) and result["isError"] is True
    assert "is not FalkorDB" in result["content"][0]["text"]  # type: ignore[index]
    assert code == 1
    text = stderr.decode()
    assert "Traceback" not in text
    assert "is not FalkorDB" in text and "FALKORDB_PORT" in text
    assert len(text.strip().splitlines()) <= 6, text
