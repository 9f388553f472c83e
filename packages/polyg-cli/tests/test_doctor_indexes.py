"""`polyg doctor` on vector indexes that a replay of the append-only file broke."""

from __future__ import annotations

import json

import anyio
import pytest
from polyg_cli.app import app
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.testing.restart import RestartableFalkorDB
from typer.testing import CliRunner

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

NS = "doctor_idx"


def doctor(server: RestartableFalkorDB, *args: str) -> tuple[int, dict[str, dict[str, object]]]:
    env = {"POLYG_DATA_DIR": str(server.data_dir), "LLM_MODEL": "", "NO_COLOR": "1"}
    result = CliRunner().invoke(app, ["doctor", "--json", *args], env=env)
    return result.exit_code, {c["name"]: c for c in json.loads(result.stdout)["checks"]}


async def test_doctor_reports_a_broken_vector_index_and_repair_rebuilds_it(
    restartable_falkordb: RestartableFalkorDB, embedder: Embedder
) -> None:
    server = restartable_falkordb
    # Written as to an external server (index definitions stay in the AOF's incremental
    # part), killed, and started without the check: the state an unchecked start leaves.
    server.verify_indexes = False
    async with server.store(url=server.socket_url) as store:
        memory = Memory(store=store, embedder=embedder, namespace=NS)
        for i in range(40):
            await memory.entities.add(NS, f"host-{i}", "Host")
    await anyio.to_thread.run_sync(lambda: server.restart(kill=True))
    async with server.store() as store:
        if all(c.healthy for c in await store.check_vector_indexes()):
            pytest.skip("this FalkorDB build replays vector indexes intact")

    code, checks = await anyio.to_thread.run_sync(lambda: doctor(server))
    assert code != 0
    assert checks["FalkorDB"]["ok"] is True
    vec = checks["vector indexes"]
    assert vec["ok"] is False
    assert f"graph '{NS}' E_Entity.embedding: k-NN returned" in str(vec["detail"])
    assert "polyg doctor --repair" in str(vec["fix"])

    code, checks = await anyio.to_thread.run_sync(lambda: doctor(server, "--repair"))
    vec = checks["vector indexes"]
    assert vec["ok"] is True, vec
    assert "rebuilt in" in str(vec["detail"]) and "now 32 of 32" in str(vec["detail"])
    assert code == 0

    code, checks = await anyio.to_thread.run_sync(lambda: doctor(server))
    assert code == 0 and checks["vector indexes"]["ok"] is True
    assert "returned" not in str(checks["vector indexes"]["detail"])
