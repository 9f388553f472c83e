"""Throughput of queued remember jobs (jobs/s) on a private embedded FalkorDB.

    uv run python scripts/bench_jobs.py [--jobs 100] [--llm-jobs 40] [--latency 0.5]

Rule-based extraction with 1, 2 and 4 in-process workers' worth of concurrency
(one JobWorker with that many concurrent jobs), then the LLM path against the
scripted loopback model answering after a fixed latency. Each run uses a fresh
graph and a fresh queue; the time is from the worker's start to the last job done.
A warm-up run (not reported) comes first: the first graph and queue of a process
are several times slower.
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from polyg_core.config import StorageSettings
from polyg_core.jobs import JobQueue, JobWorker
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.local import MiniLMEmbedder
from polyg_core.providers.llm.litellm import LiteLLMProvider
from polyg_core.storage.store import FalkorStore
from polyg_core.testing.llm_server import Reply, ScriptedLLMServer


def note(i: int) -> str:
    return (
        f"On 2026-01-{1 + i % 28:02d} deploy d{i} of service svc{i} failed "
        f"because config key K{i} was missing."
    )


def extraction(messages: list[dict[str, Any]]) -> str:
    text = str(messages[-1]["content"]).split("<<<\n", 1)[-1]
    m = re.search(r"deploy (d\d+) of service (svc\d+) failed because config key (K\d+)", text)
    assert m
    d, s, k = m.groups()
    return json.dumps(
        {
            "entities": [
                {"name": s, "entity_type": "Service"},
                {"name": d, "entity_type": "Deployment"},
                {"name": k, "entity_type": "ConfigKey"},
            ],
            "relations": [{"source": d, "target": s, "relationship_type": "deploys"}],
            "events": [
                {
                    "description": f"deploy {d} of {s} failed",
                    "occurred_at": "2026-01-05T10:00:00Z",
                    "entities": [d, s],
                }
            ],
            "facts": [],
            "causal_links": [
                {
                    "cause": f"config key {k} missing",
                    "effect": f"deploy {d} failed",
                    "confidence": 0.9,
                    "evidence": text[:100],
                    "entities": [d],
                }
            ],
            "concepts": [],
            "category": "episodic",
        }
    )


async def run_once(
    store: FalkorStore, memory: Memory, name: str, n: int, concurrency: int
) -> tuple[float, dict[str, int]]:
    queue = await JobQueue.open(store, name=name)
    try:
        refs = [await queue.enqueue_remember(note(i), graph=name) for i in range(n)]
        started = time.perf_counter()
        async with JobWorker(queue, memory, concurrency=concurrency, shutdown_grace_s=1).running():
            infos = await queue.wait([r.job_id for r in refs])
            elapsed = time.perf_counter() - started
        counts: dict[str, int] = {}
        for i in infos:
            counts[i.status] = counts.get(i.status, 0) + 1
        return n / elapsed, counts
    finally:
        keys = [k async for k in queue.redis.scan_iter(match=f"saq:*{name}*")]
        if keys:
            await queue.redis.delete(*keys)
        await queue.close()
        await store.delete_graph(name)


async def main(args: argparse.Namespace) -> None:
    data = Path(tempfile.mkdtemp(prefix="polyg-bench-jobs-"))
    store = await FalkorStore(StorageSettings(data_dir=data)).connect()
    embedder = MiniLMEmbedder()
    try:
        rules = Memory(store=store, embedder=embedder, namespace="bench")
        await rules.remember("Warm-up note about svc0.", graph="warmup")  # load the model
        await store.delete_graph("warmup")
        await run_once(store, rules, "bench_warmup", 20, 2)  # first graph, first queue: not timed
        print(f"rule-based extractor, {args.jobs} jobs")
        for k, c in enumerate(args.rule_concurrency):
            rate, counts = await run_once(store, rules, f"bench_rules_{c}_{k}", args.jobs, c)
            print(f"  concurrency {c}: {rate:6.2f} jobs/s  {counts}")

        def respond(messages: list[dict[str, Any]]) -> Reply:
            return Reply(content=extraction(messages), delay_s=args.latency)

        async with ScriptedLLMServer(responder=respond) as server:
            llm = LiteLLMProvider(
                "openai/test-model", api_base=server.api_base, api_key="test", timeout_s=30
            )
            with_llm = Memory(store=store, embedder=embedder, llm=llm, namespace="bench")
            print(f"scripted LLM at {args.latency:g}s latency, {args.llm_jobs} jobs")
            for c in (1, 4, 8):
                rate, counts = await run_once(store, with_llm, f"bench_llm_{c}", args.llm_jobs, c)
                print(f"  concurrency {c}: {rate:6.2f} jobs/s  {counts}")
    finally:
        await store.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=100)
    parser.add_argument("--llm-jobs", type=int, default=40)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--rule-concurrency", type=int, nargs="+", default=[1, 2, 4])
    anyio.run(main, parser.parse_args())
