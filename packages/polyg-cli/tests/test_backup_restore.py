"""`polyg backup DIR` while writes go on, `polyg restore DIR` into an empty data dir, and
`polyg restore DIR --graph NAME` of one graph into a data dir in use, the others untouched.

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


def seed(data_dir: Path, *writes: tuple[str, str], backup_to: Path | None = None) -> None:
    """Start a FalkorDB on `data_dir`, run each (graph, cypher) write, back the data dir up
    to `backup_to` when given, and stop the server."""
    server = RestartableFalkorDB(data_dir)
    try:
        client = redis.Redis(unix_socket_path=server.start().socket_path)
        try:
            for graph, cypher in writes:
                client.execute_command("GRAPH.QUERY", graph, cypher)
        finally:
            client.close()
        if backup_to is not None:
            cli(data_dir, "backup", str(backup_to))
    finally:
        server.stop()


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
    seed(tmp_path / "live", (GRAPH, "CREATE (:Entry {seq: 0})"), backup_to=tmp_path / "bk")
    env = {"POLYG_DATA_DIR": str(tmp_path / "live"), "LLM_MODEL": "", "NO_COLOR": "1"}
    result = CliRunner().invoke(app, ["restore", str(tmp_path / "bk")], env=env)
    assert result.exit_code == 1
    assert "already holds data" in result.output
    result = CliRunner().invoke(app, ["backup", str(tmp_path / "bk")], env=env)
    assert result.exit_code == 1 and "is not empty" in result.output


def count(client: redis.Redis, graph: str, label: str) -> int:
    reply: Any = client.execute_command(
        "GRAPH.RO_QUERY", graph, f"MATCH (n:{label}) RETURN count(n)"
    )
    return int(reply[1][0][0])


def restore_graph(data_dir: Path, *args: str) -> Any:
    env = {"POLYG_DATA_DIR": str(data_dir), "LLM_MODEL": "", "NO_COLOR": "1"}
    return CliRunner().invoke(app, ["restore", *args], env=env)


def test_one_graph_is_restored_into_a_running_data_dir_and_the_others_stay(
    tmp_path: Path,
) -> None:
    live = RestartableFalkorDB(tmp_path / "live")
    client = redis.Redis(unix_socket_path=live.start().socket_path)
    query(
        client,
        "CREATE VECTOR INDEX FOR (e:Entry) ON (e.vec) "
        "OPTIONS {dimension: 2, similarityFunction: 'euclidean'}",
    )
    query(client, "UNWIND range(0, 49) AS i CREATE (:Entry {seq: i, vec: vecf32([i, 1.0])})")
    client.execute_command("GRAPH.QUERY", "notes", "CREATE (:Note {text: 'kept before'})")
    cli(tmp_path / "live", "backup", str(tmp_path / "bk"))
    assert live.server is not None and live.server.running_socket() is not None

    # After the backup: the ledger loses entries by mistake, the notes graph moves on.
    query(client, "MATCH (e:Entry) WHERE e.seq >= 10 DELETE e")
    client.execute_command("GRAPH.QUERY", "notes", "CREATE (:Note {text: 'written after'})")

    refused = restore_graph(tmp_path / "live", str(tmp_path / "bk"), "--graph", GRAPH)
    assert refused.exit_code == 1
    assert "already holds data" in refused.output and "--replace" in refused.output
    assert count(client, GRAPH, "Entry") == 10

    done = restore_graph(
        tmp_path / "live", str(tmp_path / "bk"), "--graph", GRAPH, "--replace", "--json"
    )
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["graphs"] == [GRAPH]
    # The server went on serving this client; the restored graph is the backup's.
    assert count(client, GRAPH, "Entry") == 50
    assert count(client, "notes", "Note") == 2
    knn = query(
        client,
        "CALL db.idx.vector.queryNodes('Entry', 'vec', 5, vecf32([20.0, 1.0])) "
        "YIELD node RETURN node.seq ORDER BY node.seq",
    )
    assert [row[0] for row in knn[1]] == [18, 19, 20, 21, 22]
    client.close()

    # What was restored is durable: after a SIGKILL and a replay, the same.
    live.restart(kill=True)
    assert live.server is not None
    client = redis.Redis(unix_socket_path=live.server.socket_path)
    try:
        assert count(client, GRAPH, "Entry") == 50
        assert count(client, "notes", "Note") == 2
    finally:
        client.close()
        live.stop()


def test_one_graph_is_restored_into_a_stopped_data_dir_that_lacks_it(tmp_path: Path) -> None:
    seed(
        tmp_path / "first",
        (GRAPH, "CREATE (:Entry {seq: 1}), (:Entry {seq: 2})"),
        ("drafts", "CREATE (:Draft)"),
        backup_to=tmp_path / "bk",
    )
    seed(tmp_path / "other", ("notes", "CREATE (:Note)"))
    other = RestartableFalkorDB(tmp_path / "other")

    done = restore_graph(tmp_path / "other", str(tmp_path / "bk"), "--graph", GRAPH)
    assert done.exit_code == 0, done.output
    assert f"restored graph '{GRAPH}'" in done.output
    client = redis.Redis(unix_socket_path=other.start().socket_path)
    try:
        graphs: list[bytes] = client.execute_command("GRAPH.LIST") or []
        listed = sorted(g.decode() for g in graphs)
        assert listed == [GRAPH, "notes"]  # not the backup's other graph
        assert count(client, GRAPH, "Entry") == 2
    finally:
        client.close()
        other.stop()


def test_restoring_one_graph_names_what_was_wrong(tmp_path: Path) -> None:
    seed(tmp_path / "live", (GRAPH, "CREATE (:Entry {seq: 0})"), backup_to=tmp_path / "bk")

    missing = restore_graph(tmp_path / "live", str(tmp_path / "bk"), "--graph", "payroll")
    assert missing.exit_code == 1
    assert "holds no graph 'payroll'" in missing.output and "'ledger'" in missing.output
    bad = restore_graph(tmp_path / "live", str(tmp_path / "bk"), "--graph", "no such/graph")
    assert bad.exit_code == 1 and "no such/graph" in bad.output
    lone = restore_graph(tmp_path / "live", str(tmp_path / "bk"), "--replace")
    assert lone.exit_code == 1 and "--replace goes with --graph" in lone.output
    whole = restore_graph(tmp_path / "live", str(tmp_path / "bk"))
    assert whole.exit_code == 1 and "--graph NAME" in whole.output
