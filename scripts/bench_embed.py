"""The local embedder (`local/minilm`) alone: cold start, memory, latency and throughput.

    uv run python scripts/bench_embed.py                # the default embedder
    uv run python scripts/bench_embed.py --json out.json
    uv run python scripts/bench_embed.py --spin-us 0  # idle threads sleep at once (default: spin 200 µs)

Reports, with the vector cache off so every text runs through the model:
- import + load: importing the module and loading the model (tokenizer and weights),
  and the first embedding after it;
- RSS of the process before and after loading (VmRSS, MB);
- one sentence at a time: p50/p95 latency of `embed_sync([sentence])`;
- batches: sentences/s and short names/s for `embed_sync` on 512 texts at once;
- concurrent: 16 coroutines each embedding one text at a time through `embed`, texts/s
  over all of them (the pattern of concurrent writes in the server), for sentences and
  for names; and the same with each call run on the session directly in its own worker
  thread, without the embedder's batching of concurrent calls.
CPU milliseconds per text (process time) are printed next to the rates: on a shared
machine they move less than wall-clock rates.

The texts are generated (a fixed seed): sentences of 8-16 words (~12-22 tokens), names
of 1-3 words (~3-6 tokens). Not a test: numbers go to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from pathlib import Path
from typing import Any

import anyio

WORDS = [
    "the",
    "payment",
    "service",
    "failed",
    "after",
    "deploy",
    "of",
    "version",
    "in",
    "region",
    "because",
    "database",
    "connection",
    "pool",
    "was",
    "exhausted",
    "and",
    "alice",
    "paged",
    "bob",
    "who",
    "rolled",
    "back",
    "cache",
    "worker",
    "queue",
    "latency",
    "spiked",
    "during",
    "migration",
    "api",
    "gateway",
    "timeout",
    "retry",
    "owner",
    "team",
    "incident",
    "review",
    "on",
    "monday",
    "morning",
    "customer",
    "orders",
    "were",
    "delayed",
    "by",
    "minutes",
]
NAME_WORDS = [
    "auth",
    "billing",
    "search",
    "ledger",
    "Alice",
    "Bob",
    "Carol",
    "Dave",
    "payments",
    "gateway",
    "redis",
    "kafka",
    "Postgres",
    "frontend",
    "backend",
    "Acme",
    "Globex",
    "Initech",
    "Berlin",
    "Paris",
    "service",
    "api",
    "worker",
]


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def sentences(n: int, rng: random.Random) -> list[str]:
    return [
        " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 16))) + f" {i}" for i in range(n)
    ]


def names(n: int, rng: random.Random) -> list[str]:
    return [" ".join(rng.choice(NAME_WORDS) for _ in range(rng.randint(1, 3))) for _ in range(n)]


def mean_tokens(texts: list[str]) -> float:
    """Tokens per text as the model sees them ([CLS] and [SEP] included)."""
    from polyg_minilm import model_dir
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    tokenizer.no_padding()
    return statistics.mean(len(e.ids) for e in tokenizer.encode_batch(texts))


def per_second(embed: Any, texts: list[str], repeat: int) -> tuple[float, float]:
    """Texts per second (best of `repeat`), and the process's CPU milliseconds per text."""
    best = 0.0
    cpu = float("inf")
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        embed(texts)
        best = max(best, len(texts) / (time.perf_counter() - start))
        cpu = min(cpu, (time.process_time() - start_cpu) * 1000 / len(texts))
    return best, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--single", type=int, default=200, help="single-sentence calls")
    parser.add_argument("--batch", type=int, default=512, help="texts per batch call")
    parser.add_argument("--repeat", type=int, default=3, help="batch runs (best is kept)")
    parser.add_argument("--threads", type=int, default=None, help="the embedder's threads")
    parser.add_argument(
        "--spin-us", type=int, default=200, help="the embedder's thread spin (µs; 0: sleep at once)"
    )
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    rng = random.Random(7)
    result: dict[str, Any] = {"cpus": os.cpu_count(), "rss_start_mb": rss_mb()}

    start = time.perf_counter()
    from polyg_core.providers.embeddings.local import MiniLMEmbedder

    result["import_s"] = time.perf_counter() - start
    embedder = (
        MiniLMEmbedder(cache_size=0, spin_us=args.spin_us)
        if args.threads is None
        else MiniLMEmbedder(cache_size=0, threads=args.threads, spin_us=args.spin_us)
    )
    start = time.perf_counter()
    embedder.embed_sync(["warm up"])
    result["load_and_first_embed_s"] = time.perf_counter() - start
    result["rss_loaded_mb"] = rss_mb()

    single = sentences(args.single, rng)
    times: list[float] = []
    for text in single:
        start = time.perf_counter()
        embedder.embed_sync([text])
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    result["single_p50_ms"] = statistics.median(times)
    result["single_p95_ms"] = times[int(0.95 * (len(times) - 1))]
    name = names(args.single, rng)
    times = []
    for text in name:
        start = time.perf_counter()
        embedder.embed_sync([text])
        times.append((time.perf_counter() - start) * 1000)
    result["single_name_p50_ms"] = statistics.median(times)

    rate, cpu = per_second(embedder.embed_sync, sentences(args.batch, rng), args.repeat)
    result["batch_sentences_per_s"], result["batch_sentence_cpu_ms"] = rate, cpu
    result["mean_tokens_sentence"] = mean_tokens(sentences(args.batch, random.Random(7)))
    result["mean_tokens_name"] = mean_tokens(names(args.batch, random.Random(7)))
    rate, cpu = per_second(embedder.embed_sync, names(args.batch, rng), args.repeat)
    result["batch_names_per_s"], result["batch_name_cpu_ms"] = rate, cpu

    # The shared session, to run it without the embedder's batching.
    model = embedder._model()  # pyright: ignore[reportPrivateUsage]

    async def concurrent(texts: list[str], batched: bool) -> tuple[float, float]:
        chunks = [texts[i::16] for i in range(16)]

        async def client(chunk: list[str]) -> None:
            for text in chunk:
                if batched:
                    await embedder.embed([text])
                else:
                    await anyio.to_thread.run_sync(model._forward, [text], 32)  # pyright: ignore[reportPrivateUsage]

        start, start_cpu = time.perf_counter(), time.process_time()
        async with anyio.create_task_group() as tg:
            for chunk in chunks:
                tg.start_soon(client, chunk)
        wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
        return len(texts) / wall, cpu * 1000 / len(texts)

    for kind, texts in (("sentences", sentences(256, rng)), ("names", names(512, rng))):
        for batched in (True, False):
            rate, cpu = anyio.run(concurrent, texts, batched)
            label = f"concurrent_16_{kind}" + ("" if batched else "_unbatched")
            result[f"{label}_per_s"], result[f"{label}_cpu_ms"] = rate, cpu
    result["rss_end_mb"] = rss_mb()
    result["load_average"] = os.getloadavg()

    print("| measure | value |")
    print("|---|---|")
    for key, value in result.items():
        shown = (
            f"{value:.3f}"
            if isinstance(value, float)
            else ", ".join(f"{v:.2f}" for v in value)
            if isinstance(value, tuple)
            else str(value)
        )
        print(f"| {key} | {shown} |")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
