"""Exactly one FalkorDB per data dir, even while the first one is frozen.

Before, a server that missed one PING within 1 s (SIGSTOP, a long fork) counted as
dead: the next process started a second redis-server on the same files, and a write
acknowledged by one of them was lost when the other rewrote the append-only file.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
import redis
from polyg_core.errors import EmbeddedServerError
from polyg_core.storage import server_lock
from polyg_core.storage.embedded import EmbeddedFalkorDB

pytestmark = pytest.mark.slow


def redis_servers_on(db_dir: Path) -> list[int]:
    """Pids of the redis-server processes working in this data dir (redis chdirs to it)."""
    pids: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            comm = (entry / "comm").read_text().strip()
            cwd = Path(os.readlink(entry / "cwd"))
        except OSError:
            continue
        if comm.startswith("redis-server") and cwd == db_dir.resolve():
            pids.append(int(entry.name))
    return pids


def test_a_frozen_server_is_waited_for_never_doubled(tmp_path: Path) -> None:
    first = EmbeddedFalkorDB(tmp_path, startup_timeout=2.0)
    sock = first.ensure_running()
    pid = first.pid
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)
    try:
        second = EmbeddedFalkorDB(tmp_path, startup_timeout=2.0)
        with pytest.raises(EmbeddedServerError, match="does not start a second server"):
            second.ensure_running()
        assert redis_servers_on(first.db_dir) == [pid]
    finally:
        os.kill(pid, signal.SIGCONT)
    # Resumed, it is reused: the same process, and a write through it is kept.
    third = EmbeddedFalkorDB(tmp_path)
    assert third.ensure_running() == sock
    assert third.pid == pid
    client = redis.Redis(unix_socket_path=sock)
    try:
        client.set("after-freeze", "kept")
        assert client.get("after-freeze") == b"kept"
    finally:
        client.close()
    assert redis_servers_on(first.db_dir) == [pid]
    third.stop(force=True)
    first.stop(force=True)


def test_the_lock_lives_as_long_as_the_server_not_its_starter(tmp_path: Path) -> None:
    server = EmbeddedFalkorDB(tmp_path)
    server.ensure_running()
    pid = server.pid
    assert server_lock.holders(server.db_dir) == [pid]
    server.stop(force=True)
    assert not server_lock.held(server.db_dir)
    # And a server whose pid file is gone is still found through the lock.
    again = EmbeddedFalkorDB(tmp_path, startup_timeout=2.0)
    again.ensure_running()
    new_pid = again.pid
    assert new_pid is not None
    again.pid_file.unlink()
    os.kill(new_pid, signal.SIGSTOP)
    try:
        with pytest.raises(EmbeddedServerError, match=str(new_pid)):
            EmbeddedFalkorDB(tmp_path, startup_timeout=1.0).ensure_running()
        assert redis_servers_on(again.db_dir) == [new_pid]
    finally:
        os.kill(new_pid, signal.SIGCONT)
        os.kill(new_pid, signal.SIGTERM)
