"""Queues on the test session's FalkorDB, one queue name per test, workers with fast timers."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from polyg_core.jobs import JobPolicy, JobQueue, JobWorker
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.storage.store import FalkorStore

FAST = JobPolicy(
    max_attempts=3, retry_delay_s=0.1, max_retry_delay_s=0.5, timeout_s=60, heartbeat_s=2
)


def note(i: int) -> str:
    """A distinct note per i that names a service, a deploy and a cause."""
    return (
        f"On 2026-01-{1 + i % 28:02d} deploy d{i} of service svc{i} failed "
        f"because config key K{i} was missing."
    )


def note_of(messages: list[dict[str, Any]]) -> str:
    """The note an extractor request carries."""
    user = str(messages[-1]["content"])
    return user.split("<<<\n", 1)[-1].split("\n>>>", 1)[0]


def extraction_for(text: str) -> str:
    """What a model would extract from a `note`: the service, deploy, key, event and cause."""
    m = re.search(r"deploy (d\d+) of service (svc\d+) failed because config key (K\d+)", text)
    assert m, text
    deploy, svc, key = m.groups()
    return json.dumps(
        {
            "entities": [
                {"name": svc, "entity_type": "Service"},
                {"name": deploy, "entity_type": "Deployment"},
                {"name": key, "entity_type": "ConfigKey"},
            ],
            "relations": [{"source": deploy, "target": svc, "relationship_type": "deploys"}],
            "events": [
                {
                    "description": f"deploy {deploy} of {svc} failed",
                    "occurred_at": "2026-01-05T10:00:00Z",
                    "entities": [deploy, svc],
                }
            ],
            "facts": [],
            "causal_links": [
                {
                    "cause": f"config key {key} missing",
                    "effect": f"deploy {deploy} failed",
                    "confidence": 0.9,
                    "evidence": text[:200],
                    "entities": [deploy],
                }
            ],
            "concepts": [],
            "category": "episodic",
        }
    )


@pytest.fixture
async def queue(store: FalkorStore) -> AsyncIterator[JobQueue]:
    q = await JobQueue.open(store, name=f"tq_{uuid.uuid4().hex[:10]}", policy=FAST)
    yield q
    keys = [k async for k in q.redis.scan_iter(match=f"saq:*{q.queue.name}*")]
    if keys:
        await q.redis.delete(*keys)
    await q.close()


@pytest.fixture
def memory(store: FalkorStore, embedder: Embedder, namespace: str) -> Memory:
    return Memory(store=store, embedder=embedder, namespace=namespace)


def make_worker(queue: JobQueue, memory: Memory, **kwargs: Any) -> JobWorker:
    """A worker with fast sweeps and a short shutdown grace, for tests."""
    kwargs.setdefault("concurrency", 4)
    return JobWorker(queue, memory, sweep_s=1, shutdown_grace_s=1, **kwargs)


class Kit:
    """The helpers above, handed to tests as the `kit` fixture (tests cannot import conftest)."""

    note = staticmethod(note)
    note_of = staticmethod(note_of)
    extraction_for = staticmethod(extraction_for)
    make_worker = staticmethod(make_worker)
    fast = FAST

    @staticmethod
    async def label_counts(store: FalkorStore, ns: str) -> dict[str, int]:
        return await label_counts(store, ns)

    @staticmethod
    async def names(store: FalkorStore, ns: str, label: str, prop: str) -> list[str]:
        return await names(store, ns, label, prop)


@pytest.fixture
def kit() -> type[Kit]:
    return Kit


async def label_counts(store: FalkorStore, ns: str) -> dict[str, int]:
    res = await store.query(
        ns, "MATCH (n) WHERE NOT n:P_Meta RETURN labels(n)[0], count(n)", read_only=True
    )
    return {str(label): int(n) for label, n in res.rows}


async def names(store: FalkorStore, ns: str, label: str, prop: str) -> list[str]:
    if not re.fullmatch(r"[A-Z]_[A-Za-z]+", label) or not re.fullmatch(r"[a-z_]+", prop):
        raise ValueError("label/prop must be schema constants")
    res = await store.query(ns, f"MATCH (n:{label}) RETURN n.{prop}", read_only=True)
    return sorted(str(r[0]) for r in res.rows)
