"""`polyg remember`, `polyg recall`, `polyg jobs` and `polyg worker` through typer's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
from polyg_cli.app import app
from polyg_core.config import StorageSettings
from polyg_core.jobs import JobQueue
from polyg_core.storage.store import FalkorStore
from typer.testing import CliRunner

REF = "2026-01-14T12:00:00Z"


def polyg(env: dict[str, str], *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), env=env)
    return result.exit_code, result.stdout


def test_remember_then_recall_pretty_and_json(env: dict[str, str], graph: str) -> None:
    code, out = polyg(
        env,
        "remember",
        "The deploy failed due to missing env var DATABASE_URL.",
        "-g",
        graph,
        "--at",
        REF,
    )
    assert code == 0, out
    assert "DATABASE_URL" in out
    code, out = polyg(env, "recall", "Why did the deploy fail?", "-g", graph, "--at", REF)
    assert code == 0, out
    assert "DATABASE_URL" in out
    assert "degraded" in out  # the rule-based path says so
    assert "memories" in out and "lexical" in out  # the ranked memories and their retrievers
    code, out = polyg(env, "recall", "Why did the deploy fail?", "-g", graph, "--at", REF, "--json")
    assert code == 0, out
    data = json.loads(out)
    assert data["degraded"] is True
    assert any("DATABASE_URL" in s["cause"] for s in data["reasoning"]["causal_chain"])
    assert "DATABASE_URL" in data["memories"][0]["content"]
    code, out = polyg(
        env, "recall", "deploy", "-g", graph, "--at", REF, "--retrievers", "dense", "--json"
    )
    assert code == 0, out
    assert set(json.loads(out)["memories"][0]["retrievers"]) == {"dense"}
    code, out = polyg(env, "recall", "deploy", "-g", graph, "--retrievers", "bm25")
    assert code != 0
    code, out = polyg(env, "remember", "   ", "-g", graph)
    assert code == 1


async def _enqueue(data_dir: str, graph: str) -> str:
    store = await FalkorStore(
        StorageSettings(data_dir=Path(data_dir), embedded_linger_s=0)
    ).connect()
    try:
        queue = await JobQueue.open(store)
        try:
            ref = await queue.enqueue_remember(
                "The cache failed because the disk was full.", graph=graph, reference_time=REF
            )
        finally:
            await queue.close()
    finally:
        await store.close()
    return ref.job_id


def test_jobs_are_listed_shown_cancelled_retried_and_run_by_a_worker(
    env: dict[str, str], graph: str
) -> None:
    job_id = anyio.run(_enqueue, env["POLYG_DATA_DIR"], graph)
    code, out = polyg(env, "jobs", "-g", graph, "--json")
    assert code == 0, out
    assert job_id in out
    code, out = polyg(env, "jobs", "show", job_id)
    assert code == 0, out
    assert "queued" in out
    code, out = polyg(env, "jobs", "cancel", job_id)
    assert code == 0, out
    assert "cancelled" in out
    code, out = polyg(env, "jobs", "retry", job_id)
    assert code == 0, out
    code, out = polyg(env, "worker", "--burst", "-c", "1")
    assert code == 0, out
    code, out = polyg(env, "jobs", "show", job_id)
    assert "done" in out, out
    code, out = polyg(env, "jobs", "show", "remember:nope:0")
    assert code == 1
