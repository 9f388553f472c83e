"""Facts through export and import: none lost, none doubled, no deleted entity back."""

from __future__ import annotations

import io
import json
from pathlib import Path

import anyio
import pytest
from polyg_core.errors import ExportError
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.storage.store import FalkorStore
from polyg_core.transfer import RecordWriter, iter_export, iter_records, write_jsonl

pytestmark = pytest.mark.anyio

SAME_START: list[dict[str, object]] = [
    {
        "kind": "fact",
        "subject": "Mirela",
        "predicate": "desk",
        "object": "D-12",
        "valid_from": "2025-03-01T00:00:00Z",
    },
    {
        "kind": "fact",
        "subject": "Mirela",
        "predicate": "desk",
        "object": "D-14",
        "valid_from": "2025-03-01T00:00:00Z",
    },
    {
        "kind": "fact",
        "subject": "Mirela",
        "predicate": "desk",
        "object": "D-15",
        "valid_from": "2025-03-01T00:00:00Z",
    },
]


def write_file(tmp_path: Path, records: list[dict[str, object]], name: str) -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


async def export_lines(store: FalkorStore, ns: str) -> list[dict[str, object]]:
    out = io.StringIO()
    await write_jsonl(iter_export(store, ns), out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


async def count(store: FalkorStore, ns: str, cypher: str) -> int:
    res = await store.query(ns, cypher, read_only=True)
    return int(res.rows[0][0])


async def test_facts_with_the_same_subject_predicate_and_start_are_all_exported(
    store: FalkorStore, embedder: Embedder, namespace: str, tmp_path: Path
) -> None:
    path = write_file(tmp_path, SAME_START, "in.jsonl")
    with anyio.fail_after(120):
        report = await RecordWriter.build(store, embedder).run(
            namespace, lambda: iter_records(path, "jsonl")
        )
        assert report.failed == 0, report.errors
        lines = await export_lines(store, namespace)
    facts = [r for r in lines if r["kind"] == "fact"]
    assert await count(store, namespace, "MATCH (f:T_Fact) RETURN count(f)") == 3
    assert sorted(str(f["object"]) for f in facts) == ["D-12", "D-14", "D-15"]


async def test_reimporting_a_file_of_same_start_facts_creates_nothing(
    store: FalkorStore, embedder: Embedder, namespace: str, tmp_path: Path
) -> None:
    path = write_file(tmp_path, SAME_START, "in.jsonl")
    writer = RecordWriter.build(store, embedder)
    with anyio.fail_after(120):
        await writer.run(namespace, lambda: iter_records(path, "jsonl"))
        before = await export_lines(store, namespace)
        again = await writer.run(namespace, lambda: iter_records(path, "jsonl"))
        after = await export_lines(store, namespace)
    assert again.failed == 0, again.errors
    assert again.kinds["fact"].created == 0 and again.kinds["fact"].merged == 3
    assert await count(store, namespace, "MATCH (f:T_Fact) RETURN count(f)") == 3
    assert after == before


async def test_a_deleted_entity_does_not_come_back_through_its_ended_fact(
    store: FalkorStore, embedder: Embedder, namespace: str, tmp_path: Path
) -> None:
    mem = Memory(store, embedder, namespace=namespace)
    other = f"{namespace}_copy"
    with anyio.fail_after(120):
        await mem.temporal.add_fact(namespace, "Teodor", "team", "billing", "2025-01-01")
        await mem.entities.add(namespace, "Ilinca", "Person")
        assert await mem.entities.delete(namespace, "Teodor")
        path = write_file(tmp_path, await export_lines(store, namespace), "dump.jsonl")
        try:
            report = await RecordWriter.build(store, embedder).run(
                other, lambda: iter_records(path, "jsonl")
            )
            assert report.failed == 0, report.errors
            names = await store.query(other, "MATCH (e:E_Entity) RETURN e.name", read_only=True)
            facts = await store.query(
                other, "MATCH (f:T_Fact) RETURN f.subject, f.valid_to IS NOT NULL", read_only=True
            )
        finally:
            await store.delete_graph(other)
    assert [r[0] for r in names.rows] == ["Ilinca"]
    assert [list(r) for r in facts.rows] == [["Teodor", True]]


async def test_a_node_that_is_no_record_stops_the_export_naming_it(
    store: FalkorStore, namespace: str
) -> None:
    await store.ensure_schema(namespace)
    await store.query(
        namespace, "CREATE (:T_Fact {uuid: 'hand-made-1', predicate: 'p', object: 'o'})"
    )
    with anyio.fail_after(30), pytest.raises(ExportError, match=r"hand-made-1.*'subject'"):
        await export_lines(store, namespace)
