"""The embedded FalkorDB outlives its last user for a linger, then stops by itself.

Over stdio each session is a new process: without a linger, a session that follows
the last one starts the server again (at a large data dir, minutes of index building).
With `linger_s` > 0 the last user leaves the server running and a detached reaper
stops it when the linger ends with no user back; a user that arrives meanwhile adopts
the same server. These tests use short linger times and bounded polling only.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from polyg_core.config import StorageSettings
from polyg_core.storage import server_lock
from polyg_core.storage.embedded import EmbeddedFalkorDB
from polyg_core.storage.store import FalkorStore
from polyg_core.testing.processes import server_alive as alive
from polyg_core.testing.processes import wait_until

pytestmark = pytest.mark.slow

# One polyg process: uses the embedded server (starting it if needed), prints what it
# found, then leaves with the given linger and exits; or stays until its stdin closes.
USER = """
import json, sys
from pathlib import Path
from polyg_core.storage.embedded import EmbeddedFalkorDB
server = EmbeddedFalkorDB(Path(sys.argv[1]), linger_s=float(sys.argv[2]))
server.ensure_running()
print(json.dumps({"pid": server.pid, "owner": server.owner}), flush=True)
if sys.argv[3] == "stay":
    sys.stdin.read()
server.stop()
"""


def session(data_dir: Path, linger_s: float) -> dict[str, object]:
    """A process that uses the server once and exits (a stdio session); what it saw."""
    out = subprocess.run(
        [sys.executable, "-c", USER, str(data_dir), str(linger_s), "leave"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def staying(data_dir: Path, linger_s: float) -> tuple[subprocess.Popen[str], dict[str, object]]:
    """A process that uses the server until its stdin is closed."""
    proc = subprocess.Popen(
        [sys.executable, "-c", USER, str(data_dir), str(linger_s), "stay"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.strip(), "the user process did not reach the server"
    return proc, json.loads(line)


def leave(proc: subprocess.Popen[str]) -> None:
    assert proc.stdin is not None
    proc.stdin.close()
    assert proc.wait(timeout=120) == 0


def reapers(data_dir: Path) -> list[int]:
    """Pids of the reaper processes waiting on this data dir."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(a.endswith(b"storage/linger.py") for a in args) and str(data_dir).encode() in args:
            found.append(int(entry.name))
    return found


def sleep_past(epoch_s: float, margin_s: float = 2.5) -> None:
    """Sleep until `margin_s` after the wall-clock time `epoch_s` (bounded by the linger)."""
    time.sleep(max(0.0, epoch_s + margin_s - time.time()))


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path
    EmbeddedFalkorDB(tmp_path).stop(force=True)  # whatever a failed test left running
    assert wait_until(lambda: not reapers(tmp_path), 30), "a reaper outlived its server"


def test_a_new_session_within_the_linger_adopts_the_same_server(data_dir: Path) -> None:
    first = session(data_dir, linger_s=120)
    assert first["owner"] is True
    pid = first["pid"]
    assert isinstance(pid, int)
    server = EmbeddedFalkorDB(data_dir)
    # The last user left and exited; the server is still up, with a stop pending.
    assert alive(pid) and server.running_socket() is not None
    until = server.lingering_until()
    assert until is not None and until > time.time()
    assert server.live_users() == []
    assert len(reapers(data_dir)) == 1

    second = session(data_dir, linger_s=120)
    assert second == {"pid": pid, "owner": False}  # adopted: no new start


def test_with_no_user_back_the_server_stops_when_the_linger_ends(data_dir: Path) -> None:
    first = session(data_dir, linger_s=1.5)
    pid = first["pid"]
    assert isinstance(pid, int)
    server = EmbeddedFalkorDB(data_dir)
    assert wait_until(lambda: not alive(pid)), "the lingering server was never stopped"
    assert wait_until(lambda: not server_lock.held(server.db_dir), 15)
    assert wait_until(lambda: not reapers(data_dir), 15)  # the reaper is done, and gone
    assert not server.pid_file.exists()
    assert server.lingering_until() is None
    assert "stopping the server" in (server.db_dir / "linger.log").read_text()
    # The next session starts a new server on the same files.
    again = session(data_dir, linger_s=0)
    assert again["owner"] is True and again["pid"] != pid


def test_a_user_arriving_during_the_linger_keeps_the_server_past_it(data_dir: Path) -> None:
    first = session(data_dir, linger_s=10)
    pid = first["pid"]
    assert isinstance(pid, int)
    until = EmbeddedFalkorDB(data_dir).lingering_until()
    assert until is not None

    # This process arrives well within the linger (a lock and a PING), so no race.
    user = EmbeddedFalkorDB(data_dir, linger_s=1)
    user.ensure_running()
    assert user.pid == pid and not user.owner  # adopted, and the pending stop cancelled
    assert user.lingering_until() is None
    assert wait_until(lambda: not reapers(data_dir), 15)  # the cancelled reaper went
    sleep_past(until)
    assert alive(pid), "the server was stopped under a user that came back"

    # When that user leaves in turn, its own linger applies, and then the server stops.
    user.stop()
    assert alive(pid)
    assert wait_until(lambda: not alive(pid)), "the server was not stopped after the new linger"


def test_only_the_newest_linger_counts(data_dir: Path) -> None:
    """A user that comes and goes within a linger starts a new one: the earlier reaper
    gives up rather than stop the server at the end of the earlier linger."""
    first = session(data_dir, linger_s=120)
    pid = first["pid"]
    assert isinstance(pid, int)
    server = EmbeddedFalkorDB(data_dir)
    early = server._read_linger()  # pyright: ignore[reportPrivateUsage]
    assert early is not None
    assert session(data_dir, linger_s=120)["pid"] == pid
    later = server._read_linger()  # pyright: ignore[reportPrivateUsage]
    assert later is not None and later[0] != early[0] and later[2] > early[2]
    assert wait_until(lambda: len(reapers(data_dir)) == 1, 15)  # the earlier one went
    # The earlier reaper's work, run here: its token is outdated, so it stops nothing.
    assert server.reap_after_linger(early[0]) is False
    assert alive(pid)


def test_an_explicit_stop_during_the_linger_stops_at_once(data_dir: Path) -> None:
    pid = session(data_dir, linger_s=120)["pid"]
    assert isinstance(pid, int) and alive(pid)
    # A command that needs the server stopped (force), or a user with no linger.
    EmbeddedFalkorDB(data_dir).stop(force=True)
    assert not alive(pid)
    assert EmbeddedFalkorDB(data_dir).lingering_until() is None
    assert wait_until(lambda: not reapers(data_dir), 15)

    pid = session(data_dir, linger_s=120)["pid"]
    assert isinstance(pid, int)
    assert session(data_dir, linger_s=0)["pid"] == pid  # adopts, then stops as the last user
    assert wait_until(lambda: not alive(pid), 30)
    assert wait_until(lambda: not reapers(data_dir), 15)


def test_without_a_linger_the_last_user_stops_the_server(data_dir: Path) -> None:
    pid = session(data_dir, linger_s=0)["pid"]
    assert isinstance(pid, int)
    assert wait_until(lambda: not alive(pid), 30)
    assert not EmbeddedFalkorDB(data_dir).linger_file.exists()
    assert reapers(data_dir) == []


def test_a_negative_linger_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="linger_s must be 0"):
        EmbeddedFalkorDB(tmp_path, linger_s=-1)


@pytest.mark.anyio
async def test_the_setting_reaches_the_stores_server(data_dir: Path) -> None:
    store = FalkorStore(StorageSettings(data_dir=data_dir, embedded_linger_s=60))
    await store.connect()
    await store.query("linger_probe", "CREATE (:E_Entity {uuid: 'l1', name: 'kept up'})")
    assert store.embedded is not None and store.embedded.linger_s == 60
    pid = store.embedded.pid
    assert isinstance(pid, int)
    await store.close()  # the last user: the server stays for the next one
    assert alive(pid) and EmbeddedFalkorDB(data_dir).lingering_until() is not None

    again = FalkorStore(StorageSettings(data_dir=data_dir, embedded_linger_s=0))
    await again.connect()
    try:
        assert again.embedded is not None and again.embedded.pid == pid
        res = await again.query("linger_probe", "MATCH (n:E_Entity) RETURN n.name", read_only=True)
        assert res.rows == [["kept up"]]
    finally:
        await again.close()  # no linger: the last user stops it
    assert wait_until(lambda: not alive(pid), 30)


def test_without_a_way_to_start_the_reaper_the_last_user_stops_the_server(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = EmbeddedFalkorDB(data_dir, linger_s=60)
    server.ensure_running()
    pid = server.pid
    assert isinstance(pid, int)
    monkeypatch.setattr(sys, "executable", str(data_dir / "no-python-here"))
    server.stop()  # a server nobody would ever stop is worse than a new start
    assert not alive(pid)
    assert server.lingering_until() is None


def test_a_lingering_server_whose_data_dir_is_removed_is_stopped(tmp_path: Path) -> None:
    """A temporary data dir removed while its server lingers: nobody can adopt it any
    more, so the reaper stops it at once instead of leaving it running for good."""
    data_dir = tmp_path / "scratch"
    pid = session(data_dir, linger_s=120)["pid"]
    assert isinstance(pid, int) and alive(pid)
    shutil.rmtree(data_dir)
    assert wait_until(lambda: not alive(pid)), "the server of a removed data dir kept running"
    assert wait_until(lambda: not reapers(data_dir), 15)
