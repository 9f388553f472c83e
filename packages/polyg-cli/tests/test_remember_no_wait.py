"""`polyg remember --no-wait`: the text is queued, a worker writes it, `polyg jobs` follows it."""

from __future__ import annotations

import json

from polyg_cli.app import app
from typer.testing import CliRunner

NOTE = "The cache failed on 2026-01-12 because the disk of cache-node-7 was full."


def polyg(env: dict[str, str], *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), env=env)
    return result.exit_code, result.stdout


def test_remember_no_wait_queues_the_text_and_a_worker_writes_it(
    env: dict[str, str], graph: str
) -> None:
    code, out = polyg(env, "remember", NOTE, "-g", graph, "--no-wait")
    assert code == 0, out
    assert "queued as job remember:" in out and "polyg jobs show" in out
    code, out = polyg(env, "remember", NOTE, "-g", graph, "--no-wait", "--json")
    assert code == 0, out
    ref = json.loads(out)
    assert ref["deduplicated"] is True and ref["graph"] == graph
    code, out = polyg(env, "worker", "--burst", "-c", "1")
    assert code == 0, out
    code, out = polyg(env, "jobs", "show", ref["job_id"])
    assert code == 0, out
    info = json.loads(out)
    assert info["status"] == "done", info
    assert info["result"]["created"] is True


def test_remember_no_wait_rejects_a_bad_graph_name(env: dict[str, str]) -> None:
    code, _ = polyg(env, "remember", NOTE, "-g", "bad name!", "--no-wait")
    assert code != 0
