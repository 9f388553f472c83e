"""Latency at scale: generated namespaces of N entities, then timed reads and writes.

For each size the namespace is generated (`polyg_bench.generate`), then each
operation runs `iterations` times on random targets: entity lookup by name, a
one-day timeline window, causal upstream chain depth 3, semantic k-NN k=10 over
every embedded label from a given vector, BFS depth 2, full `recall` and
`remember` on the rule-based path (no LLM; the question/content is embedded by the
real embedder). Storage is FalkorDB's MEMORY USAGE of the graph key plus the
server's and this process's RSS.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import redis.asyncio as aredis
from polyg_core.memory import Memory

from polyg_bench.generate import DAY_MS, START_MS, WORDS, YEAR_MS, Generated, generate
from polyg_bench.probe import graph_memory_mb, used_memory
from polyg_bench.stats import Timing, rss_bytes, timed

logger = logging.getLogger(__name__)

OPERATIONS = (
    "entity lookup",
    "timeline (1-day window)",
    "causal chain depth 3",
    "semantic k-NN k=10",
    "BFS depth 2",
    "recall (no LLM)",
    "remember (no LLM)",
)


@dataclass
class ScaleResult:
    """One size's numbers."""

    entities: int
    nodes: int
    edges: int
    load_seconds: float
    graph_mb: float | None
    used_memory_delta: int | None
    server_rss: int | None
    process_rss: int | None
    timings: list[Timing] = field(default_factory=lambda: [])
    usage: dict[str, float] = field(default_factory=lambda: {})

    @property
    def ingest_rate(self) -> float:
        """Nodes plus edges written per second by the bulk generator."""
        return (self.nodes + self.edges) / self.load_seconds if self.load_seconds else 0.0

    def row(self) -> dict[str, Any]:
        return {
            "entities": self.entities,
            "nodes": self.nodes,
            "edges": self.edges,
            "load_seconds": round(self.load_seconds, 2),
            "ingest_per_s": round(self.ingest_rate),
            "graph_mb": self.graph_mb,
            "used_memory_delta": self.used_memory_delta,
            "server_rss": self.server_rss,
            "process_rss": self.process_rss,
            "timings": [t.row() for t in self.timings],
            "usage": self.usage,
        }


def when(ms: int) -> datetime:
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)


# The recall questions of the scale benchmark, `{}` standing for an entity name.
QUESTION_FORMS: tuple[str, ...] = ("What happened to {}?", "Why did {} fail?", "Who owns {}?")


async def measure(
    memory: Memory,
    gen: Generated,
    *,
    iterations: int = 100,
    recall_iterations: int = 30,
    seed: int = 11,
) -> list[Timing]:
    """Time every operation of OPERATIONS on a generated namespace."""
    ns = gen.namespace
    rng = random.Random(seed)
    vectors = np.random.default_rng(seed).standard_normal((64, memory.embedder.dimension))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    vector_list: list[list[float]] = vectors.tolist()

    async def lookup(_: int) -> None:
        await memory.entities.get(ns, rng.choice(gen.entity_names))

    async def timeline(_: int) -> None:
        start = START_MS + rng.randrange(YEAR_MS - DAY_MS)
        await memory.temporal.timeline(ns, when(start), when(start + DAY_MS), limit=100)

    async def chain(_: int) -> None:
        await memory.causal.upstream(ns, rng.choice(gen.causal_uuids), depth=3)

    async def knn(_: int) -> None:
        await memory.semantic.search(ns, rng.choice(vector_list), k=10)

    async def bfs(_: int) -> None:
        await memory.entities.bfs(ns, [rng.choice(gen.entity_uuids)], depth=2)

    ref = when(START_MS + YEAR_MS)

    async def recall(_: int) -> None:
        name = rng.choice(gen.entity_names)
        question = rng.choice(QUESTION_FORMS).format(name)
        await memory.recall(question, graph=ns, reference_time=ref)

    async def remember(i: int) -> None:
        a, b = rng.choice(gen.entity_names), rng.choice(gen.entity_names)
        text = (
            f"On day {i} the {a} team deployed {b}; the {rng.choice(WORDS)} latency "
            f"spike caused an outage of {a}. ({rng.random():.6f})"
        )
        await memory.remember(text, graph=ns, reference_time=ref)

    plan = [
        ("entity lookup", lookup, iterations),
        ("timeline (1-day window)", timeline, iterations),
        ("causal chain depth 3", chain, iterations),
        ("semantic k-NN k=10", knn, iterations),
        ("BFS depth 2", bfs, iterations),
        ("recall (no LLM)", recall, recall_iterations),
        ("remember (no LLM)", remember, recall_iterations),
    ]
    out: list[Timing] = []
    for name, fn, n in plan:
        out.append(await timed(name, fn, n, warmup=min(5, n)))
        logger.info("%s: p50 %.2f ms", name, out[-1].p50)
    return out


async def run_size(
    memory: Memory,
    entities: int,
    *,
    seed: int = 7,
    iterations: int = 100,
    recall_iterations: int = 30,
    server_pid: int | None = None,
    probe: aredis.Redis | None = None,
    keep: bool = False,
) -> ScaleResult:
    """Generate a namespace of `entities` entities, measure it, and (unless keep) delete it.

    Args:
        memory: the Memory whose store and embedder are used (no LLM is used even if set).
        entities: the size.
        seed: the generator's seed.
        iterations: timed calls per read operation.
        recall_iterations: timed calls of recall and of remember.
        server_pid: FalkorDB's pid, for its RSS.
        probe: a plain client of the same FalkorDB, for GRAPH.MEMORY USAGE and INFO.
        keep: keep the namespace afterwards.
    """
    ns = f"bench_scale_{entities}"
    await memory.store.delete_graph(ns)
    before = await used_memory(probe) if probe is not None else None
    gen = await generate(memory.store, ns, entities, seed=seed, dimension=memory.embedder.dimension)
    try:
        graph_mb = await graph_memory_mb(probe, ns) if probe is not None else None
        delta = (await used_memory(probe)) - before if probe is not None and before else None
        timings = await measure(
            memory, gen, iterations=iterations, recall_iterations=recall_iterations
        )
        return ScaleResult(
            entities=entities,
            nodes=gen.nodes,
            edges=gen.edges,
            load_seconds=gen.seconds,
            graph_mb=graph_mb,
            used_memory_delta=delta,
            server_rss=rss_bytes(server_pid) if server_pid else None,
            process_rss=rss_bytes(),
            timings=timings,
        )
    finally:
        if not keep:
            await memory.store.delete_graph(ns)
