"""Queued remember jobs: content, dedup, idempotent re-runs, failures, cancel and retry."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from polyg_core.errors import InvalidInput
from polyg_core.graphs.semantic import content_hash
from polyg_core.jobs import JobNotFound, JobQueue, remember_job_id
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.storage.store import FalkorStore

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore:Call to deprecated setex:DeprecationWarning"),
]

REF = "2026-01-14T12:00:00Z"


async def _run_queued(
    kit: Any, n: int, store: FalkorStore, embedder: Embedder, namespace: str, queue: JobQueue
) -> None:
    memory = Memory(store=store, embedder=embedder, namespace=namespace)
    refs = [await queue.enqueue_remember(kit.note(i), graph=namespace) for i in range(n)]
    assert len({r.job_id for r in refs}) == n
    assert all(r.status == "queued" and not r.deduplicated for r in refs)
    with anyio.fail_after(20 + n * 0.5):
        async with kit.make_worker(queue, memory).running():
            infos = await queue.wait([r.job_id for r in refs])
    assert {i.status for i in infos} == {"done"}
    assert all(i.result and i.result["graph"] == namespace for i in infos)
    assert (await queue.stats(namespace)).done == n

    assert await kit.names(store, namespace, "S_Memory", "content") == sorted(
        kit.note(i) for i in range(n)
    )
    events = await kit.names(store, namespace, "T_Event", "description")
    causes = await kit.names(store, namespace, "C_Node", "description")
    for i in range(n):
        assert sum(f"deploy d{i} of service svc{i} failed" in e for e in events) == 1
        assert f"config key K{i} was missing" in causes
    # Concepts and entities shared by all notes exist once, although jobs ran concurrently.
    for label, prop in [("S_Concept", "name"), ("E_Entity", "name"), ("C_Node", "description")]:
        found = await kit.names(store, namespace, label, prop)
        assert len(found) == len(set(found)), f"duplicate {label}"
    assert len(await kit.names(store, namespace, "S_Concept", "name")) < n


async def _same_as_direct(
    kit: Any, n: int, store: FalkorStore, embedder: Embedder, namespace: str, queue: JobQueue
) -> None:
    memory = Memory(store=store, embedder=embedder, namespace=namespace)
    direct_ns = f"{namespace}_direct"
    try:
        for i in range(n):
            info = await queue.get(remember_job_id(namespace, content_hash(kit.note(i))))
            assert info.result is not None
            ref_time = (await queue.raw(info.job_id))["kwargs"]["reference_time"]
            await memory.remember(kit.note(i), graph=direct_ns, reference_time=ref_time)
        assert await kit.label_counts(store, namespace) == await kit.label_counts(store, direct_ns)
        for label, prop in [
            ("S_Memory", "content"),
            ("E_Entity", "name"),
            ("T_Event", "description"),
            ("C_Node", "description"),
            ("S_Concept", "name"),
        ]:
            assert await kit.names(store, namespace, label, prop) == await kit.names(
                store, direct_ns, label, prop
            )
    finally:
        await store.delete_graph(direct_ns)


async def test_fifty_queued_remember_jobs_finish_with_the_right_graph(
    kit: Any, store: FalkorStore, embedder: Embedder, namespace: str, queue: JobQueue
) -> None:
    await _run_queued(kit, 50, store, embedder, namespace, queue)


# The fifty-job test above runs the same path in every test run.
@pytest.mark.slow
@pytest.mark.heavy
async def test_two_hundred_queued_remember_jobs_finish_with_the_right_graph(
    kit: Any, store: FalkorStore, embedder: Embedder, namespace: str, queue: JobQueue
) -> None:
    await _run_queued(kit, 200, store, embedder, namespace, queue)
    await _same_as_direct(kit, 200, store, embedder, namespace, queue)


async def test_same_content_queued_twice_is_one_job(
    kit: Any, queue: JobQueue, namespace: str
) -> None:
    first = await queue.enqueue_remember(kit.note(1), graph=namespace)
    again = await queue.enqueue_remember(
        "  " + kit.note(1).replace(" ", "  ") + "\n", graph=namespace
    )
    assert again.job_id == first.job_id
    assert again.deduplicated
    other_graph = await queue.enqueue_remember(kit.note(1), graph=f"{namespace}_b")
    assert other_graph.job_id != first.job_id
    stats = await queue.stats()
    assert stats.queued == 2


async def test_running_a_finished_job_again_adds_nothing(
    kit: Any, store: FalkorStore, memory: Memory, namespace: str, queue: JobQueue
) -> None:
    ref = await queue.enqueue_remember(kit.note(7), graph=namespace, reference_time=REF)
    async with kit.make_worker(queue, memory).running():
        with anyio.fail_after(20):
            (done,) = await queue.wait([ref.job_id])
        before = await kit.label_counts(store, namespace)
        assert done.status == "done" and done.result and done.result["created"]
        # At-least-once delivery: the same job delivered again.
        again = await queue.enqueue_remember(kit.note(7), graph=namespace, reference_time=REF)
        assert again.job_id == ref.job_id
        with anyio.fail_after(20):
            (redone,) = await queue.wait([ref.job_id])
    assert redone.status == "done" and redone.result and not redone.result["created"]
    assert await kit.label_counts(store, namespace) == before


async def test_a_job_that_cannot_succeed_fails_at_once_with_its_error_and_is_counted(
    kit: Any, store: FalkorStore, memory: Memory, namespace: str, queue: JobQueue
) -> None:
    # The graph was built with another embedding model: no retry can fix that.
    await store.ensure_vectors(namespace, "other/model", 8)
    bad = await queue.enqueue_remember(kit.note(1), graph=namespace)
    async with kit.make_worker(queue, memory).running():
        with anyio.fail_after(20):
            (info,) = await queue.wait([bad.job_id])
    assert info.status == "failed"
    assert info.attempts == 1
    assert info.error and "EmbeddingMismatch" in info.error and "other/model" in info.error
    assert (await queue.stats(namespace)).failed == 1
    failed, _ = await queue.list_jobs(statuses=["failed"])
    assert [j.job_id for j in failed] == [bad.job_id]


async def test_cancel_a_queued_job_then_retry_it(
    kit: Any, store: FalkorStore, memory: Memory, namespace: str, queue: JobQueue
) -> None:
    ref = await queue.enqueue_remember(kit.note(3), graph=namespace, reference_time=REF)
    cancelled = await queue.cancel(ref.job_id)
    assert cancelled.status == "cancelled"
    with pytest.raises(InvalidInput, match="already finished"):
        await queue.cancel(ref.job_id)
    retried = await queue.retry(ref.job_id)
    assert retried.status == "queued"
    async with kit.make_worker(queue, memory).running():
        with anyio.fail_after(20):
            (info,) = await queue.wait([ref.job_id])
    assert info.status == "done"
    assert await kit.names(store, namespace, "S_Memory", "content") == [kit.note(3)]
    with pytest.raises(InvalidInput, match="only failed or cancelled"):
        await queue.retry(ref.job_id)


async def test_unknown_job_and_bad_input_say_what_to_do(
    kit: Any, queue: JobQueue, namespace: str
) -> None:
    with pytest.raises(JobNotFound, match="list_jobs"):
        await queue.get("remember:nope:0")
    with pytest.raises(InvalidInput, match="empty"):
        await queue.enqueue_remember("   ", graph=namespace)
    with pytest.raises(InvalidInput, match="unknown job status"):
        await queue.list_jobs(statuses=["finished"])  # type: ignore[list-item]
