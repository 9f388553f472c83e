"""Memory import/export through the real graphs on the embedded FalkorDB."""

from __future__ import annotations

import io
import json
from pathlib import Path

import anyio
import pytest
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.scenarios import load_scenario
from polyg_core.storage.store import FalkorStore
from polyg_core.transfer import RecordWriter, iter_export, iter_records, write_jsonl
from polyg_core.transfer.cypher_dump import write_cypher
from polyg_core.transfer.export import write_json
from polyg_core.transfer.records import EntityRecord, LineError

pytestmark = pytest.mark.anyio

RECORDS = [
    {"kind": "entity", "name": "auth-service", "type": "Service", "properties": {"tier": 1}},
    {"kind": "entity", "name": "Alice", "type": "Person", "properties": {"role": "lead"}},
    {
        "kind": "relation",
        "source": "Alice",
        "target": "auth-service",
        "type": "owns",
        "source_type": "Person",
        "target_type": "Service",
    },
    {
        "kind": "event",
        "description": "Auth service crashed",
        "occurred_at": "2026-01-07T14:05:00Z",
        "entities": ["auth-service"],
    },
    {
        "kind": "fact",
        "subject": "Alice",
        "predicate": "works_on",
        "object": "Payments",
        "valid_from": "2024-01-01T00:00:00Z",
        "valid_to": "2025-05-31T00:00:00Z",
    },
    {
        "kind": "fact",
        "subject": "Alice",
        "predicate": "works_on",
        "object": "Auth Service",
        "valid_from": "2025-06-01T00:00:00Z",
    },
    {
        "kind": "causal_link",
        "cause": "missing AUTH_SECRET",
        "effect": "auth service crash",
        "confidence": 0.95,
        "evidence": "startup log",
        "entities": ["auth-service"],
    },
    {"kind": "concept", "name": "secrets management", "description": "how secrets reach services"},
    {
        "kind": "memory",
        "content": "Always check env vars before a deploy.",
        "category": "procedural",
        "tags": ["deploy"],
        "concepts": ["secrets management"],
    },
]


def writer(store: FalkorStore, embedder: Embedder) -> RecordWriter:
    return RecordWriter.build(store, embedder)


def write_file(tmp_path: Path, lines: list[str], name: str = "in.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _canonical(record: object) -> str:
    return json.dumps(record, sort_keys=True)


def _without_stored(records: list[dict[str, object]]) -> list[dict[str, object]]:
    return [{k: v for k, v in r.items() if k != "stored"} for r in records]


async def export_lines(store: FalkorStore, ns: str) -> list[dict[str, object]]:
    out = io.StringIO()
    await write_jsonl(iter_export(store, ns, page=2), out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


async def test_jsonl_round_trip_reproduces_records(
    store: FalkorStore, embedder: Embedder, namespace: str, tmp_path: Path
) -> None:
    path = write_file(tmp_path, [json.dumps(r) for r in RECORDS])
    w = writer(store, embedder)
    with anyio.fail_after(120):
        report = await w.run(namespace, lambda: iter_records(path, "jsonl"))
    assert report.failed == 0, report.errors
    assert report.created == len(RECORDS)
    first = await export_lines(store, namespace)
    kinds = [r["kind"] for r in first]
    assert kinds.count("entity") >= 2 and kinds.count("fact") == 2
    facts = {r["object"]: r for r in first if r["kind"] == "fact"}
    assert str(facts["Payments"]["valid_to"]).startswith("2025-05-31T00:00:00")
    assert "valid_to" not in facts["Auth Service"]

    dump = write_file(tmp_path, [json.dumps(r) for r in first], "dump.jsonl")
    other = f"{namespace}_b"
    try:
        with anyio.fail_after(120):
            again = await w.run(other, lambda: iter_records(dump, "jsonl"))
        assert again.failed == 0, again.errors
        second = await export_lines(store, other)
    finally:
        await store.delete_graph(other)
    key = _canonical
    assert sorted(map(key, second)) == sorted(map(key, first))


async def test_reimport_creates_nothing_new(
    store: FalkorStore, embedder: Embedder, namespace: str, tmp_path: Path
) -> None:
    path = write_file(tmp_path, [json.dumps(r) for r in RECORDS])
    w = writer(store, embedder)
    with anyio.fail_after(120):
        await w.run(namespace, lambda: iter_records(path, "jsonl"))
        before = await export_lines(store, namespace)
        again = await w.run(namespace, lambda: iter_records(path, "jsonl"))
    assert again.created == 0
    assert again.merged == len(RECORDS)
    # Re-asserting a causal link moves its `updated_at`; nothing else changes.
    assert _without_stored(await export_lines(store, namespace)) == _without_stored(before)


async def test_bad_records_are_reported_with_lines_and_the_rest_imported(
    store: FalkorStore, embedder: Embedder, namespace: str, tmp_path: Path
) -> None:
    lines = [
        json.dumps(RECORDS[0]),
        '{"kind": "entity", "name": 42}',
        '{"kind": "spaceship", "name": "x"}',
        '{"kind": "event", "description": "late", "occurred_at": "not a date"}',
        '{"kind": "entity", "name": "trunc',
    ]
    path = write_file(tmp_path, lines)
    with anyio.fail_after(60):
        report = await writer(store, embedder).run(namespace, lambda: iter_records(path, "jsonl"))
    assert [e.line for e in report.errors] == [2, 3, 4, 5]
    assert "unknown kind 'spaceship'" in report.errors[1].message
    assert "occurred_at" in report.errors[2].message
    assert "truncated" in report.errors[3].message
    assert report.created == 1


async def test_a_batch_of_solutions_imports_the_good_ones_and_reports_the_bad_one(
    store: FalkorStore, embedder: Embedder, namespace: str, tmp_path: Path
) -> None:
    solutions = [
        {"kind": "solution", "problem": "disk full on atlas-db", "solution": "grow the volume"},
        # Problem and solution are one causal node (the same normalised description).
        {"kind": "solution", "problem": "Cache stampede", "solution": "cache stampede!"},
        {"kind": "solution", "problem": "cert expired", "solution": "rotate the certificate"},
        # A uuid names a stored node; this one names none.
        {"kind": "solution", "problem": "0" * 32, "solution": "restart the worker"},
        {
            "kind": "solution",
            "problem": "Disk full on atlas-db",
            "solution": "grow the volume",
            "evidence": "runbook",
        },
    ]
    path = write_file(tmp_path, [json.dumps(r) for r in solutions])
    w = writer(store, embedder)
    with anyio.fail_after(90):
        report = await w.run(namespace, lambda: iter_records(path, "jsonl"))
        again = await w.run(namespace, lambda: iter_records(path, "jsonl"))
    assert [e.line for e in report.errors] == [2, 4]
    assert "same causal node" in report.errors[0].message
    assert report.errors[0].message.startswith("solution: ")
    counts = report.kind("solution")
    # The fifth record names the first pair again: merged into it, its evidence kept.
    assert (counts.created, counts.merged, counts.failed) == (2, 1, 2)
    again_counts = again.kind("solution")
    assert (again_counts.created, again_counts.merged, again_counts.failed) == (0, 3, 2)
    res = await store.query(
        namespace,
        "MATCH (p:C_Node)-[r:C_SOLVED_BY]->(s:C_Node) "
        "RETURN p.description, p.node_type, s.description, s.node_type, r.evidence "
        "ORDER BY p.description",
    )
    assert [list(r) for r in res.rows] == [
        ["cert expired", "event", "rotate the certificate", "solution", None],
        ["disk full on atlas-db", "event", "grow the volume", "solution", "runbook"],
    ]
    nodes = await store.query(namespace, "MATCH (c:C_Node) RETURN count(c)")
    assert nodes.rows[0][0] == 4


async def test_a_json_escaped_nul_is_refused_naming_the_field(
    store: FalkorStore, embedder: Embedder, namespace: str, tmp_path: Path
) -> None:
    lines = [
        '{"kind": "entity", "name": "db\\u0000primary", "entity_type": "service"}',
        '{"kind": "entity", "name": "cache", "properties": {"note": "a\\u0000b"}}',
        json.dumps(RECORDS[0]),
    ]
    path = write_file(tmp_path, lines)
    with anyio.fail_after(60):
        report = await writer(store, embedder).run(namespace, lambda: iter_records(path, "jsonl"))
        names = await store.query(namespace, "MATCH (e:E_Entity) RETURN e.name")
    assert [e.line for e in report.errors] == [1, 2]
    assert report.errors[0].message.startswith("name: ") and "NUL" in report.errors[0].message
    assert report.errors[1].message.startswith("properties.note: ")
    assert all("\x00" not in str(r[0]) for r in names.rows)
    assert report.created == 1


async def test_strict_writes_nothing_when_a_record_is_bad(
    store: FalkorStore, embedder: Embedder, namespace: str, tmp_path: Path
) -> None:
    path = write_file(tmp_path, [json.dumps(RECORDS[0]), '{"kind": "entity"}'])
    with anyio.fail_after(60):
        report = await writer(store, embedder).run(
            namespace, lambda: iter_records(path, "jsonl"), strict=True
        )
    assert report.aborted and report.errors[0].line == 2
    assert namespace not in await store.list_graphs()


async def test_strict_writes_nothing_when_a_record_fails_on_write(
    store: FalkorStore, embedder: Embedder, namespace: str, tmp_path: Path
) -> None:
    # Both records parse; the relation fails only when written (its ends are one entity).
    self_link = {"kind": "relation", "source": "db", "target": "DB", "type": "x"}
    path = write_file(tmp_path, [json.dumps(RECORDS[0]), json.dumps(self_link)])
    with anyio.fail_after(60):
        report = await writer(store, embedder).run(
            namespace, lambda: iter_records(path, "jsonl"), strict=True
        )
    assert report.aborted and [e.line for e in report.errors] == [2]
    assert namespace not in await store.list_graphs()
    assert not [g for g in await store.list_graphs() if ".strict-" in g]


async def test_strict_rehearses_on_a_copy_and_keeps_existing_data(
    store: FalkorStore, embedder: Embedder, namespace: str, tmp_path: Path
) -> None:
    ok = write_file(tmp_path, [json.dumps(RECORDS[0])])
    self_link = {"kind": "relation", "source": "db", "target": "DB", "type": "x"}
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(RECORDS[1]) + "\n" + json.dumps(self_link) + "\n")
    with anyio.fail_after(90):
        await writer(store, embedder).run(namespace, lambda: iter_records(ok, "jsonl"))
        report = await writer(store, embedder).run(
            namespace, lambda: iter_records(bad, "jsonl"), strict=True
        )
        good = await writer(store, embedder).run(
            namespace, lambda: iter_records(ok, "jsonl"), strict=True
        )
    assert report.aborted
    names = await store.query(namespace, "MATCH (e:E_Entity) RETURN e.name")
    assert [r[0] for r in names.rows] == ["auth-service"]
    assert not good.aborted and good.merged == 1


async def test_a_ten_megabyte_line_is_skipped(
    store: FalkorStore, embedder: Embedder, namespace: str, tmp_path: Path
) -> None:
    huge = json.dumps({"kind": "entity", "name": "x" * (10 << 20)})
    path = write_file(tmp_path, [huge, json.dumps(RECORDS[0])])
    with anyio.fail_after(60):
        report = await writer(store, embedder).run(namespace, lambda: iter_records(path, "jsonl"))
    assert report.errors[0].line == 1 and "longer than" in report.errors[0].message
    assert report.created == 1


@pytest.mark.parametrize("fmt", ["json", "cypher"])
async def test_json_and_cypher_dumps_import_like_jsonl(
    store: FalkorStore, embedder: Embedder, namespace: str, tmp_path: Path, fmt: str
) -> None:
    src = write_file(tmp_path, [json.dumps(r) for r in RECORDS])
    w = writer(store, embedder)
    with anyio.fail_after(120):
        await w.run(namespace, lambda: iter_records(src, "jsonl"))
    expected = await export_lines(store, namespace)
    dump = tmp_path / f"dump.{fmt}"
    with dump.open("w", encoding="utf-8") as out:
        if fmt == "json":
            await write_json(iter_export(store, namespace), out, namespace)
        else:
            await write_cypher(store, namespace, out)
    parsed = [item for _, item in iter_records(dump, fmt)]
    key = _canonical
    assert [item for item in parsed if isinstance(item, LineError)] == []
    records = [item for item in parsed if not isinstance(item, LineError)]
    got = [{"kind": r.kind, **r.model_dump(mode="json", exclude_defaults=True)} for r in records]
    assert sorted(map(key, got)) == sorted(map(key, expected))


async def test_scenario_loads_and_reloads_without_duplicates(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    mem = Memory(store, embedder, namespace=namespace)
    with anyio.fail_after(120):
        first = await load_scenario(mem, "deployment-failure")
        second = await load_scenario(mem, "deployment_failure")
    assert first.failed == 0, first.errors
    assert first.kind("event").created == 10 and first.kind("causal_link").created == 4
    assert second.created == 0


async def exported_twice(
    store: FalkorStore,
    embedder: Embedder,
    namespace: str,
    tmp_path: Path,
    lines: list[dict[str, str]],
    kind: str,
) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """The `kind` records of `lines` as exported once imported into `namespace`, and as
    exported again once that export is imported into another namespace."""
    w = writer(store, embedder)
    other = f"{namespace}_again"
    try:
        with anyio.fail_after(120):
            source = write_file(tmp_path, [json.dumps(r) for r in lines], f"{kind}.jsonl")
            report = await w.run(namespace, lambda: iter_records(source, "jsonl"))
            assert report.failed == 0, report.errors
            first = [r for r in await export_lines(store, namespace) if r["kind"] == kind]
            dump = write_file(tmp_path, [json.dumps(r) for r in first], f"{kind}-export.jsonl")
            await w.run(other, lambda: iter_records(dump, "jsonl"))
            second = [r for r in await export_lines(store, other) if r["kind"] == kind]
    finally:
        await store.delete_graph(other)
    return first, second


async def test_a_facts_cardinality_survives_export_and_import(
    store: FalkorStore, embedder: Embedder, namespace: str, tmp_path: Path
) -> None:
    lines = [
        {"kind": "fact", "subject": "Pia Lund", "predicate": "mentors", "object": o,
         "valid_from": f"202{i}-01-01", "cardinality": "multi"}
        for i, o in enumerate(("Rafe Oken", "Sola Maier"), start=4)
    ]  # fmt: skip
    first, second = await exported_twice(store, embedder, namespace, tmp_path, lines, "fact")
    for facts in (first, second):
        assert sorted((r["object"], r["cardinality"], "valid_to" in r) for r in facts) == [
            ("Rafe Oken", "multi", False),
            ("Sola Maier", "multi", False),
        ]


async def test_a_relations_dates_survive_export_and_import(
    store: FalkorStore, embedder: Embedder, namespace: str, tmp_path: Path
) -> None:
    lines = [
        {"kind": "relation", "source": "Tove Arden", "target": "Kestrel team",
         "type": "member_of", "valid_from": "2024-02-01", "valid_to": "2025-04-30"},
    ]  # fmt: skip
    first, second = await exported_twice(store, embedder, namespace, tmp_path, lines, "relation")
    for rels in (first, second):
        [rel] = rels
        assert str(rel["valid_from"]).startswith("2024-02-01T00:00:00")
        assert str(rel["valid_to"]).startswith("2025-05-01T00:00:00")


def test_a_refused_character_is_found_however_the_line_writes_it(tmp_path: Path) -> None:
    path = tmp_path / "chars.jsonl"
    path.write_bytes(
        b'{"kind": "entity", "name": "tide\\u0007gauge"}\n'
        b'{"kind": "entity", "name": "tide \\ud800 gauge"}\n'
        # The UTF-8 bytes of a lone surrogate: json decodes them ("surrogatepass").
        b'{"kind": "entity", "name": "tide \xed\xa0\x80 gauge"}\n'
        # Hangul shares the lead byte and is text like any other; plain lines parse.
        + '{"kind": "entity", "name": "조수 gauge"}\n'.encode()
        + b'{"kind": "entity", "name": "tide gauge", "properties": {"note": "tab\\there"}}\n'
    )
    got = list(iter_records(path, "jsonl"))
    errors = [item for _, item in got if isinstance(item, LineError)]
    assert [e.line for e in errors] == [1, 2, 3]
    assert all(e.message.startswith("name: ") for e in errors)
    names = [item.name for _, item in got if isinstance(item, EntityRecord)]
    assert names == ["조수 gauge", "tide gauge"]
