"""MCP over stdio with limits: every line is checked before the SDK sees it.

The SDK's stdio transport reads whole lines of any length and passes a line it
cannot parse to the server as an exception, which answers nothing: a 100 MB line
took the server to 1.4 GB, and a malformed, too deeply nested or non-UTF-8 line
left the client waiting forever. This transport reads bytes, caps a line at
`max_message_bytes` (the rest of an oversized line is skipped as it arrives, never
held), and answers every line it refuses with a JSON-RPC error at once:

- over the size limit, invalid UTF-8, or not JSON: -32700 (parse error);
- nested deeper than `max_depth`, or JSON that is not a JSON-RPC message: -32600.

The error carries the request's id when it can be read (from the start of an
oversized line, too), so a client waiting on that id gets its answer.
"""

from __future__ import annotations

import json
import logging
import os
import re
import stat
import sys
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from typing import Any, BinaryIO, cast

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

logger = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024
DEFAULT_MAX_DEPTH = 64
_READ_CHUNK = 64 * 1024
_ID_RE = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\\n]|\\.){0,200}")')


@dataclass(frozen=True)
class StdioLimits:
    """What one stdio message may be.

    Args:
        max_message_bytes: the longest line (one JSON-RPC message), in bytes.
        max_depth: the deepest nesting of JSON arrays and objects in a message.
    """

    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    max_depth: int = DEFAULT_MAX_DEPTH


def _error(request_id: str | int | None, code: int, message: str) -> SessionMessage:
    return SessionMessage(
        types.JSONRPCError(
            jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)
        )
    )


def _id_from_prefix(data: bytes) -> str | int | None:
    """The request id in the first KiB of a line that cannot be parsed whole (best effort)."""
    found = _ID_RE.search(data[:1024])
    if found is None:
        return None
    raw = found.group(1)
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, str | int) else None


def _depth_over(value: Any, limit: int) -> bool:
    """True when arrays/objects nest deeper than `limit` (iterative: any depth is safe)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            children = (
                list(cast(dict[Any, Any], item).values())
                if isinstance(item, dict)
                else cast(list[Any], item)
            )
            stack.extend((child, depth + 1) for child in children)
    return False


def parse_line(line: bytes, limits: StdioLimits) -> SessionMessage:
    """A line's JSON-RPC message, or the JSON-RPC error that answers a bad line."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _error(
            _id_from_prefix(line),
            PARSE_ERROR,
            f"Parse error: the message is not valid UTF-8 (byte 0x{line[exc.start]:02x} at "
            f"offset {exc.start}); send JSON encoded as UTF-8, one message per line",
        )
    too_deep = (
        f"Invalid request: the message nests arrays/objects deeper than {limits.max_depth} "
        "levels; send flatter arguments"
    )
    try:
        data = json.loads(text)
    except RecursionError:
        return _error(_id_from_prefix(line), INVALID_REQUEST, too_deep)
    except ValueError as exc:
        return _error(
            _id_from_prefix(line),
            PARSE_ERROR,
            f"Parse error: the message is not valid JSON ({exc}); send one JSON-RPC message "
            "per line",
        )
    request_id = cast(dict[str, Any], data).get("id") if isinstance(data, dict) else None
    if not isinstance(request_id, str | int) or isinstance(request_id, bool):
        request_id = None
    if _depth_over(data, limits.max_depth):
        return _error(request_id, INVALID_REQUEST, too_deep)
    try:
        message = types.jsonrpc_message_adapter.validate_python(data, by_name=False)
    except ValueError as exc:
        first = str(exc).splitlines()[0] if str(exc) else "invalid message"
        return _error(
            request_id,
            INVALID_REQUEST,
            f"Invalid request: not a JSON-RPC 2.0 message ({first}); send an object with "
            '"jsonrpc": "2.0", "method" and, for a request, an "id"',
        )
    return SessionMessage(message)


async def read_messages(
    read: Callable[[], Awaitable[bytes]],
    limits: StdioLimits,
    messages: MemoryObjectSendStream[SessionMessage | Exception],
    errors: MemoryObjectSendStream[SessionMessage],
) -> None:
    """Split the byte stream into lines; messages go to `messages`, refusals to `errors`.

    `read` waits for the next chunk (b"" at the end of input).
    """
    cap = limits.max_message_bytes
    line = bytearray()
    skipping = False

    async def finish(data: bytes) -> None:
        data = data.rstrip(b"\r")
        if not data.strip():
            return
        parsed = parse_line(data, limits)
        refusal = parsed.message
        if isinstance(refusal, types.JSONRPCError):
            logger.warning("stdio: refused a message: %s", refusal.error.message[:200])
            await errors.send(parsed)
        else:
            await messages.send(parsed)

    async with messages, errors:
        while True:
            chunk = await read()
            if not chunk:
                if line and not skipping:
                    await finish(bytes(line))
                return
            start = 0
            while start <= len(chunk):
                end = chunk.find(b"\n", start)
                piece = chunk[start:] if end < 0 else chunk[start:end]
                if not skipping:
                    line += piece
                    if len(line) > cap:
                        logger.warning("stdio: refused a message over %d bytes", cap)
                        await errors.send(
                            _error(
                                _id_from_prefix(bytes(line)),
                                PARSE_ERROR,
                                f"Parse error: the message is larger than {cap} bytes; send "
                                "less per call (or raise POLYG_STDIO_MAX_MESSAGE_BYTES)",
                            )
                        )
                        skipping = True
                        line.clear()
                if end < 0:
                    break
                if not skipping:
                    await finish(bytes(line))
                line.clear()
                skipping = False
                start = end + 1


async def write_messages(
    write: Callable[[bytes], Awaitable[None]], outgoing: MemoryObjectReceiveStream[SessionMessage]
) -> None:
    """Write each message as one line of JSON."""
    async with outgoing:
        async for session_message in outgoing:
            data = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)
            await write(data.encode("utf-8") + b"\n")


def _pipe_fd(stream: BinaryIO) -> int | None:
    """The descriptor of a pipe or socket stream (which the event loop can wait on)."""
    if sys.platform == "win32":  # pragma: no cover
        return None
    try:
        fd = stream.fileno()
        mode = os.fstat(fd).st_mode
    except (OSError, ValueError):
        return None
    return fd if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) else None


class _EventLoopIO:
    """Reads and writes on non-blocking pipe descriptors, waited on by the event loop.

    A blocking read or write runs in a worker thread, and each message then costs two
    thread hand-offs per direction; on a busy machine those wake-ups are a measurable
    part of a short tool call. Blocking mode is restored on `close`.
    """

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self.read_fd = read_fd
        self.write_fd = write_fd
        self._blocking = {fd: os.get_blocking(fd) for fd in (read_fd, write_fd)}
        for fd in self._blocking:
            os.set_blocking(fd, False)

    async def read(self) -> bytes:
        while True:
            try:
                return os.read(self.read_fd, _READ_CHUNK)
            except BlockingIOError:
                await anyio.wait_readable(self.read_fd)

    async def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self.write_fd, view) :]
            except BlockingIOError:
                await anyio.wait_writable(self.write_fd)

    def close(self) -> None:
        for fd, blocking in self._blocking.items():
            with suppress(OSError):
                os.set_blocking(fd, blocking)


def reserve_stdout() -> BinaryIO:
    """Keep stdout for MCP: return the protocol's stream and send everything else to stderr.

    Libraries print to stdout (litellm writes its records below WARNING there) and child
    processes inherit it. `polyg-mcp` calls this first thing in stdio mode: from then to
    the end of the process, descriptor 1 is a copy of stderr, so `sys.stdout`, C
    libraries, atexit handlers (litellm logs from one) and children (the embedded
    FalkorDB) write there. The returned stream writes to the real stdout and is not
    inherited by child processes.
    """
    sys.stdout.flush()
    wire = os.fdopen(os.dup(1), "wb", 0)  # not inherited by children (PEP 446)
    os.dup2(2, 1)
    return wire


def _claim_stdio(
    stdout: BinaryIO | None,
) -> tuple[BinaryIO, BinaryIO, Callable[[], None]]:
    """The wire's stdin/stdout; fd 0 then reads /dev/null and fd 1 writes to stderr.

    So stray reads and prints of handlers and children never touch the protocol.
    `stdout`, when given, is the wire's output already set aside by `reserve_stdout`
    (descriptor 1 is stderr by then and stays so). Falls back to the standard buffers
    where descriptors cannot be moved.
    """
    if sys.platform == "win32":  # pragma: no cover
        return sys.stdin.buffer, stdout or sys.stdout.buffer, lambda: None
    import fcntl

    try:
        wire_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
        wire_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3) if stdout is None else -1
        sys.stdout.flush()
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        if stdout is None:
            os.dup2(2, 1)
    except OSError:  # pragma: no cover
        return sys.stdin.buffer, stdout or sys.stdout.buffer, lambda: None

    def restore() -> None:
        with suppress(OSError):
            os.dup2(wire_in, 0)
            if wire_out >= 0:
                os.dup2(wire_out, 1)

    # closefd=False: a reading thread may still block on the descriptor after exit.
    out = stdout if stdout is not None else os.fdopen(wire_out, "wb", 0, closefd=False)
    return os.fdopen(wire_in, "rb", closefd=False), out, restore


@asynccontextmanager
async def limited_stdio_server(
    limits: StdioLimits | None = None,
    stdout: BinaryIO | None = None,
) -> AsyncGenerator[
    tuple[
        MemoryObjectReceiveStream[SessionMessage | Exception],
        MemoryObjectSendStream[SessionMessage],
    ]
]:
    """Serve MCP over stdin and stdout (or the stream `reserve_stdout` set aside) with
    `limits`; yields (read, write) streams."""
    limits = limits or StdioLimits()
    stdin, wire, restore = _claim_stdio(stdout)
    read_in, read_out = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_in, write_out = anyio.create_memory_object_stream[SessionMessage](0)
    errors = write_in.clone()
    read_fd, write_fd = _pipe_fd(stdin), _pipe_fd(wire)
    loop_io = (
        _EventLoopIO(read_fd, write_fd) if read_fd is not None and write_fd is not None else None
    )
    read1: Callable[[int], bytes] = getattr(stdin, "read1", stdin.read)

    async def read() -> bytes:
        return await anyio.to_thread.run_sync(read1, _READ_CHUNK, abandon_on_cancel=True)

    def write_sync(data: bytes) -> None:
        wire.write(data)
        wire.flush()

    async def write(data: bytes) -> None:
        await anyio.to_thread.run_sync(write_sync, data)

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(read_messages, loop_io.read if loop_io else read, limits, read_in, errors)
            tg.start_soon(write_messages, loop_io.write if loop_io else write, write_out)
            yield read_out, write_in
            tg.cancel_scope.cancel()
    finally:
        if loop_io is not None:
            loop_io.close()
        restore()
