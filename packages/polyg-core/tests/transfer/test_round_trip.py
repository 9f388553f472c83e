"""Export then import into an empty namespace gives the same database state.

The state is read with Cypher from both namespaces: the count of every label and
relationship type, and every node's and edge's properties (uuids and times
included; embeddings aside, they are recomputed). Three transfers are checked:
JSONL through `polyg import`'s writer, a Cypher dump through the same writer, and
the Cypher dump replayed statement by statement in the bare database with plain
`GRAPH.QUERY` (no polyg code).
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
import redis
from polyg_bench.generate import generate
from polyg_core.config import StorageSettings
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.scenarios import load_scenario
from polyg_core.storage.embedded import EmbeddedFalkorDB
from polyg_core.storage.store import FalkorStore
from polyg_core.testing.roundtrip import HashEmbedder, State, assert_same, read_state
from polyg_core.transfer import RecordWriter, iter_export, iter_records, write_jsonl
from polyg_core.transfer.cypher_dump import write_cypher

pytestmark = pytest.mark.anyio

DEMO = ("deployment_failure", "incident_response")


async def export_jsonl(store: FalkorStore, ns: str, path: Path) -> int:
    with path.open("w", encoding="utf-8") as out:
        return await write_jsonl(iter_export(store, ns, page=300), out)


async def export_cypher(store: FalkorStore, ns: str, path: Path) -> int:
    with path.open("w", encoding="utf-8") as out:
        return await write_cypher(store, ns, out, page=300)


async def import_file(store: FalkorStore, embedder: Embedder, ns: str, path: Path, fmt: str):
    report = await RecordWriter.build(store, embedder).run(ns, lambda: iter_records(path, fmt))
    assert report.failed == 0, report.errors[:5]
    return report


def replay_bare(server: EmbeddedFalkorDB, ns: str, path: Path) -> int:
    """Run every statement of a dump with GRAPH.QUERY, pipelined; the number run."""
    client = redis.Redis(unix_socket_path=server.socket_path, socket_timeout=120)
    lines = [
        line.strip()
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("//")
    ]
    try:
        for i in range(0, len(lines), 500):
            pipe = client.pipeline(transaction=False)
            for line in lines[i : i + 500]:
                pipe.execute_command("GRAPH.QUERY", ns, line)
            for reply, line in zip(
                pipe.execute(raise_on_error=False), lines[i : i + 500], strict=True
            ):
                assert not isinstance(reply, Exception), (line[:200], reply)
    finally:
        client.close()
    return len(lines)


async def round_trips(
    store: FalkorStore,
    embedder: Embedder,
    server: EmbeddedFalkorDB,
    source: str,
    tmp_path: Path,
) -> dict[str, State]:
    """The state of the source and of its three copies (jsonl, cypher, bare)."""
    states = {"source": await read_state(store, source)}
    jsonl, cypher = tmp_path / "dump.jsonl", tmp_path / "dump.cypher"
    await export_jsonl(store, source, jsonl)
    await export_cypher(store, source, cypher)
    copies = {name: f"{source}_{name}" for name in ("jsonl", "cypher", "bare")}
    try:
        await import_file(store, embedder, copies["jsonl"], jsonl, "jsonl")
        states["jsonl"] = await read_state(store, copies["jsonl"])
        await import_file(store, embedder, copies["cypher"], cypher, "cypher")
        states["cypher"] = await read_state(store, copies["cypher"])
        await anyio.to_thread.run_sync(replay_bare, server, copies["bare"], cypher)
        states["bare"] = await read_state(store, copies["bare"])
    finally:
        for ns in copies.values():
            await store.delete_graph(ns)
    return states


async def build_demo(store: FalkorStore, embedder: Embedder, ns: str) -> None:
    """The `polyg demo` scenarios, plus one of each thing the scenarios lack."""
    mem = Memory(store, embedder, namespace=ns)
    for name in DEMO:
        report = await load_scenario(mem, name, ns)
        assert report.failed == 0, report.errors
    # the same name for two types: references to it are exported as uuids
    await mem.entities.add(ns, "atlas", "Service", {"tier": 2, "tags": ["core"]})
    await mem.entities.add(ns, "atlas", "Project", {"budget": 1.5})
    await mem.temporal.add_event(
        ns, "atlas migration window", "2026-01-09T08:00:00Z", duration_ms=3_600_000
    )
    await mem.temporal.add_fact(
        ns, "Dana", "works_on", "atlas", "2025-01-01T00:00:00Z", "2025-12-31T00:00:00Z"
    )
    await mem.causal.add_node(ns, "quarterly capacity review", "condition", entities=["Dana"])
    await mem.causal.add_link(
        ns,
        "disk full on atlas-db",
        "atlas writes rejected",
        0.7,
        entities=["atlas-db"],
        events=["atlas migration window"],
    )
    await mem.causal.add_solution(ns, "disk full on atlas-db", "grow the atlas-db volume", "ops")
    await mem.semantic.add_concept(ns, "storage capacity", "disks and volumes", ["atlas-db"])
    await mem.semantic.add_concept(ns, "disk capacity", "how full disks are", ["atlas-db"])
    await mem.semantic.add_memory(
        ns, "Grow volumes before they reach 90%.", "procedural", ["ops"], ["storage capacity"]
    )
    # cross-links made on purpose carry their creation time
    dana = await mem.entities.get(ns, "Dana")
    disk, _ = await mem.semantic.add_concept(ns, "disk capacity")
    review = await mem.causal.get(ns, "quarterly capacity review")
    window = await mem.temporal.resolve_event(ns, "atlas migration window", fuzzy=False)
    await mem.crosslinks.link(ns, "X_REPRESENTS", disk.uuid, dana.uuid)
    await mem.crosslinks.link(ns, "X_REFERS_TO", review.uuid, window.uuid)
    await mem.crosslinks.link(ns, "X_INVOLVES", window.uuid, dana.uuid)


async def test_demo_round_trip_keeps_the_database_state(
    store: FalkorStore,
    embedder: Embedder,
    falkordb_server: EmbeddedFalkorDB,
    namespace: str,
    tmp_path: Path,
) -> None:
    with anyio.fail_after(300):
        await build_demo(store, embedder, namespace)
        states = await round_trips(store, embedder, falkordb_server, namespace, tmp_path)
    source = states["source"]
    # what the demo must contain for this test to mean something
    assert source.types["X_AFFECTS"] > 0 and source.types["C_SOLVED_BY"] == 1
    assert source.types["X_REFERS_TO"] > 0 and source.types["S_SIMILAR_TO"] >= 0
    isolated = await store.query(
        namespace, "MATCH (c:C_Node) WHERE NOT (c)-[:C_CAUSES|C_SOLVED_BY]-() RETURN count(c)"
    )
    assert isolated.rows[0][0] >= 1
    timed = await store.query(
        namespace,
        "MATCH ()-[r:X_REPRESENTS|X_REFERS_TO|X_INVOLVES]->() WHERE r.created_at IS NOT NULL "
        "RETURN type(r), count(r)",
    )
    assert {str(t): int(c) for t, c in timed.rows} == {
        "X_REPRESENTS": 1,
        "X_REFERS_TO": 1,
        "X_INVOLVES": 1,
    }
    for name in ("jsonl", "cypher", "bare"):
        assert_same(source, states[name], name)


async def test_a_generated_namespace_round_trips(
    store: FalkorStore,
    embedder: Embedder,
    falkordb_server: EmbeddedFalkorDB,
    namespace: str,
    tmp_path: Path,
) -> None:
    with anyio.fail_after(600):
        await generate(store, namespace, 60, seed=5)
        states = await round_trips(store, embedder, falkordb_server, namespace, tmp_path)
    source = states["source"]
    assert source.labels["E_Entity"] == 60 and source.types["T_BEFORE"] > 0
    for name in ("jsonl", "cypher", "bare"):
        assert_same(source, states[name], name)


# 91,000 records through the graphs: on two shared, busy cores the JSONL import took 26 min
# and the bare replay of 126,000 statements 11 min (docs/import-format.md).
# POLYG_HEAVY_TESTS=1 uv run pytest packages/polyg-core/tests/transfer/test_round_trip.py -m heavy
@pytest.mark.slow
@pytest.mark.heavy
async def test_a_generated_10k_namespace_round_trips(
    falkordb_server: EmbeddedFalkorDB, namespace: str, tmp_path: Path
) -> None:
    # Batches of 1,000 vectors can take more than the default 30 s on a busy machine.
    settings = StorageSettings(
        data_dir=falkordb_server.data_dir, query_timeout_ms=600_000, embedded_linger_s=0
    )
    store = await FalkorStore(settings).connect()
    try:
        with anyio.fail_after(7200):
            await generate(store, namespace, 10_000, seed=3)
            states = await round_trips(store, HashEmbedder(), falkordb_server, namespace, tmp_path)
    finally:
        await store.close()
    source = states["source"]
    assert source.labels["E_Entity"] == 10_000
    print({name: (dict(st.labels), dict(st.types)) for name, st in states.items()})
    for name in ("jsonl", "cypher", "bare"):
        assert_same(source, states[name], name)
