"""The first recall of a new process on a namespace of many memories.

    uv run python scripts/bench_first_recall.py --memories 100000 --data-dir /tmp/polyg-first-recall

Writes `--memories` memories (once; a data dir that already holds them is reused) through
the semantic graph's batch writer, with random unit vectors (k-NN timings are real,
similarities meaningless) and texts drawn from a vocabulary of ~1,500 words, so BM25's
postings have a realistic spread. Then starts `--runs` new processes one after another;
each opens the memory, loads the embedding model (timed apart: any process that embeds
pays it), asks one question (the first recall), then `--warm` more (default 5), and
reports its times (wall clock and the process's CPU time, with the load average), how
many memories its first recall read from FalkorDB into the catalogue (`fetched`) and
from the catalogue file (`loaded`), and its peak RSS. The first process
after writing pays for building the catalogue file once; the table shows it apart.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import numpy as np
from polyg_core.config import Settings, StorageSettings
from polyg_core.graphs.base import now_ms
from polyg_core.graphs.semantic import memory_row, write_memories
from polyg_core.memory import Memory
from polyg_shared import MemoryCategory

NAMESPACE = "bench_first_recall"
MODEL = "local/minilm"
DIM = 384
BATCH = 1_000
START_MS = 1_735_689_600_000  # 2025-01-01
PEOPLE = [f"{a} {b}" for a in ("Ada", "Bram", "Cleo", "Dov", "Esme") for b in ("Ng", "Ortiz")]
QUESTIONS = [
    "What did Cleo Ng say about the harbour ferry timetable?",
    "Why was the bakery oven repaired in spring?",
    "When did Bram Ortiz move the choir rehearsal?",
    "Which garden beds got the new compost?",
    "Who fixed the lighthouse lamp?",
    "What happened to the library roof after the storm?",
]


def _vocabulary(rng: random.Random, size: int = 1_500) -> list[str]:
    syllables = ["ka", "lo", "mi", "ren", "sa", "tor", "vel", "un", "pa", "dri", "qu", "zen"]
    words = {"".join(rng.choice(syllables) for _ in range(rng.randint(2, 3))) for _ in range(size)}
    common = "harbour ferry bakery oven choir garden compost lighthouse lamp library roof"
    return sorted(words) + common.split()


def _text(rng: random.Random, words: list[str], i: int) -> str:
    # Zipf-like: a few words in many memories, most in few.
    n = rng.randint(6, 18)
    picked = [words[min(len(words) - 1, int(rng.paretovariate(1.1)) - 1)] for _ in range(n // 2)]
    picked += [rng.choice(words) for _ in range(n - len(picked))]
    rng.shuffle(picked)
    return f"{rng.choice(PEOPLE)}: note {i} " + " ".join(picked) + "."


async def _populate(memory: Memory, n: int) -> float:
    store = memory.store
    res = await store.query(NAMESPACE, "MATCH (m:S_Memory) RETURN count(m)", read_only=True)
    if res.rows and int(res.rows[0][0]) == n:
        return 0.0
    t0 = time.perf_counter()
    await store.delete_graph(NAMESPACE)
    await store.ensure_schema(NAMESPACE)
    await store.ensure_vectors(NAMESPACE, MODEL, DIM)
    rng = random.Random(7)
    vrng = np.random.default_rng(7)
    words = _vocabulary(rng)
    now = now_ms()
    for start in range(0, n, BATCH):
        size = min(BATCH, n - start)
        vecs = vrng.standard_normal((size, DIM)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        rows: list[dict[str, Any]] = []
        for j in range(size):
            i = start + j
            t = START_MS + i * 60_000
            text = _text(rng, words, i)
            rows.append(
                memory_row(
                    j, text, MemoryCategory.EPISODIC, [], [], [], t, None, vecs[j].tolist(), now
                )
            )
        await write_memories(store, NAMESPACE, rows)
        if start and start % 20_000 == 0:
            print(f"  written {start} memories ({time.perf_counter() - t0:.0f} s)", flush=True)
    return time.perf_counter() - t0


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


async def _child(data_dir: Path, warm_calls: int) -> None:
    t0 = time.perf_counter()
    settings = Settings(storage=StorageSettings(data_dir=data_dir))
    memory = await Memory.open(settings, namespace=NAMESPACE)
    try:
        opened = time.perf_counter() - t0
        rng = random.Random()
        questions = rng.sample(QUESTIONS, 6)
        t_model = time.perf_counter()
        await memory.embedder.embed(["the model loads on its first use"])
        model = time.perf_counter() - t_model
        load = os.getloadavg()[0]
        t1, c1 = time.perf_counter(), time.process_time()
        await memory.recall(questions[0])
        first, first_cpu = time.perf_counter() - t1, time.process_time() - c1
        catalogue: Any = memory.pipeline.catalogue
        cat: Any = await catalogue.get(NAMESPACE)
        fetched = getattr(catalogue, "fetched", None)
        loaded = getattr(cat, "loaded", len(cat))
        warm: list[float] = []
        warm_cpu: list[float] = []
        for k in range(warm_calls):
            t2, c2 = time.perf_counter(), time.process_time()
            await memory.recall(questions[1 + k % (len(questions) - 1)])
            warm.append(time.perf_counter() - t2)
            warm_cpu.append(time.process_time() - c2)
        out = {
            "load": load,
            "open_ms": opened * 1000,
            "model_ms": model * 1000,
            "first_ms": first * 1000,
            "first_cpu_ms": first_cpu * 1000,
            "warm_p50_ms": statistics.median(warm) * 1000,
            "warm_p95_ms": _p95(warm) * 1000,
            "warm_cpu_p50_ms": statistics.median(warm_cpu) * 1000,
            "fetched": fetched,
            "loaded": loaded,
            "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        }
        print(json.dumps(out), flush=True)
    finally:
        await memory.close()


async def _parent(n: int, data_dir: Path, runs: int, warm_calls: int) -> None:
    settings = Settings(storage=StorageSettings(data_dir=data_dir))
    memory = await Memory.open(settings, namespace=NAMESPACE)  # keeps the server up
    try:
        wrote = await _populate(memory, n)
        if wrote:
            print(f"wrote {n} memories in {wrote:.0f} s")
        rows: list[dict[str, Any]] = []
        for run in range(runs):
            out = await anyio.run_process(
                [
                    sys.executable,
                    __file__,
                    "--child",
                    "--data-dir",
                    str(data_dir),
                    "--warm",
                    str(warm_calls),
                ],
                check=True,
            )
            row = json.loads(out.stdout.decode().strip().splitlines()[-1])
            rows.append(row)
            print(
                f"process {run + 1}: {json.dumps({k: v if v is None else round(v, 1) for k, v in row.items()})}"
            )
        later = rows[1:] or rows
        print(
            f"\n{n} memories; new process, first recall: median "
            f"{statistics.median(r['first_ms'] for r in later):.0f} ms over {len(later)} "
            f"processes; warm recall median {statistics.median(r['warm_p50_ms'] for r in later):.0f} ms "
            f"(p95 {statistics.median(r['warm_p95_ms'] for r in later):.0f} ms); "
            f"first process after writing: {rows[0]['first_ms']:.0f} ms"
        )
    finally:
        await memory.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--data-dir", type=Path, required=True, help="kept between runs")
    parser.add_argument("--runs", type=int, default=4, help="new processes, one after another")
    parser.add_argument("--warm", type=int, default=5, help="warm recalls per process")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        anyio.run(_child, args.data_dir, args.warm)
    else:
        anyio.run(_parent, args.memories, args.data_dir, args.runs, args.warm)
