"""A server that accepts no connection for a long time is busy, not gone.

After loading a large snapshot FalkorDB builds every vector index before it accepts a
connection again (minutes at hundreds of thousands of vectors). The start loop probes
its socket every 0.2 s; the probes' connections wait in the socket's listen queue, and
once it is full a unix socket refuses the next connect with EAGAIN. That used to read
as "down", and the start gave up on a server that was only busy and killed it after
`startup_timeout`: a 1M-entity data dir could not be started through polyg.
"""

from __future__ import annotations

import os
import signal
import socket
import time
from pathlib import Path

import pytest
from polyg_core.storage.embedded import (
    EmbeddedFalkorDB,
    _state,  # pyright: ignore[reportPrivateUsage]
)

pytestmark = pytest.mark.slow


def fill_listen_queue(path: str, limit: int = 20_000) -> list[socket.socket]:
    """Connect to `path` without being accepted until the queue refuses (EAGAIN)."""
    held: list[socket.socket] = []
    for _ in range(limit):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect(path)
        except BlockingIOError:
            s.close()
            return held
        held.append(s)
    for s in held:
        s.close()
    raise AssertionError(f"the listen queue of {path} took {limit} connections")


def test_a_server_whose_listen_queue_is_full_is_silent_not_down(tmp_path: Path) -> None:
    server = EmbeddedFalkorDB(tmp_path)
    sock = server.ensure_running()
    pid = server.pid
    assert pid is not None
    assert _state(sock) == "up"
    os.kill(pid, signal.SIGSTOP)  # accepts nothing, like a server building its indexes
    held: list[socket.socket] = []
    try:
        held = fill_listen_queue(sock)
        assert held, "the queue took no connection at all"
        assert _state(sock, timeout=0.2) == "silent"
    finally:
        for s in held:
            s.close()
        os.kill(pid, signal.SIGCONT)
    deadline = time.monotonic() + 30
    while _state(sock) != "up" and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _state(sock) == "up"
    server.stop(force=True)


def test_a_socket_nobody_holds_is_down(tmp_path: Path) -> None:
    path = str(tmp_path / "nobody.sock")
    assert _state(path, timeout=0.2) == "down"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.close()  # the file stays, nobody listens: refused, not a full queue
    assert _state(path, timeout=0.2) == "down"
