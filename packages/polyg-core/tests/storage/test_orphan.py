"""The embedded FalkorDB outlives a SIGKILLed starter only until its last user leaves.

Before, only the process that started the server stopped it: when that process was
killed, FalkorDB kept running and no later polyg process ever stopped it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from polyg_core.storage.embedded import EmbeddedFalkorDB
from polyg_core.testing.processes import server_alive as alive
from polyg_core.testing.processes import wait_until

pytestmark = pytest.mark.slow

# A polyg process using the embedded server: starts (or reuses) it, says so, then waits.
USER = """
import sys, time
from pathlib import Path
from polyg_core.storage.embedded import EmbeddedFalkorDB
server = EmbeddedFalkorDB(Path(sys.argv[1]))
print(server.ensure_running(), flush=True)
if sys.argv[2] == "stay":
    time.sleep(600)
else:
    server.stop()
"""


def user(data_dir: Path, mode: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", USER, str(data_dir), mode],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip(), "the user process did not start the server"
    return proc


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path
    EmbeddedFalkorDB(tmp_path).stop(force=True)  # whatever a failed test left running


def kill(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)


def test_the_next_process_adopts_a_server_whose_starter_was_killed_and_stops_it(
    data_dir: Path,
) -> None:
    starter = user(data_dir, "stay")
    server_pid = EmbeddedFalkorDB(data_dir).pid
    assert server_pid is not None and alive(server_pid)
    kill(starter)
    assert alive(server_pid)  # orphaned: nobody stopped it
    follower = user(data_dir, "leave")  # uses it (same server), then leaves
    assert follower.wait(timeout=60) == 0
    assert wait_until(lambda: not alive(server_pid), timeout_s=30.0)
    assert not EmbeddedFalkorDB(data_dir).pid_file.exists()


def test_the_server_stays_while_another_process_uses_it_and_stops_with_the_last(
    data_dir: Path,
) -> None:
    starter = user(data_dir, "stay")
    server = EmbeddedFalkorDB(data_dir)
    server_pid = server.pid
    assert server_pid is not None
    second = user(data_dir, "stay")
    kill(starter)
    # This process: adopts the server, sees the second user alive and leaves it running.
    here = EmbeddedFalkorDB(data_dir)
    here.ensure_running()
    assert EmbeddedFalkorDB(data_dir).pid == server_pid
    assert sorted(here.live_users()) == sorted([os.getpid(), second.pid])
    here.stop()
    assert alive(server_pid)
    kill(second)  # the last user dies too: the next one to leave stops it
    last = EmbeddedFalkorDB(data_dir)
    last.ensure_running()
    assert last.pid == server_pid
    last.stop()
    assert wait_until(lambda: not alive(server_pid), timeout_s=30.0)


def test_a_user_file_of_a_reused_pid_does_not_count(data_dir: Path) -> None:
    server = EmbeddedFalkorDB(data_dir)
    server.ensure_running()
    server.users_dir.mkdir(exist_ok=True)
    # This process's pid with another start time: a dead user whose pid was reused.
    (server.users_dir / f"{os.getpid()}-stale").write_text(
        f'{{"pid": {os.getpid()}, "started": "1"}}'
    )
    assert server.live_users() == [os.getpid()]
    assert not (server.users_dir / f"{os.getpid()}-stale").exists()
    pid = server.pid
    assert pid is not None
    server.stop()
    assert wait_until(lambda: not alive(pid), timeout_s=30.0)
