"""The FalkorDB store against the real embedded server."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import pytest
from polyg_core.config import StorageSettings
from polyg_core.errors import (
    EmbeddingMismatch,
    InvalidNamespace,
    QueryTimeout,
    StorageBusy,
    StorageError,
    StorageUnavailable,
)
from polyg_core.storage import EmbeddedFalkorDB, FalkorStore, validate_namespace
from polyg_core.storage import store as store_module
from polyg_core.storage.schema import RANGE_INDEXES

pytestmark = pytest.mark.anyio

HOSTILE = [
    "x'}) MATCH (n) DETACH DELETE n //",
    'quote " and \\ backslash',
    "})-[:X]->(m) RETURN m",
    "MATCH (n) RETURN n",
    "DROP GRAPH; CREATE",
    "\u00e9\u4e2d\U0001f600",
]


async def test_bootstrap_is_idempotent(
    store: FalkorStore, falkordb_settings: StorageSettings, namespace: str
) -> None:
    await store.ensure_schema(namespace)
    first = await store.existing_indexes(namespace)
    await store.ensure_vectors(namespace, "local/minilm", 384)
    # Another store (a restarted process) knows nothing of what the first created.
    again = await FalkorStore(falkordb_settings).connect()
    try:
        await again.ensure_schema(namespace)
        await again.ensure_vectors(namespace, "local/minilm", 384)
    finally:
        await again.close()
    second = await store.existing_indexes(namespace)
    assert first <= second
    assert ("E_Entity", "embedding", "VECTOR") in second
    meta = await store.metadata(namespace)
    assert meta["kind"] == "memory"
    assert meta["embedding_model"] == "local/minilm"
    assert meta["dimension"] == 384
    res = await store.query(namespace, "MATCH (m:P_Meta) RETURN count(m)", read_only=True)
    assert res.scalar() == 1


async def test_a_namespace_deleted_by_another_store_is_bootstrapped_again(
    store: FalkorStore, falkordb_settings: StorageSettings, namespace: str
) -> None:
    await store.ensure_schema(namespace)
    await store.ensure_vectors(namespace, "local/minilm", 384)
    other = await FalkorStore(falkordb_settings).connect()
    try:
        assert await other.delete_graph(namespace)
    finally:
        await other.close()
    await store.query(namespace, "CREATE (:E_Entity {name: 'after'})")
    await store.ensure_schema(namespace)
    await store.ensure_vectors(namespace, "local/minilm", 384)
    indexes = await store.existing_indexes(namespace)
    assert ("E_Entity", "embedding", "VECTOR") in indexes
    assert {(label, prop, "RANGE") for label, props in RANGE_INDEXES.items() for prop in props} <= (
        indexes
    )
    meta = await store.metadata(namespace)
    assert meta["kind"] == "memory" and meta["dimension"] == 384


async def test_embedding_mismatch_names_the_fix(store: FalkorStore, namespace: str) -> None:
    await store.ensure_vectors(namespace, "local/minilm", 384)
    other = FalkorStore(store.settings)
    await other.connect()
    try:
        with pytest.raises(EmbeddingMismatch, match="EMBEDDING_MODEL=local/minilm"):
            await other.ensure_vectors(namespace, "openai/text-embedding-3-small", 1536)
    finally:
        await other.close()


@pytest.mark.parametrize("value", HOSTILE)
async def test_hostile_values_are_stored_literally(
    store: FalkorStore, namespace: str, value: str
) -> None:
    await store.query(namespace, "CREATE (n:E_Entity {uuid: 'u1', name: $v})", {"v": value})
    await store.query(namespace, "CREATE (n:E_Entity {uuid: 'u2', name: 'other'})")
    res = await store.query(
        namespace, "MATCH (n:E_Entity) RETURN n.name ORDER BY n.uuid", read_only=True
    )
    assert [r[0] for r in res.rows] == [value, "other"]


@pytest.mark.parametrize("bad", ["", "a b", "x'}) //", "a" * 65, "ns;DROP", "g\u00e9", "a/b"])
def test_invalid_namespace_is_refused(bad: str) -> None:
    with pytest.raises(InvalidNamespace, match="letters, digits"):
        validate_namespace(bad)


async def test_query_refuses_invalid_namespace(store: FalkorStore) -> None:
    with pytest.raises(InvalidNamespace):
        await store.query("bad name})", "RETURN 1")


async def test_reading_a_missing_namespace_is_empty(store: FalkorStore) -> None:
    res = await store.query("t_never_created_x", "MATCH (n) RETURN n", read_only=True)
    assert res.rows == []


async def test_bad_cypher_is_a_storage_error(store: FalkorStore, namespace: str) -> None:
    with pytest.raises(StorageError, match="rejected"):
        await store.query(namespace, "MATCH (n RETURN n")


async def test_slow_query_times_out_naming_the_setting(store: FalkorStore, namespace: str) -> None:
    await store.query(namespace, "UNWIND range(1, 2000) AS i CREATE (:G_Node {i: i})")
    with pytest.raises(QueryTimeout, match="POLYG_QUERY_TIMEOUT_MS"):
        await store.query(
            namespace,
            "MATCH (a:G_Node), (b:G_Node), (c:G_Node) RETURN count(a.i + b.i + c.i)",
            read_only=True,
            timeout_ms=50,
        )


@pytest.mark.slow
async def test_a_write_longer_than_the_client_default_is_answered_and_applied_once(
    store: FalkorStore, namespace: str
) -> None:
    # ~6-10 s of server work: longer than redis-py's 5 s default read timeout, which
    # used to cut the reply off, report the server unreachable and re-run the write.
    res = await store.query(
        namespace,
        "UNWIND range(1, 100000000) AS i WITH i WHERE i % 2500000 = 0 CREATE (:G_Node {i: i})",
    )
    assert res.nodes_created == 40
    count = await store.query(namespace, "MATCH (n:G_Node) RETURN count(n)", read_only=True)
    assert count.scalar(0) == 40


async def test_a_write_whose_reply_times_out_is_not_sent_again(
    store: FalkorStore, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A client that waits 0.2 s for any reply: the write below takes longer, so its
    # reply times out while the server goes on applying it. Before, the store re-sent
    # it on every retry and the 40 nodes were created up to four times.
    monkeypatch.setattr(store_module, "_REPLY_MARGIN_S", 0.0)
    impatient = FalkorStore(store.settings.model_copy(update={"query_timeout_ms": 200}))
    await impatient.connect()
    try:
        with pytest.raises(QueryTimeout, match="not sent again"):
            await impatient.query(
                namespace,
                "UNWIND range(1, 30000000) AS i WITH i WHERE i % 750000 = 0 "
                "CREATE (:G_Node {i: i})",
                timeout_ms=0,
            )
    finally:
        await impatient.close()
    # The server goes on with the write: wait (bounded) until its nodes are there.
    created = 0
    with anyio.move_on_after(300):
        while created == 0:
            await anyio.sleep(0.2)
            res = await store.query(namespace, "MATCH (n:G_Node) RETURN count(n)", read_only=True)
            created = int(res.scalar(0))
    assert created == 40
    # Nothing else arrives later: a write sent after it is applied after it.
    await store.query(namespace, "CREATE (:G_Marker)", timeout_ms=0)
    res = await store.query(namespace, "MATCH (n:G_Node) RETURN count(n)", read_only=True)
    assert res.scalar(0) == 40


async def test_list_and_delete_graphs(store: FalkorStore, namespace: str) -> None:
    await store.ensure_schema(namespace)
    assert namespace in await store.list_graphs()
    assert await store.delete_graph(namespace) is True
    assert namespace not in await store.list_graphs()
    assert await store.delete_graph(namespace) is False


async def test_data_survives_restart_of_the_embedded_server(tmp_path: Path) -> None:
    settings = StorageSettings(data_dir=tmp_path, embedded_linger_s=0)
    s = FalkorStore(settings)
    await s.connect()
    await s.query("keep", "CREATE (:E_Entity {uuid: 'k1', name: 'persisted'})")
    assert s.embedded is not None and s.embedded.owner
    await s.close()  # owner: stops the server
    assert s.embedded.running_socket() is None
    s2 = FalkorStore(settings)
    await s2.connect()
    try:
        res = await s2.query("keep", "MATCH (n:E_Entity) RETURN n.name", read_only=True)
        assert res.rows == [["persisted"]]
    finally:
        await s2.close()


def test_second_process_reuses_the_running_server(falkordb_server: EmbeddedFalkorDB) -> None:
    pid_before = falkordb_server.pid
    script = textwrap.dedent(
        f"""
        import json
        from pathlib import Path
        from polyg_core.storage import EmbeddedFalkorDB
        e = EmbeddedFalkorDB(Path({str(falkordb_server.data_dir)!r}))
        sock = e.ensure_running()
        print(json.dumps({{"owner": e.owner, "pid": e.pid, "sock": sock}}))
        e.stop()
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    info = json.loads(out.stdout.strip().splitlines()[-1])
    assert info["owner"] is False
    assert info["pid"] == pid_before
    assert falkordb_server.running_socket() == info["sock"]  # the non-owner did not stop it


def test_stale_pid_file_is_recovered(tmp_path: Path) -> None:
    server = EmbeddedFalkorDB(tmp_path)
    server.db_dir.mkdir(parents=True)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    server.pid_file.write_text(json.dumps({"pid": dead.pid, "socket": str(tmp_path / "gone.sock")}))
    sock = server.ensure_running()
    try:
        assert server.owner
        assert server.pid not in (None, dead.pid)
        assert server.running_socket() == sock
    finally:
        server.stop()
    assert not server.pid_file.exists()


async def test_server_going_away_gives_clear_error_then_reconnects(tmp_path: Path) -> None:
    settings = StorageSettings(data_dir=tmp_path, max_retries=0, embedded_linger_s=0)
    s = FalkorStore(settings)
    await s.connect()
    try:
        await s.query("ns", "CREATE (:E_Entity {uuid: 'a', name: 'before'})")
        assert s.embedded is not None
        pid = s.embedded.pid
        assert pid is not None
        os.kill(pid, 9)
        with anyio.fail_after(10):
            while s.embedded.running_socket() is not None:
                await anyio.sleep(0.05)
        with pytest.raises(StorageUnavailable, match="unreachable"):
            await s.query("ns", "MATCH (n) RETURN count(n)", read_only=True)
        # next call: the embedded server is started again and the data (AOF) is back
        res = await s.query("ns", "MATCH (n:E_Entity) RETURN n.name", read_only=True)
        assert res.rows == [["before"]]
    finally:
        await s.close()


async def test_unreachable_external_server_is_storage_unavailable() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    store = FalkorStore(StorageSettings(host="127.0.0.1", port=port, max_retries=0))
    with pytest.raises(StorageUnavailable, match="unreachable"):
        await store.connect()


async def test_more_concurrent_queries_than_connections_wait_instead_of_failing(
    falkordb_settings: StorageSettings, namespace: str
) -> None:
    store = await FalkorStore(falkordb_settings.model_copy(update={"max_connections": 4})).connect()
    try:
        await store.query(namespace, "UNWIND range(1, 500) AS i CREATE (:N {i: i})")
        results: list[int] = []

        async def count(m: int) -> None:
            res = await store.query(
                namespace,
                "MATCH (n:N) WHERE n.i % 5 = $m RETURN count(n)",
                {"m": m},
                read_only=True,
            )
            results.append(int(res.scalar()))

        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                for i in range(200):
                    tg.start_soon(count, i % 5)
        assert len(results) == 200 and set(results) == {100}
    finally:
        await store.close()


async def test_a_pool_that_stays_busy_gives_a_clear_error_and_keeps_the_client(
    falkordb_settings: StorageSettings, namespace: str
) -> None:
    settings = falkordb_settings.model_copy(update={"max_connections": 1, "query_timeout_ms": 300})
    store = await FalkorStore(settings).connect()
    try:
        await store.query(namespace, "CREATE (:N {i: 1})")
        db = await store._ensure_db()  # pyright: ignore[reportPrivateUsage]
        pool = db.connection.connection_pool
        held = await pool.get_connection()  # every connection is now in use
        with pytest.raises(StorageBusy) as info, anyio.fail_after(10):
            await store.query(namespace, "MATCH (n:N) RETURN n.i", read_only=True)
        assert "POLYG_MAX_CONNECTIONS" in str(info.value)
        await pool.release(held)
        assert (
            await store.query(namespace, "MATCH (n:N) RETURN n.i", read_only=True)
        ).scalar() == 1
        assert await store._ensure_db() is db  # pyright: ignore[reportPrivateUsage]
    finally:
        await store.close()


async def test_concurrent_first_writes_through_several_stores_log_no_rewrite_warnings(
    falkordb_settings: StorageSettings, namespace: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Processes creating a namespace's indexes at once each ask for an AOF rewrite; a
    request that finds one already running is not a problem worth a warning."""
    caplog.set_level(logging.DEBUG, logger="polyg_core.storage")
    stores = [await FalkorStore(falkordb_settings).connect() for _ in range(3)]
    names = [f"{namespace}_{i}" for i in range(4)]
    try:
        with anyio.fail_after(120):
            for ns in names:
                async with anyio.create_task_group() as tg:
                    for i in range(12):
                        tg.start_soon(stores[i % 3].ensure_vectors, ns, "local/minilm", 8)
        for ns in names:
            assert ("E_Entity", "embedding", "VECTOR") in await stores[0].existing_indexes(ns)
    finally:
        for ns in names:
            await stores[0].delete_graph(ns)
        for s in stores:
            await s.close()
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warnings == []


async def test_a_read_waits_out_a_vector_index_being_rebuilt_a_write_does_not(
    store: FalkorStore, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After FalkorDB restarts and reloads a graph, its vector indexes are rebuilt and
    k-NN on them fails for a while: any read (remember's lookup as much as recall's
    search) waits for them, bounded; a write is never sent twice."""
    import redis.exceptions as rexc

    await store.ensure_schema(namespace)
    real = store._counted  # pyright: ignore[reportPrivateUsage]
    failures = {"left": 2}

    async def rebuilding(*args: object, **kwargs: object) -> object:
        if failures["left"]:
            failures["left"] -= 1
            raise rexc.ResponseError(store_module.INDEX_BUILDING)
        return await real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "_counted", rebuilding)
    with anyio.fail_after(30):
        res = await store.query(namespace, "RETURN 1 AS one", read_only=True)
    assert res.rows == [[1]]
    assert failures["left"] == 0
    failures["left"] = 1
    with pytest.raises(StorageError, match="queryNodes"):
        await store.query(namespace, "CREATE (:P_Probe {at: 1})")


async def test_the_first_knn_on_indexes_still_being_built_answers(
    store: FalkorStore, namespace: str
) -> None:
    """FalkorDB builds a new vector index in the background and k-NN on it fails until it
    is built; a store that finds the indexes (made by another process) waits for them."""
    from polyg_core.storage.schema import EMBEDDED_LABELS, MEMORY
    from polyg_core.storage.vector import knn

    with anyio.fail_after(120):
        await store.ensure_schema(namespace)
        await store.query(
            namespace,
            "MATCH (m:P_Meta {key: 'meta'}) SET m.embedding_model = 'test-model', m.dimension = 3",
        )
        await store.query(
            namespace,
            f"UNWIND range(1, 5000) AS i CREATE (:{MEMORY} "
            "{uuid: toString(i), embedding: vecf32([1.0, toFloat(i) / 5000.0, 0.5])})",
        )
        # The memories' index last: it is the one still being built below.
        for label in sorted(EMBEDDED_LABELS, key=lambda name: name == MEMORY):
            await store.query(
                namespace,
                f"CREATE VECTOR INDEX FOR (n:{label}) ON (n.embedding) "
                "OPTIONS {dimension: 3, similarityFunction: 'cosine'}",
            )
        await store.ensure_vectors(namespace, "test-model", 3)
        hits = await knn(store, namespace, MEMORY, [1.0, 0.0, 0.5], 5)
    assert len(hits) == 5
    assert hits[0].properties["uuid"] == "1"
