"""An import of an exported file leaves every vector index answering in full.

An import restores each created node's stored properties (uuid, times, origin) in a
second write, and FalkorDB 4.16.3 keeps the vector of the first write in the index
(FalkorDB/FalkorDB#2197): before, a 32-row k-NN probe of the imported namespace's
entity and concept indexes answered 16 rows.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from polyg_core.memory import Memory
from polyg_core.storage.store import FalkorStore
from polyg_core.testing.roundtrip import HashEmbedder
from polyg_core.transfer import RecordWriter, iter_export, iter_records, write_jsonl

pytestmark = pytest.mark.anyio


async def test_an_imported_export_answers_k_nn_in_full(
    store: FalkorStore, namespace: str, tmp_path: Path
) -> None:
    embedder = HashEmbedder()
    memory = Memory(store, embedder, namespace=namespace)
    for i in range(45):
        await memory.entities.add(namespace, f"relay-{i}", "Device")
    for i in range(40):
        await memory.semantic.add_concept(namespace, f"failover drill {i}", f"run {i} of the drill")
    await memory.semantic.add_memory(namespace, "The relays were tested in March.")
    path = tmp_path / "export.jsonl"
    with path.open("w", encoding="utf-8") as out:
        await write_jsonl(iter_export(store, namespace), out)

    copy = f"t_copy_{uuid.uuid4().hex[:10]}"
    try:
        report = await RecordWriter.build(store, embedder).run(
            copy, lambda: iter_records(path, "jsonl")
        )
        assert report.failed == 0 and report.created >= 86
        checks = [c for c in await store.check_vector_indexes() if c.graph == copy]
        answered = {c.label: (c.found, c.expected) for c in checks if c.vectors}
        assert answered["E_Entity"] == (32, 32)
        assert answered["S_Concept"] == (32, 32)
        assert all(found == expected for found, expected in answered.values()), answered
    finally:
        await store.delete_graph(copy)
