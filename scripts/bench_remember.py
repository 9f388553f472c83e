"""`Memory.remember` without an LLM: latency, FalkorDB queries and embedding time per call.

    uv run python scripts/bench_remember.py                 # the configured embedder
    uv run python scripts/bench_remember.py --no-embed      # random vectors: no model runs

Remembers every turn of the synthetic conversations in `scripts/retrieval_dataset.json`
("speaker: text", at the session's time) into a fresh namespace, one call after the
other, and reports p50/p95 of the whole call, the queries each call sent to FalkorDB,
and the time spent in the embedder (one `embed` call or several). The first
`--warmup` calls are not timed. `--no-embed` swaps the model for a random unit vector
seeded by the text: what is left is the database and Python cost. Not a test: the
numbers go to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import anyio
from polyg_core.config import settings_from_env
from polyg_core.memory import Memory
from polyg_core.providers.embeddings import make_embedder
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.testing.counting import CountingStore
from polyg_core.testing.hashing import HashEmbedder
from polyg_core.testing.timed import TimedEmbedder

DATASET = Path(__file__).with_name("retrieval_dataset.json")


def notes() -> list[tuple[str, str, str]]:
    data = json.loads(DATASET.read_text(encoding="utf-8"))
    out: list[tuple[str, str, str]] = []
    for conv in data["conversations"]:
        for session in conv["sessions"]:
            for turn in session["turns"]:
                out.append((f"{turn['speaker']}: {turn['text']}", session["date_time"], turn["id"]))
    return out


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def bench(no_embed: bool, warmup: int, limit: int | None) -> None:
    settings = settings_from_env(os.environ)
    store = CountingStore(settings.storage)
    await store.connect()
    inner: Embedder = (
        HashEmbedder("bench/hash") if no_embed else make_embedder(settings.embedding_model)
    )
    embedder = TimedEmbedder(inner)
    ns = f"bench_remember_{'noembed' if no_embed else 'embed'}"
    await store.delete_graph(ns)
    memory = Memory(store=store, embedder=embedder, llm=None, settings=settings, namespace=ns)
    items = notes()[: limit or None]
    totals: list[float] = []
    queries: list[int] = []
    embed_ms: list[float] = []
    embed_calls: list[int] = []
    for i, (content, when, source) in enumerate(items):
        q0, e0, c0 = len(store.queries), embedder.seconds, embedder.calls
        t0 = time.perf_counter()
        await memory.remember(content, reference_time=when, source_id=source)
        elapsed = (time.perf_counter() - t0) * 1000
        if i < warmup:
            continue
        totals.append(elapsed)
        queries.append(len(store.queries) - q0)
        embed_ms.append((embedder.seconds - e0) * 1000)
        embed_calls.append(embedder.calls - c0)
    stats = await memory.statistics(ns)
    print(
        json.dumps(
            {
                "embeddings": "hash-seeded random (no model)" if no_embed else inner.model_name,
                "calls_timed": len(totals),
                "p50_ms": round(statistics.median(totals), 2),
                "p95_ms": round(pct(totals, 0.95), 2),
                "queries_p50": statistics.median(queries),
                "queries_max": max(queries),
                "embed_ms_p50": round(statistics.median(embed_ms), 2),
                "embed_calls_p50": statistics.median(embed_calls),
                "embed_calls_max": max(embed_calls),
                "nodes": stats.model_dump().get("total_nodes"),
            },
            indent=2,
        )
    )
    await store.delete_graph(ns)
    await store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description="remember latency and queries per call.")
    parser.add_argument("--no-embed", action="store_true", help="random vectors, no model")
    parser.add_argument("--warmup", type=int, default=5, help="untimed first calls")
    parser.add_argument("--limit", type=int, default=None, help="remember only the first N turns")
    args = parser.parse_args()
    anyio.run(bench, args.no_embed, args.warmup, args.limit)


if __name__ == "__main__":
    main()
