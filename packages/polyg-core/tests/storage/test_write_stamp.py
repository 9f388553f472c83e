"""Every write sets a new write stamp on the namespace, in the same query; a read sets none.

A process that keeps replies between recalls (`FalkorStore.stamped_reads`) keeps them only
while the stamp it reads stays the same, so a write of any kind from another process
(here: another store and Memory on the same server) leaves it nothing stale.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import pytest
from polyg_core.config import Settings
from polyg_core.memory import Memory
from polyg_core.storage.backup import backup, restore_graph
from polyg_core.storage.store import FalkorStore
from polyg_core.storage.write_stamp import StampedReads, stamped, writes_data
from polyg_core.testing.hashing import HashEmbedder
from polyg_core.testing.restart import RestartableFalkorDB
from polyg_core.transfer import RecordWriter, iter_export, iter_records, write_jsonl

pytestmark = pytest.mark.anyio

REF = "2026-03-02T09:00:00Z"


def _memory(store: FalkorStore, ns: str) -> Memory:
    return Memory(store=store, embedder=HashEmbedder(), settings=Settings(), namespace=ns)


async def _stamp(store: FalkorStore, ns: str) -> str | None:
    _record, stamp = await store.embedding_record_and_stamp(ns)
    return stamp


async def _seeded(store: FalkorStore, ns: str) -> Memory:
    memory = _memory(store, ns)
    await memory.remember("Ilse Varga fires the kiln in the north shed.", reference_time=REF)
    await memory.entities.add(ns, "Tomasz Brec", "Person")
    await memory.entities.add(ns, "Perrin Lake", "Person")
    return memory


def test_write_clauses_are_told_from_reads_and_index_definitions() -> None:
    assert writes_data("MATCH (n:E_Entity {uuid: $u}) SET n.name = $name")
    assert writes_data("UNWIND $rows AS r MERGE (e:E_Entity {uuid: r.uuid})")
    assert writes_data("MATCH (n) DETACH DELETE n")
    assert writes_data("MATCH (n:E_Entity) REMOVE n.note")
    assert writes_data("create (n:G_Node {name: 'lamp'})")
    assert not writes_data("MATCH (n:E_Entity) RETURN n.name")
    # A property whose name holds a clause's letters is no clause.
    assert not writes_data("MATCH (n:E_Entity) RETURN n.reset_at, n.created_at, n.offset")
    assert not writes_data("CREATE INDEX FOR (n:E_Entity) ON (n.uuid)")
    assert not writes_data(
        "CREATE VECTOR INDEX FOR (n:E_Entity) ON (n.embedding) OPTIONS {dimension: 8}"
    )
    assert not writes_data("CALL db.idx.fulltext.createNodeIndex('T_Event', 'description')")
    # A k-NN read that then writes is a write.
    assert writes_data(
        "CALL db.idx.vector.queryNodes('S_Concept', 'embedding', 3, vecf32($v)) "
        "YIELD node SET node.seen = true"
    )
    assert stamped("MATCH (n) RETURN n").endswith("MATCH (n) RETURN n")


async def test_each_write_sets_a_new_stamp_and_a_read_sets_none(
    store: FalkorStore, namespace: str
) -> None:
    memory = await _seeded(store, namespace)
    first = await _stamp(store, namespace)
    assert first is not None
    await memory.recall("Where does Ilse fire the kiln?", reference_time=REF, ppr=True)
    await memory.entities.get(namespace, "Tomasz Brec")
    assert await _stamp(store, namespace) == first
    await memory.entities.add(namespace, "Oona Felder", "Person")
    second = await _stamp(store, namespace)
    assert second not in (None, first)


async def test_a_failed_write_changes_nothing_and_a_namespace_without_metadata_is_written(
    store: FalkorStore, namespace: str
) -> None:
    await _seeded(store, namespace)
    before = await _stamp(store, namespace)
    with pytest.raises(Exception, match="rejected"):
        await store.query(namespace, "MATCH (n:E_Entity) SET n.x = 1 / 0 RETURN nope(n)")
    assert await _stamp(store, namespace) == before
    bare = f"t_{uuid.uuid4().hex[:12]}"
    try:
        res = await store.query(bare, "CREATE (n:G_Node {name: 'lamp'}) RETURN n.name")
        assert res.rows == [["lamp"]]
        assert res.nodes_created == 1
        assert await _stamp(store, bare) is None
    finally:
        await store.delete_graph(bare)


async def _exported(store: FalkorStore, tmp_path: Path) -> Path:
    src = f"t_{uuid.uuid4().hex[:12]}"
    memory = _memory(store, src)
    await memory.entities.add(src, "Marit Holm", "Person")
    await memory.entities.add(src, "Tomasz Brec", "Person")
    await memory.entities.link(src, "Marit Holm", "Tomasz Brec", "trains")
    path = tmp_path / "export.jsonl"
    with path.open("w", encoding="utf-8") as out:
        await write_jsonl(iter_export(store, src), out)
    await store.delete_graph(src)
    return path


Write = Callable[[Memory, str, Path], Awaitable[object]]


async def _delete(m: Memory, ns: str, _path: Path) -> object:
    entity = await m.entities.get(ns, "Perrin Lake")
    assert await m.crosslinks.delete_node(ns, entity.uuid)
    return entity


async def _import(m: Memory, ns: str, path: Path) -> object:
    return await RecordWriter.build(m.store, HashEmbedder()).run(
        ns, lambda: iter_records(path, "jsonl")
    )


WRITES: dict[str, Write] = {
    "memory": lambda m, ns, _: m.remember(
        "Tomasz Brec glazes the blue bowls on Fridays.", reference_time=REF
    ),
    "entity": lambda m, ns, _: m.entities.add(ns, "Runa Sallis", "Person"),
    "relation": lambda m, ns, _: m.entities.link(ns, "Ilse Varga", "Tomasz Brec", "mentors"),
    "event": lambda m, ns, _: m.temporal.add_event(
        ns,
        "The kiln was fired for the winter show",
        "2026-02-01T10:00:00Z",
        entities=["Ilse Varga"],
    ),
    "fact": lambda m, ns, _: m.temporal.add_fact(
        ns, "Ilse Varga", "works_at", "North Shed Pottery", valid_from="2025-01-01T00:00:00Z"
    ),
    "causal link": lambda m, ns, _: m.causal.add_link(
        ns, "cracked kiln shelf", "glaze ran onto the shelf", 0.8, entities=["Ilse Varga"]
    ),
    "delete": _delete,
    "import": _import,
}


@pytest.mark.parametrize("kind", list(WRITES))
async def test_a_write_of_each_kind_from_another_process_leaves_no_kept_reply(
    kind: str, store: FalkorStore, other_store: FalkorStore, namespace: str, tmp_path: Path
) -> None:
    await _seeded(store, namespace)
    path = await _exported(other_store, tmp_path) if kind == "import" else tmp_path
    before = await _stamp(store, namespace)
    kept = store.stamped_reads(namespace, before)
    assert isinstance(kept, StampedReads)
    kept.put(("links_by_id", (1, 2)), [(1, [[2, True, "E_RELATES", 1.0]])])
    # The same stamp read again finds what was kept.
    assert store.stamped_reads(namespace, await _stamp(store, namespace)) is kept

    await WRITES[kind](_memory(other_store, namespace), namespace, path)

    after = await _stamp(store, namespace)
    assert after is not None and after != before
    fresh = store.stamped_reads(namespace, after)
    assert fresh is not None and fresh is not kept
    assert ("links_by_id", (1, 2)) not in fresh


async def test_nothing_is_kept_without_a_stamp_or_once_the_namespace_is_forgotten(
    store: FalkorStore, namespace: str
) -> None:
    assert store.stamped_reads(namespace, None) is None
    await _seeded(store, namespace)
    stamp = await _stamp(store, namespace)
    kept = store.stamped_reads(namespace, stamp)
    assert kept is not None
    kept.put("k", 1)
    store.forget(namespace)
    again = store.stamped_reads(namespace, stamp)
    assert again is not None and "k" not in again


def test_a_full_cache_starts_afresh() -> None:
    reads = StampedReads("s", max_entries=3)
    for i in range(3):
        reads.put(i, i)
    assert len(reads) == 3
    reads.put(3, 3)
    assert len(reads) == 1 and reads.get(3) == 3 and 0 not in reads


async def test_a_namespace_restored_from_a_backup_shows_a_stamp_of_its_own(
    restartable_falkordb: RestartableFalkorDB, tmp_path: Path
) -> None:
    server = restartable_falkordb.server
    assert server is not None
    async with restartable_falkordb.store() as store:
        ns = "restored"
        memory = _memory(store, ns)
        await memory.entities.add(ns, "Ilse Varga", "Person")
        backed_up = await _stamp(store, ns)
        await anyio.to_thread.run_sync(lambda: backup(server, tmp_path / "bk"))
        await memory.entities.add(ns, "Tomasz Brec", "Person")
        await anyio.to_thread.run_sync(
            lambda: restore_graph(server, tmp_path / "bk", ns, replace=True)
        )
        # What a process kept under the backed-up stamp may be newer than the restored data.
        assert await _stamp(store, ns) not in (None, backed_up)
        assert [e.name for e in await memory.entities.list_entities(ns)] == ["Ilse Varga"]
