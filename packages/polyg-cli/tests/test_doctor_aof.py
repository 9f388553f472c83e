"""`polyg doctor` on a torn or corrupt append-only file, and `--repair` that cuts it.

Before, a torn file loaded without its last acknowledged write while doctor said
"ok", and a corrupt one stopped polyg with no way to repair it.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import redis
from polyg_cli.app import app
from polyg_core.storage import aof_check
from polyg_core.testing.restart import RestartableFalkorDB
from typer.testing import CliRunner

pytestmark = pytest.mark.slow


def doctor(data_dir: Path, *args: str) -> tuple[int, dict[str, dict[str, object]]]:
    env = {"POLYG_DATA_DIR": str(data_dir), "LLM_MODEL": "", "NO_COLOR": "1"}
    result = CliRunner().invoke(app, ["doctor", "--json", *args], env=env)
    return result.exit_code, {c["name"]: c for c in json.loads(result.stdout)["checks"]}


def write_and_kill(data_dir: Path, people: int) -> Path:
    """Acknowledged writes left in the AOF's incremental part, then SIGKILL; its path."""
    server = RestartableFalkorDB(data_dir)
    sock = server.start().socket_path
    client = redis.Redis(unix_socket_path=sock)
    try:
        # The tear must act on a file that holds every write. Under `everysec` redis
        # replies before it writes when the last background fsync is still running (a
        # busy disk): up to 2 s of acknowledged writes sit in its buffer, and the SIGKILL
        # drops them. Once in three full runs only the first write had reached the file,
        # the tear cut it, and the repaired server counted 0 people. `always` writes and
        # fsyncs each one before the reply.
        client.config_set("appendfsync", "always")
        # A rewrite of the file that a new server starts opens a new incremental part when
        # it ends: writes made while it runs would be split over two parts.
        _rewrites_done(client)
        for i in range(people):
            client.execute_command(
                "GRAPH.QUERY", "people", f"CREATE (:Person {{name: 'Orla Fenwick {i}'}})"
            )
    finally:
        client.close()
    server.kill()
    # The parts in the order written ("appendonly.aof.10.incr.aof" after ".9."); the last
    # write is in the last part, and each write in one of them.
    incr = sorted(
        aof_check.aof_dir(data_dir / "falkordb").glob("*.incr.aof"),
        key=lambda p: int(p.name.split(".")[-3]) if p.name.split(".")[-3].isdigit() else 0,
    )
    assert incr, "the writes did not reach an incremental AOF file"
    held = b"".join(p.read_bytes() for p in incr)
    missing = [i for i in range(people) if f"Orla Fenwick {i}'".encode() not in held]
    assert not missing, (missing, [p.name for p in incr])
    assert f"Orla Fenwick {people - 1}'".encode() in incr[-1].read_bytes()
    return incr[-1]


def _rewrites_done(client: redis.Redis, polls: int = 100) -> None:
    """Wait (at most `polls` tenths of a second) until no AOF rewrite runs or waits."""
    for _ in range(polls):
        info: dict[str, Any] = client.info("persistence")
        if not info.get("aof_rewrite_in_progress") and not info.get("aof_rewrite_scheduled"):
            return
        time.sleep(0.1)


def people(data_dir: Path) -> int:
    server = RestartableFalkorDB(data_dir)
    sock = server.start().socket_path
    client = redis.Redis(unix_socket_path=sock)
    try:
        reply: Any = client.execute_command(
            "GRAPH.QUERY", "people", "MATCH (p:Person) RETURN count(p)"
        )
        return int(reply[1][0][0])
    finally:
        client.close()
        server.stop()


def test_doctor_reports_a_torn_file_and_repair_says_what_it_cut(tmp_path: Path) -> None:
    incr = write_and_kill(tmp_path, 5)
    with incr.open("r+b") as fh:  # a write torn by power loss: its last bytes never landed
        fh.truncate(incr.stat().st_size - 7)
    torn_size = incr.stat().st_size

    code, checks = doctor(tmp_path)
    aof = checks["append-only file"]
    assert code != 0 and aof["ok"] is False
    assert "about 1 commands" in str(aof["detail"])
    assert "polyg doctor --repair" in str(aof["fix"])

    code, checks = doctor(tmp_path, "--repair")
    aof = checks["append-only file"]
    assert aof["ok"] is True, aof
    assert "repaired: cut" in str(aof["detail"]) and "about 1 commands" in str(aof["detail"])
    kept = list(incr.parent.parent.glob("appendonlydir.before-repair-*"))
    assert len(kept) == 1 and (kept[0] / incr.name).stat().st_size == torn_size
    assert checks["FalkorDB"]["ok"] is True
    assert code == 0
    assert people(tmp_path) == 4


def test_a_corrupt_file_stops_nothing_after_repair(tmp_path: Path) -> None:
    incr = write_and_kill(tmp_path, 6)
    data = bytearray(incr.read_bytes())
    middle = data.index(b"Orla Fenwick 3")
    start = data.rindex(b"\r\n*", 0, middle) + 2  # the first byte of the fourth command
    data[start : start + 4] = b"#!?x"
    incr.write_bytes(bytes(data))

    code, checks = doctor(tmp_path)
    aof = checks["append-only file"]
    assert code != 0 and aof["ok"] is False
    assert "about 3 commands" in str(aof["detail"]), aof
    assert checks["FalkorDB"]["ok"] is False

    code, checks = doctor(tmp_path, "--repair")
    assert checks["append-only file"]["ok"] is True, checks["append-only file"]
    assert checks["FalkorDB"]["ok"] is True
    assert code == 0
    assert people(tmp_path) == 3
