"""The concept vector index stays whole when concepts are written again, live and across
a replay of the append-only file, without the start-time check repairing it.

FalkorDB 4.16.3 keeps the replaced vector of a node it re-indexes (FalkorDB/FalkorDB#2197):
a concept given a new description (a new embedding) or named explicitly after a memory
implied it left an orphan entry per write, so a k-NN probe of 32 answered 16 while the
server ran, and the same after a SIGKILL and a replay. The write path now rebuilds the
concept index after such writes and moves it into the base of the append-only file.
"""

from __future__ import annotations

import time

import anyio
import pytest
import redis
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.storage.index_check import PROBE_K
from polyg_core.storage.store import FalkorStore
from polyg_core.testing.restart import RestartableFalkorDB

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

NS = "concepts"
TOPICS = [
    "backup rotation",
    "canary release",
    "cold storage",
    "disk quota",
    "feature flag",
    "load shedding",
    "log retention",
    "rate limit",
    "read replica",
    "schema migration",
]


async def concept_index_answers(store: FalkorStore) -> tuple[int, int]:
    """(rows the S_Concept index answered for a probe of min(concepts, 32), that number)."""
    checks = [c for c in await store.check_vector_indexes() if c.graph == NS]
    (check,) = [c for c in checks if c.label == "S_Concept"]
    assert check.found is not None, check.error
    return check.found, check.expected


async def full_knn(store: FalkorStore) -> set[str]:
    """The names a k-NN query for every concept, from its own stored vector, finds."""
    n = int(
        (await store.query(NS, "MATCH (c:S_Concept) RETURN count(c)", read_only=True)).scalar(0)
    )
    res = await store.query(
        NS,
        "MATCH (s:S_Concept) CALL db.idx.vector.queryNodes('S_Concept', 'embedding', $k, "
        "s.embedding) YIELD node RETURN DISTINCT node.name",
        {"k": n},
        read_only=True,
    )
    return {str(r[0]) for r in res.rows}


def wait_for_rewrite(server: RestartableFalkorDB, timeout_s: float = 60.0) -> None:
    """Wait (bounded) until no rewrite of the append-only file is running or scheduled."""
    assert server.server is not None
    client = redis.Redis(unix_socket_path=server.server.socket_path, socket_timeout=10)
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            info = client.info("persistence")
            if not info["aof_rewrite_in_progress"] and not info["aof_rewrite_scheduled"]:
                return
            assert time.monotonic() < deadline, "the AOF rewrite did not finish"
            time.sleep(0.05)
    finally:
        client.close()


async def write_and_rewrite(memory: Memory) -> set[str]:
    """40 concepts (10 first implied by a memory), then 15 new descriptions and the 10
    implied ones named explicitly: every kind of write that re-indexes a stored concept."""
    names: set[str] = set()
    for i in range(40):
        name = f"{TOPICS[i % len(TOPICS)]} {i}"
        names.add(name)
        origin = "memory" if i >= 30 else None
        await memory.semantic.add_concept(NS, name, f"how team {i} handles it", origin=origin)
    for i in range(0, 30, 2):
        name = f"{TOPICS[i % len(TOPICS)]} {i}"
        await memory.semantic.add_concept(NS, name, f"what changed for team {i} in spring")
    for i in range(30, 40):
        await memory.semantic.add_concept(NS, f"{TOPICS[i % len(TOPICS)]} {i}")
    return names


@pytest.mark.parametrize("how", ["kill", "stop"])
async def test_rewritten_concepts_are_all_found_live_and_after_a_restart_without_repair(
    restartable_falkordb: RestartableFalkorDB, embedder: Embedder, how: str
) -> None:
    server = restartable_falkordb
    async with server.store() as store:
        memory = Memory(store=store, embedder=embedder, namespace=NS)
        names = await write_and_rewrite(memory)
        assert await concept_index_answers(store) == (PROBE_K, PROBE_K)
        assert await full_knn(store) == names
        # A concept written after the rebuild lands in the replayed part as data only.
        await memory.semantic.add_concept(NS, "retry budget", "how many retries a call gets")
        names.add("retry budget")
    await anyio.to_thread.run_sync(wait_for_rewrite, server)

    server.verify_indexes = False  # the start-time check must have nothing to repair
    await anyio.to_thread.run_sync(lambda: server.restart(kill=how == "kill"))
    async with server.store() as store:
        assert await concept_index_answers(store) == (PROBE_K, PROBE_K)
        assert await full_knn(store) == names
        hits = await Memory(store=store, embedder=embedder, namespace=NS).semantic.search(
            NS, "what changed for team 4 in spring", k=3, labels=["S_Concept"]
        )
        assert hits and hits[0].properties["name"] == f"{TOPICS[4]} 4"


async def test_the_start_time_check_finds_nothing_to_fix_after_concepts_were_rewritten(
    restartable_falkordb: RestartableFalkorDB, embedder: Embedder
) -> None:
    server = restartable_falkordb
    async with server.store() as store:
        await write_and_rewrite(Memory(store=store, embedder=embedder, namespace=NS))
    await anyio.to_thread.run_sync(wait_for_rewrite, server)
    await anyio.to_thread.run_sync(lambda: server.restart(kill=True))

    assert server.server is not None
    record = server.server.last_index_check()
    if record is not None:  # nothing replayed at all is as good
        ours = [c for c in record["indexes"] if c["graph"] == NS]
        assert ours and all(c["rebuilt_s"] is None and c["ok"] for c in ours), ours


async def test_two_stores_rebuilding_the_concept_index_at_once_leave_it_whole(
    restartable_falkordb: RestartableFalkorDB, embedder: Embedder
) -> None:
    server = restartable_falkordb
    async with server.store() as a, server.store() as b:
        memory = Memory(store=a, embedder=embedder, namespace=NS)
        for i in range(20):
            await memory.semantic.add_concept(NS, f"queue depth {i}", f"alert at {i} jobs")
        async with anyio.create_task_group() as tg:
            tg.start_soon(a.rebuild_vector_indexes, NS, ["S_Concept"])
            tg.start_soon(b.rebuild_vector_indexes, NS, ["S_Concept"])
        assert await concept_index_answers(a) == (20, 20)
        took = await a.rebuild_vector_indexes(NS, ["S_Memory", "S_Concept"])
        assert all(seconds is not None for seconds in took.values()), took
        assert await a.rebuild_vector_indexes("no_such_graph_here", ["S_Concept"]) == {
            "S_Concept": None
        }
