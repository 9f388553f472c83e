"""`polyg backup DIR` while writes go on, and `polyg restore DIR` into an empty data dir.

Before, there was no supported way to take a consistent backup of a running polyg.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
import redis
from polyg_cli.app import app
from polyg_core.testing.restart import RestartableFalkorDB
from typer.testing import CliRunner

pytestmark = pytest.mark.slow

GRAPH = "ledger"


def cli(data_dir: Path, *args: str) -> Any:
    env = {"POLYG_DATA_DIR": str(data_dir), "LLM_MODEL": "", "NO_COLOR": "1"}
    result = CliRunner().invoke(app, [*args, "--json"], env=env)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def query(client: redis.Redis, cypher: str) -> Any:
    return client.execute_command("GRAPH.QUERY", GRAPH, cypher)


class Writer(threading.Thread):
    """Writes entries 0, 1, 2, ... one at a time; `acked` counts the acknowledged ones."""

    def __init__(self, sock: str) -> None:
        super().__init__(daemon=True)
        self.client = redis.Redis(unix_socket_path=sock)
        self.acked = 0
        self.halt = threading.Event()

    def run(self) -> None:
        while not self.halt.is_set() and self.acked < 200_000:
            i = self.acked
            query(self.client, f"CREATE (:Entry {{seq: {i}, vec: vecf32([{i}.0, 1.0])}})")
            self.acked = i + 1


def test_a_backup_taken_during_writes_restores_a_consistent_prefix(tmp_path: Path) -> None:
    live = RestartableFalkorDB(tmp_path / "live")
    sock = live.start().socket_path
    setup = redis.Redis(unix_socket_path=sock)
    query(
        setup,
        "CREATE VECTOR INDEX FOR (e:Entry) ON (e.vec) "
        "OPTIONS {dimension: 2, similarityFunction: 'euclidean'}",
    )
    writer = Writer(sock)
    writer.start()
    try:
        while writer.acked < 200 and writer.is_alive():
            writer.halt.wait(0.01)
        before = writer.acked
        made = cli(tmp_path / "live", "backup", str(tmp_path / "bk"))
        after = writer.acked
    finally:
        writer.halt.set()
        writer.join(timeout=30)
        setup.close()
    assert made["graphs"] == [GRAPH] and made["bytes"] > 0
    assert after > before, "no write went on while the backup ran"
    live.stop()

    restored = cli(tmp_path / "restored", "restore", str(tmp_path / "bk"))
    assert restored["graphs"] == [GRAPH]
    server = RestartableFalkorDB(tmp_path / "restored")
    client = redis.Redis(unix_socket_path=server.start().socket_path)
    try:
        reply = query(client, "MATCH (e:Entry) RETURN count(e), min(e.seq), max(e.seq)")
        count, low, high = reply[1][0]
        # One point in time: every write acknowledged before the backup began, and
        # exactly the entries 0..count-1 (a prefix of one writer's sequence).
        assert before <= count <= after
        assert (low, high) == (0, count - 1)
        knn = query(
            client,
            "CALL db.idx.vector.queryNodes('Entry', 'vec', 5, vecf32([0.0, 1.0])) "
            "YIELD node RETURN node.seq ORDER BY node.seq",
        )
        assert [row[0] for row in knn[1]] == [0, 1, 2, 3, 4]
    finally:
        client.close()
        server.stop()


def test_restore_refuses_a_data_dir_that_holds_data(tmp_path: Path) -> None:
    live = RestartableFalkorDB(tmp_path / "live")
    client = redis.Redis(unix_socket_path=live.start().socket_path)
    query(client, "CREATE (:Entry {seq: 0})")
    client.close()
    cli(tmp_path / "live", "backup", str(tmp_path / "bk"))
    env = {"POLYG_DATA_DIR": str(tmp_path / "live"), "LLM_MODEL": "", "NO_COLOR": "1"}
    live.stop()
    result = CliRunner().invoke(app, ["restore", str(tmp_path / "bk")], env=env)
    assert result.exit_code == 1
    assert "already holds data" in result.output
    result = CliRunner().invoke(app, ["backup", str(tmp_path / "bk")], env=env)
    assert result.exit_code == 1 and "is not empty" in result.output
