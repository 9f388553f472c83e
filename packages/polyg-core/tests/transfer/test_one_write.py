"""An import writes each node it creates once, with the stored properties of its export.

A node written twice (created by the graph, then given its exported properties in a
second query) is indexed twice, and FalkorDB 4.16.3 keeps the first vector as an
orphan entry that takes a k-NN slot (docs/reliability.md): an imported export answered
16 of 32. Written once, the index answers in full.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from polyg_core.graphs.entity import EntityGraph
from polyg_core.graphs.temporal import TemporalGraph
from polyg_core.resolve import NameResolver
from polyg_core.storage.store import FalkorStore
from polyg_core.testing.roundtrip import HashEmbedder, assert_same, read_state
from polyg_core.transfer import ImportReport, RecordWriter, iter_export, iter_records, write_jsonl

pytestmark = pytest.mark.anyio


async def index_writes(store: FalkorStore, ns: str, label: str) -> int:
    """How many times FalkorDB has indexed a node of `label`: each write of a node mints
    a new document id in the label's index (its `maxDocId`), a second write included."""
    res = await store.query(
        ns, "CALL db.indexes() YIELD label, info RETURN label, info", read_only=True
    )
    for got, info in res.rows:
        if got == label:
            return int(info["maxDocId"])
    raise AssertionError(f"no index on {label}")


def fresh(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


async def import_file(store: FalkorStore, ns: str, path: Path) -> ImportReport:
    """Import the JSON Lines file at `path` into `ns`."""
    return await RecordWriter.build(store, HashEmbedder()).run(
        ns, lambda: iter_records(path, "jsonl")
    )


async def exported_entities(store: FalkorStore, tmp_path: Path, n: int) -> tuple[str, Path]:
    """A namespace of `n` invented entities (some implied by a relation), and its export."""
    embedder = HashEmbedder()
    graph = EntityGraph(store, embedder, NameResolver(store, embedder))
    ns = fresh("one-write-src")
    await graph.add_many(
        ns,
        [(f"lantern-{i}", "Device", {"batch": i % 4} if i % 2 else None) for i in range(n)],
    )
    # An entity only implied by another write keeps that origin through the round trip.
    await graph.add_many(ns, [("harbour office", "entity", None)], origin="ensure")
    await graph.link(ns, "lantern-0", "harbour office", "installed_at")
    path = tmp_path / "export.jsonl"
    with path.open("w", encoding="utf-8") as out:
        await write_jsonl(iter_export(store, ns, page=100), out)
    return ns, path


async def knn_rows(store: FalkorStore, ns: str, k: int) -> int:
    vector = [float(x) for x in (await HashEmbedder().embed(["a lamp by the quay"]))[0]]
    res = await store.query(
        ns,
        "CALL db.idx.vector.queryNodes('E_Entity', 'embedding', $k, vecf32($v)) "
        "YIELD node RETURN count(node)",
        {"k": k, "v": vector},
        read_only=True,
    )
    return int(res.scalar(0))


async def test_an_imported_export_writes_each_entity_once_with_its_stored_properties(
    store: FalkorStore, tmp_path: Path
) -> None:
    src, path = await exported_entities(store, tmp_path, 40)
    target = fresh("one-write-dst")
    report = await import_file(store, target, path)
    assert report.failed == 0, report.errors
    assert report.kinds["entity"].created == 41
    assert_same(await read_state(store, src), await read_state(store, target), "import")
    # 41 entities, 41 index documents: each node written once (it was 82 when the
    # stored properties were restored by a second query).
    assert await index_writes(store, target, "E_Entity") == 41
    # A second import of the same file writes nothing again.
    again = await import_file(store, target, path)
    assert again.created == 0
    assert await index_writes(store, target, "E_Entity") == 41
    assert_same(await read_state(store, src), await read_state(store, target), "re-import")


async def test_an_imported_export_answers_vector_search_in_full(
    store: FalkorStore, tmp_path: Path
) -> None:
    _, path = await exported_entities(store, tmp_path, 40)
    target = fresh("one-write-knn")
    report = await import_file(store, target, path)
    assert report.failed == 0, report.errors
    assert await knn_rows(store, target, 32) == 32
    assert await knn_rows(store, target, 41) == 41


async def test_an_import_of_events_indexes_each_new_event_once(
    store: FalkorStore, tmp_path: Path
) -> None:
    path = tmp_path / "events.jsonl"
    lines = [
        json.dumps(
            {
                "kind": "event",
                "description": f"ferry {i} left the north pier late",
                "occurred_at": f"2026-04-{1 + i % 28:02d}T0{i % 10}:00:00Z",
                "entities": [f"ferry-{i % 5}", "north pier"],
            }
        )
        for i in range(30)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    target = fresh("one-write-events")
    report = await import_file(store, target, path)
    assert report.failed == 0, report.errors
    assert report.kinds["event"].created == 30
    assert await index_writes(store, target, "T_Event") == 30
    # Importing the file again matches every event and writes none of them again.
    again = await import_file(store, target, path)
    assert again.kinds["event"].merged == 30
    assert await index_writes(store, target, "T_Event") == 30
    linked = await store.query(
        target, "MATCH (:T_Event)-[r:X_INVOLVES]->(:E_Entity) RETURN count(r)", read_only=True
    )
    assert linked.scalar() == 60


VECTOR_KINDS = ("S_Memory", "S_Concept", "C_Node")


async def exported_vector_nodes(store: FalkorStore, tmp_path: Path, n: int) -> tuple[str, Path]:
    """A namespace of `n` invented memories, concepts and causal nodes (each with a
    vector), written by an import of hand-written records, and its export."""
    lines: list[dict[str, object]] = []
    for i in range(n):
        lines.append({"kind": "concept", "name": f"tide table {i}", "description": f"row {i}"})
        lines.append({"kind": "causal_node", "description": f"pump {i} lost pressure at dawn"})
        lines.append(
            {
                "kind": "memory",
                "content": f"Ines checked the sluice gate number {i} before the storm",
                "tags": [f"gate-{i % 3}"],
                "concepts": [f"tide table {i}"],
            }
        )
    hand = tmp_path / "hand.jsonl"
    hand.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    src = fresh("one-write-vsrc")
    report = await import_file(store, src, hand)
    assert report.failed == 0, report.errors
    path = tmp_path / "vexport.jsonl"
    with path.open("w", encoding="utf-8") as out:
        await write_jsonl(iter_export(store, src, page=100), out)
    return src, path


async def own_vector_found(store: FalkorStore, ns: str, label: str, k: int) -> tuple[int, int]:
    """How many nodes of `label` a k-NN for their own vector finds, of how many."""
    res = await store.query(ns, f"MATCH (n:{label}) RETURN n.uuid, n.embedding", read_only=True)
    found = 0
    for uid, vec in res.rows:
        hits = await store.query(
            ns,
            f"CALL db.idx.vector.queryNodes('{label}', 'embedding', $k, vecf32($v)) "
            "YIELD node RETURN collect(node.uuid)",
            {"k": k, "v": [float(x) for x in vec]},
            read_only=True,
        )
        found += uid in hits.scalar(0)
    return found, len(res.rows)


async def test_an_imported_export_writes_each_vector_node_once(
    store: FalkorStore, tmp_path: Path
) -> None:
    src, path = await exported_vector_nodes(store, tmp_path, 12)
    target = fresh("one-write-vdst")
    report = await import_file(store, target, path)
    assert report.failed == 0, report.errors
    for label in VECTOR_KINDS:
        count = await store.query(target, f"MATCH (n:{label}) RETURN count(n)", read_only=True)
        assert count.scalar() == 12, label
        # One index document per node: each written once, its vector indexed once.
        assert await index_writes(store, target, label) == 12, label
        assert await own_vector_found(store, target, label, 3) == (12, 12), label
    assert_same(await read_state(store, src), await read_state(store, target), "import")
    again = await import_file(store, target, path)
    assert again.created == 0
    for label in VECTOR_KINDS:
        assert await index_writes(store, target, label) == 12, label
    assert_same(await read_state(store, src), await read_state(store, target), "re-import")


async def exported_timeline(store: FalkorStore, tmp_path: Path, n: int) -> tuple[str, Path]:
    """A namespace of `n` invented events and facts (one in three replaced by a later
    value, so a fact is stored closed and pointing at its successor), and its export."""
    embedder = HashEmbedder()
    resolver = NameResolver(store, embedder)
    temporal = TemporalGraph(store, embedder, resolver)
    ns = fresh("one-write-tsrc")
    for i in range(n):
        await temporal.add_event(
            ns,
            f"tram {i} reached the depot",
            f"2026-03-{1 + i % 28:02d}T0{i % 10}:15:00Z",
            duration_ms=60_000 * i if i % 2 else None,
            entities=[f"tram-{i % 4}", "depot"],
        )
        await temporal.add_fact(
            ns, f"tram-{i % 4}", "painted", f"colour {i}", f"2026-01-{1 + i:02d}T00:00:00Z"
        )
    path = tmp_path / "timeline.jsonl"
    with path.open("w", encoding="utf-8") as out:
        await write_jsonl(iter_export(store, ns, page=100), out)
    return ns, path


async def test_an_imported_export_writes_each_event_and_fact_once(
    store: FalkorStore, tmp_path: Path
) -> None:
    src, path = await exported_timeline(store, tmp_path, 12)
    closed = await store.query(
        src, "MATCH (f:T_Fact) WHERE f.invalidated_by IS NOT NULL RETURN count(f)"
    )
    assert closed.scalar() > 0  # the export holds replaced facts
    target = fresh("one-write-tdst")
    report = await RecordWriter.build(store, HashEmbedder()).run(
        target, lambda: iter_records(path, "jsonl")
    )
    assert report.failed == 0, report.errors
    assert report.kinds["event"].created == 12
    assert report.kinds["fact"].created == 12
    assert_same(await read_state(store, src), await read_state(store, target), "import")
    # One index document per node: each event and fact written once, in its stored form
    # (a second query restoring it used to index each a second time).
    assert await index_writes(store, target, "T_Event") == 12
    assert await index_writes(store, target, "T_Fact") == 12
    again = await RecordWriter.build(store, HashEmbedder()).run(
        target, lambda: iter_records(path, "jsonl")
    )
    assert again.created == 0
    assert await index_writes(store, target, "T_Event") == 12
    assert await index_writes(store, target, "T_Fact") == 12
    assert_same(await read_state(store, src), await read_state(store, target), "re-import")
