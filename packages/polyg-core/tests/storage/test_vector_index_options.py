"""The HNSW options of the vector indexes polyg creates, and older indexes left alone.

A new namespace's vector indexes get polyg's options per label (`schema.HNSW_OPTIONS`),
or those the settings choose. A namespace created before, whose indexes carry FalkorDB's
own defaults (M 16, efConstruction 200, efRuntime 10), opens, reads and writes without
any index being dropped or created: an index change in the replayed part of the
append-only file is what breaks FalkorDB 4.16.3's vector indexes (docs/reliability.md).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from polyg_core.config import StorageSettings, settings_from_env
from polyg_core.errors import InvalidInput
from polyg_core.graphs.entity import EntityGraph
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.resolve import NameResolver
from polyg_core.storage.embedded import EmbeddedFalkorDB
from polyg_core.storage.schema import (
    EMBEDDED_LABELS,
    ENTITY,
    FALKORDB_HNSW,
    HNSW_OPTIONS,
    META,
    HnswOptions,
)
from polyg_core.storage.store import FalkorStore
from polyg_core.storage.vector import knn
from polyg_core.testing.restart import RestartableFalkorDB

pytestmark = pytest.mark.anyio

# Invented names: people, services, hosts, places and products of no real organisation.
NAMES = [
    "Orla Vantresk",
    "Jory Castellane",
    "Mira Dunholt",
    "Tuva Brennick",
    "ledger-sync-worker",
    "quota-audit-api",
    "payments-db-eu-3",
    "render-cache-west-7",
    "Kelmore Harbor depot",
    "Sandrift Ridge campus",
    "Quillstone Pro 14",
    "Varnish Lite 3",
    "platform team rota",
    "Halvard migration 2026",
    "notify-queue-proxy",
    "Brisa Okonkwo-Tell",
]


async def vector_options(store: FalkorStore, ns: str) -> dict[str, dict[str, Any]]:
    """Label to the options `db.indexes()` reports for its `embedding` vector index."""
    res = await store.query(
        ns,
        "CALL db.indexes() YIELD label, types, options RETURN label, types, options",
        read_only=True,
    )
    return {
        str(label): dict(options["embedding"])
        for label, types, options in res.rows
        if "VECTOR" in types.get("embedding", [])
    }


async def vector_of(embedder: Embedder, text: str) -> list[float]:
    return [float(x) for x in (await embedder.embed([text]))[0]]


def hnsw_of(options: dict[str, Any]) -> HnswOptions:
    return HnswOptions(
        m=int(options["M"]),
        ef_construction=int(options["efConstruction"]),
        ef_runtime=int(options["efRuntime"]),
    )


async def test_a_new_namespace_gets_polygs_options_on_every_vector_index(
    store: FalkorStore, namespace: str
) -> None:
    await store.ensure_vectors(namespace, "test-model", 8)
    found = await vector_options(store, namespace)
    assert set(found) == set(EMBEDDED_LABELS)
    for label, options in found.items():
        assert hnsw_of(options) == HNSW_OPTIONS[label], label
        assert options["dimension"] == 8
        assert options["similarityFunction"] == "cosine"


async def test_the_settings_choose_the_options_of_indexes_created_from_then_on(
    store: FalkorStore, namespace: str, falkordb_settings: StorageSettings
) -> None:
    await store.ensure_vectors(namespace, "test-model", 8)
    before = await vector_options(store, namespace)
    chosen = falkordb_settings.model_copy(
        update={"hnsw_m": 12, "hnsw_ef_construction": 48, "hnsw_ef_runtime": 24}
    )
    tuned = await FalkorStore(chosen).connect()
    other = f"t_{uuid.uuid4().hex[:12]}"
    try:
        await tuned.ensure_vectors(other, "test-model", 8)
        created = await vector_options(tuned, other)
        assert {hnsw_of(o) for o in created.values()} == {HnswOptions(12, 48, 24)}
        # A namespace that has its indexes keeps them, whatever the settings say now.
        await tuned.ensure_vectors(namespace, "test-model", 8)
        assert await vector_options(tuned, namespace) == before
    finally:
        await tuned.delete_graph(other)
        await tuned.close()


async def test_one_setting_changes_one_parameter_and_keeps_the_others() -> None:
    store = FalkorStore(StorageSettings(hnsw_ef_runtime=40))
    for label in EMBEDDED_LABELS:
        default = HNSW_OPTIONS[label]
        assert store.hnsw_options(label) == HnswOptions(default.m, default.ef_construction, 40)


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        ("POLYG_HNSW_M", "2", "greater than or equal to 4"),
        ("POLYG_HNSW_M", "1000", "less than or equal to 128"),
        ("POLYG_HNSW_EF_CONSTRUCTION", "many", "valid integer"),
        ("POLYG_HNSW_EF_RUNTIME", "0", "greater than or equal to 1"),
    ],
)
def test_a_bad_hnsw_setting_is_refused_naming_the_variable_and_the_bound(
    variable: str, value: str, says: str
) -> None:
    with pytest.raises(InvalidInput) as caught:
        settings_from_env({variable: value})
    assert variable in str(caught.value) and says in str(caught.value)


def incremental_aof(server: EmbeddedFalkorDB) -> str:
    """The commands a start would replay (the append-only file's incremental part)."""
    aof_dir = server.db_dir / "appendonlydir"
    manifest = (aof_dir / "appendonly.aof.manifest").read_text()
    text = ""
    for line in manifest.splitlines():
        words = line.split()
        fields = dict(zip(words[::2], words[1::2], strict=False))
        if fields.get("type") == "i":
            text += (aof_dir / fields["file"]).read_text("utf-8", errors="replace")
    return text


async def create_as_before(store: FalkorStore, ns: str, embedder: Embedder) -> None:
    """A namespace as polyg created it before: each vector index with FalkorDB's defaults
    (the options named nowhere), the definitions rewritten into the base."""
    await store.ensure_schema(ns)
    await store.query(
        ns,
        f"MATCH (m:{META} {{key: 'meta'}}) SET m.embedding_model = $m, m.dimension = $d",
        {"m": embedder.model_name, "d": embedder.dimension},
    )
    for label in EMBEDDED_LABELS:
        await store.query(
            ns,
            f"CREATE VECTOR INDEX FOR (n:{label}) ON (n.embedding) "
            f"OPTIONS {{dimension: {embedder.dimension}, similarityFunction: 'cosine'}}",
        )
    assert store.embedded is not None
    assert store.embedded.compact(60.0)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RestartableFalkorDB]:
    """An embedded FalkorDB of its own, for a test that restarts it."""
    falkordb = RestartableFalkorDB(tmp_path / "data")
    falkordb.start()
    try:
        yield falkordb
    finally:
        falkordb.stop()


@pytest.mark.slow
async def test_a_namespace_with_the_old_options_reads_and_writes_with_its_indexes_untouched(
    server: RestartableFalkorDB, embedder: Embedder
) -> None:
    ns = "older"
    async with server.store() as store:
        await create_as_before(store, ns, embedder)
        graph = EntityGraph(store, embedder, NameResolver(store, embedder))
        await graph.add_many(ns, [(name, "thing", None) for name in NAMES[:10]])
    server.restart()
    assert server.server is not None
    async with server.store() as store:
        graph = EntityGraph(store, embedder, NameResolver(store, embedder))
        assert (await graph.get(ns, "Mira Dunholt")).name == "Mira Dunholt"
        await graph.add_many(ns, [(name, "thing", None) for name in NAMES[10:]])
        found = await vector_options(store, ns)
        assert {hnsw_of(o) for o in found.values()} == {FALKORDB_HNSW}
        assert set(found) == set(EMBEDDED_LABELS)
        for name in ("Varnish Lite 3", "Orla Vantresk"):  # one written before, one after
            hits = await knn(store, ns, ENTITY, await vector_of(embedder, name), 3)
            assert hits[0].properties["name"] == name
        checks = await store.check_vector_indexes()
        assert all(c.healthy and c.rebuilt_s is None for c in checks if c.graph == ns)
        replayed = incremental_aof(server.server)
    assert "VECTOR INDEX" not in replayed.upper()
    assert "Varnish Lite 3" in replayed  # the writes are there: the file is the right one


@pytest.mark.slow
async def test_knn_with_polygs_options_finds_exact_and_near_names_across_a_restart(
    server: RestartableFalkorDB, embedder: Embedder
) -> None:
    ns = "names"
    async with server.store() as store:
        graph = EntityGraph(store, embedder, NameResolver(store, embedder))
        await graph.add_many(ns, [(name, "thing", None) for name in NAMES])
        found = await vector_options(store, ns)
        assert hnsw_of(found[ENTITY]) == HNSW_OPTIONS[ENTITY]
    server.restart()  # a start rebuilds the index from the snapshot, with its options
    async with server.store() as store:
        asked = {
            "Jory Castellane": "Jory Castellane",  # exact
            "jory castelane": "Jory Castellane",  # a letter dropped, lower case
            "Pro 14 Quillstone": "Quillstone Pro 14",  # another word order
            "ledger sync worker": "ledger-sync-worker",  # spaces for hyphens
            "Kelmore harbour depot": "Kelmore Harbor depot",  # another spelling
        }
        for text, name in asked.items():
            vector = await vector_of(embedder, text)
            hits = await knn(store, ns, ENTITY, vector, 5)
            assert hits[0].properties["name"] == name, text
        every = await knn(store, ns, ENTITY, await vector_of(embedder, "a"), 50)
        assert sorted(h.properties["name"] for h in every) == sorted(NAMES)
