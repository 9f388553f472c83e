"""Import throughput: N entities + N relations + N events through `polyg import`'s writer.

    uv run python scripts/bench_import.py --n 10000            # with the configured embedder
    uv run python scripts/bench_import.py --n 10000 --no-embed # random vectors, no model: database cost only
    uv run python scripts/bench_import.py --n 10000 --extra 2000  # and 2,000 facts, causal links, concepts, memories, solutions

Writes a JSONL file of N entities, N relations (a ring plus random chords) and N
events (each involving two entities), imports it into a fresh namespace and
reports records/s per kind and overall, the process's peak RSS and FalkorDB's
memory for the graph. `--no-embed` swaps the embedder for one that returns a
random unit vector seeded by the text (the graph classes always embed; this
isolates the database and Python cost). Not a test: numbers go to the docs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import numpy.typing as npt
from polyg_core.config import settings_from_env
from polyg_core.providers.embeddings import make_embedder
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.storage.store import FalkorStore
from polyg_core.transfer import RecordWriter, iter_records


@dataclass
class HashEmbedder:
    """A random unit vector per text, seeded by the text (no model runs).

    Identical vectors would be a worst case for the HNSW index (every distance
    equal); random ones cost the index what real embeddings cost it.
    """

    dimension: int = 384
    model_name: str = "bench/hash"

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")
            vec = np.random.default_rng(seed).standard_normal(self.dimension)
            out[i] = vec / np.linalg.norm(vec)
        return out


EXTRA_KINDS = ("fact", "causal_link", "concept", "memory", "solution")


def write_data(path: Path, n: int, seed: int = 7, extra: int = 0) -> dict[str, int]:
    rng = random.Random(seed)
    kinds = {"entity": 0, "relation": 0, "event": 0}
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            rec = {"kind": "entity", "name": f"svc-{i}", "type": "Service", "properties": {"i": i}}
            f.write(json.dumps(rec) + "\n")
            kinds["entity"] += 1
        for i in range(n):
            j = (i + 1) % n if i % 2 == 0 else rng.randrange(n)
            if j == i:
                j = (i + 1) % n
            rec = {
                "kind": "relation",
                "source": f"svc-{i}",
                "target": f"svc-{j}",
                "type": "calls",
                "source_type": "Service",
                "target_type": "Service",
            }
            f.write(json.dumps(rec) + "\n")
            kinds["relation"] += 1
        for i in range(n):
            a, b = rng.randrange(n), rng.randrange(n)
            rec = {
                "kind": "event",
                "description": f"deploy {i} of svc-{a} paged the owner of svc-{b}",
                "occurred_at": 1_760_000_000_000 + i * 60_000,
                "entities": [f"svc-{a}", f"svc-{b}"],
            }
            f.write(json.dumps(rec) + "\n")
            kinds["event"] += 1
        records: dict[str, Any] = {
            "fact": lambda i: {
                "kind": "fact",
                "subject": f"svc-{i % n}",
                "predicate": "owned_by",
                "object": f"team-{i % 50}",
                "valid_from": 1_700_000_000_000 + i * 60_000,
            },
            "causal_link": lambda i: {
                "kind": "causal_link",
                "cause": f"svc-{i % n} latency rose in window {i}",
                "effect": f"svc-{(i * 7) % n} errors rose in window {i}",
                "confidence": 0.7,
                "entities": [f"svc-{i % n}"],
            },
            "concept": lambda i: {
                "kind": "concept",
                "name": f"topic-{i}",
                "description": f"what svc-{i % n} is about",
                "entities": [f"svc-{i % n}"],
            },
            "memory": lambda i: {
                "kind": "memory",
                "content": f"note {i}: svc-{i % n} was tuned",
                "concepts": [f"topic-{i}"],
            },
            "solution": lambda i: {
                "kind": "solution",
                "problem": f"svc-{i % n} queue backed up in window {i}",
                "solution": f"drain the svc-{i % n} queue for window {i}",
                "evidence": "runbook",
            },
        }
        for kind in EXTRA_KINDS if extra else ():
            for i in range(extra):
                f.write(json.dumps(records[kind](i)) + "\n")
            kinds[kind] = extra
    return kinds


def progress(marks: list[tuple[int, float]], done: int, elapsed: float) -> None:
    marks.append((done, elapsed))
    if len(marks) % 20 == 0:
        print(f"{done} records in {elapsed:.0f} s", file=sys.stderr, flush=True)


async def bench(n: int, no_embed: bool, batch: int, extra: int) -> None:
    settings = settings_from_env(os.environ)
    store = await FalkorStore(settings.storage).connect()
    embedder: Embedder = HashEmbedder() if no_embed else make_embedder(settings.embedding_model)
    ns = f"bench_import_{n}_{'noembed' if no_embed else 'embed'}"
    await store.delete_graph(ns)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "data.jsonl"
        kinds = write_data(path, n, extra=extra)
        writer = RecordWriter.build(store, embedder, batch_size=batch)
        marks: list[tuple[int, float]] = []
        t0 = time.perf_counter()
        report = await writer.run(
            ns,
            lambda: iter_records(path, "jsonl"),
            on_progress=lambda done: progress(marks, done, time.perf_counter() - t0),
        )
        total_s = time.perf_counter() - t0

    def elapsed_at(done: int) -> float:
        return next((t for d, t in marks if d >= done), total_s)

    e_s = elapsed_at(kinds["entity"])
    r_s = elapsed_at(kinds["entity"] + kinds["relation"]) - e_s
    done = kinds["entity"] + kinds["relation"] + kinds["event"]
    v_s = elapsed_at(done) - e_s - r_s
    extra_rates: dict[str, float | None] = {}
    for kind in EXTRA_KINDS if extra else ():
        start = elapsed_at(done)
        done += kinds[kind]
        spent = elapsed_at(done) - start
        extra_rates[f"{kind}s_per_s"] = round(kinds[kind] / spent, 1) if spent > 0 else None
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    graph_mb = (await store.memory_usage(ns) or 0) / 1024 / 1024
    print(
        json.dumps(
            {
                "n_per_kind": n,
                "embeddings": "hash-seeded random (no model)" if no_embed else embedder.model_name,
                "batch": batch,
                "records": report.records,
                "failed": report.failed,
                "total_s": round(total_s, 1),
                "records_per_s": round(report.records / total_s, 1),
                "entities_per_s": round(kinds["entity"] / e_s, 1) if e_s else None,
                "relations_per_s": round(kinds["relation"] / r_s, 1) if r_s > 0 else None,
                "events_per_s": round(kinds["event"] / v_s, 1) if v_s > 0 else None,
                **extra_rates,
                "peak_rss_mb": round(peak_mb, 1),
                "falkordb_graph_mb": round(graph_mb, 1),
            },
            indent=2,
        )
    )
    await store.delete_graph(ns)
    await store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description="Import throughput benchmark.")
    parser.add_argument("--n", type=int, default=10_000, help="records per kind")
    parser.add_argument(
        "--no-embed", action="store_true", help="hash-seeded random vectors, no model"
    )
    parser.add_argument("--batch", type=int, default=500, help="records per batch")
    parser.add_argument(
        "--extra",
        type=int,
        default=0,
        help="also this many facts, causal links, concepts and memories",
    )
    args = parser.parse_args()
    anyio.run(bench, args.n, args.no_embed, args.batch, args.extra)


if __name__ == "__main__":
    main()
