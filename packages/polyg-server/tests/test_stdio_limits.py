"""stdio limits: oversized, malformed, too deep and non-UTF-8 messages get a JSON-RPC
error (with the request's id where it can be read), and the server keeps serving."""

from __future__ import annotations

import json
import os
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCError, JSONRPCRequest
from polyg_core.storage.embedded import EmbeddedFalkorDB
from polyg_server.stdio import (
    INVALID_REQUEST,
    PARSE_ERROR,
    StdioLimits,
    parse_line,
    read_messages,
)
from polyg_server.testing import polyg_mcp_command

pytestmark = pytest.mark.anyio

CAP = 65_536


def line(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj).encode() + b"\n"


class Wire:
    def __init__(self, process: Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.out = BufferedByteReceiveStream(process.stdout)

    async def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(data)

    async def answer(self) -> dict[str, Any]:
        with anyio.fail_after(30):
            return json.loads(await self.out.receive_until(b"\n", 1_000_000))


async def test_bad_stdio_messages_get_json_rpc_errors_and_the_server_keeps_serving(
    falkordb_server: EmbeddedFalkorDB, namespace: str
) -> None:
    env = {
        **os.environ,
        "POLYG_DATA_DIR": str(falkordb_server.data_dir),
        "FALKORDB_GRAPH": namespace,
        "POLYG_LOG_LEVEL": "WARNING",
        "POLYG_STDIO_MAX_MESSAGE_BYTES": str(CAP),
        "POLYG_JOB_WORKERS": "0",
        "POLYG_TOOLS": "memory,get_statistics",
    }
    oversized = line(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "remember", "arguments": {"content": "x" * (4 * CAP)}},
        }
    )
    deep_args: Any = "leaf"
    for _ in range(200):
        deep_args = {"a": deep_args}
    deep = line(
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "get_statistics", "arguments": deep_args},
        }
    )
    async with await anyio.open_process(polyg_mcp_command(), env=env, stderr=None) as process:
        wire = Wire(process)
        try:
            await wire.send(
                line(
                    {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "initialize",
                        "params": {
                            "protocolVersion": "2025-06-18",
                            "capabilities": {},
                            "clientInfo": {"name": "raw", "version": "0"},
                        },
                    }
                )
            )
            init = await wire.answer()
            assert init["id"] == 1 and "result" in init
            await wire.send(line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            # Sent in pieces, as a pipe delivers a long line.
            for i in range(0, len(oversized), 50_000):
                await wire.send(oversized[i : i + 50_000])
            too_big = await wire.answer()
            await wire.send(b'{"jsonrpc": "2.0", "id": 3, "method": \n')
            malformed = await wire.answer()
            await wire.send(deep)
            too_deep = await wire.answer()
            await wire.send(b'{"jsonrpc": "2.0", "id": 5, "method": "ping", "x": "\xff\xfe"}\n')
            not_utf8 = await wire.answer()
            await wire.send(b"[" * 30_000 + b"]" * 30_000 + b"\n")
            very_deep = await wire.answer()
            await wire.send(line({"hello": "world", "id": 7}))
            not_rpc = await wire.answer()
            await wire.send(line({"jsonrpc": "2.0", "id": 8, "method": "tools/list"}))
            still = await wire.answer()
        finally:
            assert process.stdin is not None
            await process.stdin.aclose()
            with anyio.fail_after(30):
                await process.wait()
    assert too_big["id"] == 2 and too_big["error"]["code"] == PARSE_ERROR
    assert f"larger than {CAP} bytes" in too_big["error"]["message"]
    assert malformed["id"] == 3 and malformed["error"]["code"] == PARSE_ERROR
    assert "not valid JSON" in malformed["error"]["message"]
    assert too_deep["id"] == 4 and too_deep["error"]["code"] == INVALID_REQUEST
    assert "deeper than 64 levels" in too_deep["error"]["message"]
    assert not_utf8["id"] == 5 and not_utf8["error"]["code"] == PARSE_ERROR
    assert "not valid UTF-8" in not_utf8["error"]["message"]
    assert very_deep["id"] is None and very_deep["error"]["code"] == INVALID_REQUEST
    assert not_rpc["id"] == 7 and not_rpc["error"]["code"] == INVALID_REQUEST
    assert still["id"] == 8 and any(t["name"] == "remember" for t in still["result"]["tools"])


async def _run_reader(chunks: list[bytes], limits: StdioLimits) -> list[SessionMessage]:
    pending = list(chunks)
    got: list[SessionMessage] = []
    messages: tuple[
        MemoryObjectSendStream[SessionMessage | Exception],
        MemoryObjectReceiveStream[SessionMessage | Exception],
    ] = anyio.create_memory_object_stream[SessionMessage | Exception](100)
    errors: tuple[
        MemoryObjectSendStream[SessionMessage], MemoryObjectReceiveStream[SessionMessage]
    ] = anyio.create_memory_object_stream[SessionMessage](100)
    with anyio.fail_after(10):

        async def read() -> bytes:
            return pending.pop(0) if pending else b""

        await read_messages(read, limits, messages[0], errors[0])
    for item in [*_receive_all(messages[1]), *_receive_all(errors[1])]:
        assert isinstance(item, SessionMessage)
        got.append(item)
    return got


def _receive_all(stream: MemoryObjectReceiveStream[Any]) -> list[Any]:
    out: list[Any] = []
    while True:
        try:
            out.append(stream.receive_nowait())
        except (anyio.WouldBlock, anyio.EndOfStream):
            return out


async def test_lines_split_across_chunks_and_an_oversized_line_between_good_ones() -> None:
    ping = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
    big = b'{"jsonrpc": "2.0", "id": 2, "method": "ping", "pad": "' + b"y" * 500 + b'"}'
    # The last message has no newline: the end of input ends it.
    stream = ping + b"\r\n" + big + b"\n\n" + ping.replace(b"1", b"3")
    chunks = [stream[i : i + 7] for i in range(0, len(stream), 7)]
    got = await _run_reader(chunks, StdioLimits(max_message_bytes=200))
    requests = [m.message for m in got if isinstance(m.message, JSONRPCRequest)]
    refused = [m.message for m in got if isinstance(m.message, JSONRPCError)]
    assert [r.id for r in requests] == [1, 3]
    assert [(e.id, e.error.code) for e in refused] == [(2, PARSE_ERROR)]


def test_a_string_id_is_kept() -> None:
    parsed = parse_line(b'{"jsonrpc": "2.0", "id": "a", "method": "ping"}', StdioLimits())
    assert isinstance(parsed.message, JSONRPCRequest) and parsed.message.id == "a"
