"""Timings of the entity and semantic graphs on a namespace of 10,000 entities.

Builds a throwaway namespace with ``--entities`` entities (default 10,000, names
embedded in batches of ``--batch``) and about twice as many relations, then
measures, over ``--samples`` random calls each:

* entity lookup by exact name (``EntityGraph.get``),
* entity lookup by a differently spelled name (normalised-key match),
* BFS to depth 2 from one entity (``EntityGraph.bfs``, limit 50),
* k-NN with k=10 over the entity vector index, from a precomputed vector
  (``SemanticGraph.search``), and the same with the query text embedded.

Usage::

    uv run python scripts/bench_graphs.py                  # local MiniLM embeddings
    uv run python scripts/bench_graphs.py --random-vectors  # skip the embedding cost

FalkorDB is the embedded server unless FALKORDB_HOST/FALKORDB_URL is set. The
namespace is deleted at the end unless ``--keep``. Prints median and p95 in ms.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio
import numpy as np
import numpy.typing as npt
from polyg_bench.generate import WORDS
from polyg_core.config import StorageSettings
from polyg_core.graphs.entity import EntityGraph
from polyg_core.graphs.semantic import SemanticGraph
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.resolve import NameResolver
from polyg_core.storage.schema import ENTITY
from polyg_core.storage.store import FalkorStore

TYPES = ("service", "team", "person", "database", "project")


class RandomEmbedder:
    """Unit vectors from a seeded generator: the index work without the model's cost."""

    model_name = "bench/random"
    dimension = 384

    def __init__(self) -> None:
        self._rng = np.random.default_rng(7)

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = self._rng.standard_normal((len(texts), self.dimension)).astype(np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def entity_names(n: int) -> list[str]:
    rng = random.Random(11)
    names: list[str] = []
    for i in range(n):
        names.append(f"{rng.choice(WORDS)} {rng.choice(WORDS)} {i}")
    return names


async def timed(fn: Callable[[], Awaitable[Any]], samples: int) -> list[float]:
    out: list[float] = []
    for _ in range(samples):
        start = time.perf_counter()
        await fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def summary(label: str, times: list[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"{label:<44} median {statistics.median(ordered):8.2f} ms   p95 {p95:8.2f} ms"


async def main(args: argparse.Namespace) -> None:
    embedder: Embedder
    if args.random_vectors:
        embedder = RandomEmbedder()
    else:
        from polyg_core.providers.embeddings.local import MiniLMEmbedder

        embedder = MiniLMEmbedder()
    store = await FalkorStore(StorageSettings()).connect()
    ns = args.namespace
    await store.delete_graph(ns)
    resolver = NameResolver(store, embedder)
    entities = EntityGraph(store, embedder, resolver)
    semantic = SemanticGraph(store, embedder, resolver, entities)
    rng = random.Random(3)
    names = entity_names(args.entities)
    try:
        start = time.perf_counter()
        uuids: list[str] = []
        for i in range(0, len(names), args.batch):
            chunk = names[i : i + args.batch]
            made = await entities.add_many(ns, [(n, rng.choice(TYPES), {"i": 1}) for n in chunk])
            uuids.extend(e.uuid for e, _ in made)
        built_entities = time.perf_counter() - start
        start = time.perf_counter()
        relations = 0
        pairs: list[tuple[str, str, str, dict[str, Any] | None]] = []
        for _ in range(args.entities * 2):
            a, b = rng.sample(uuids, 2)
            pairs.append((a, b, rng.choice(("calls", "owns", "depends on", "uses")), None))
        for i in range(0, len(pairs), 2000):
            relations += await entities.link_many(ns, pairs[i : i + 2000])
        built_relations = time.perf_counter() - start
        count = (await store.query(ns, f"MATCH (n:{ENTITY}) RETURN count(n)")).scalar()
        print(
            f"namespace {ns}: {count} entities in {built_entities:.1f} s "
            f"({embedder.model_name}, batches of {args.batch}), "
            f"{relations} relations in {built_relations:.1f} s"
        )

        async def lookup() -> None:
            await entities.get(ns, rng.choice(names))

        async def lookup_respelled() -> None:
            await entities.get(ns, rng.choice(names).upper().replace(" ", "-"))

        async def bfs() -> None:
            await entities.bfs(ns, [rng.choice(uuids)], depth=2)

        query_vectors = (
            await embedder.embed([f"{rng.choice(WORDS)} service" for _ in range(16)])
        ).tolist()

        async def knn_vector() -> None:
            await semantic.search(ns, rng.choice(query_vectors), k=10, labels=[ENTITY])

        async def knn_text() -> None:
            await semantic.search(
                ns, f"{rng.choice(WORDS)} {rng.choice(WORDS)}", k=10, labels=[ENTITY]
            )

        sizes = [
            len((await entities.bfs(ns, [rng.choice(uuids)], depth=2)).nodes) for _ in range(20)
        ]
        for label, fn in (
            ("entity lookup by exact name", lookup),
            ("entity lookup by respelled name (normalised)", lookup_respelled),
            (f"BFS depth 2, limit 50 (mean {statistics.mean(sizes):.0f} nodes)", bfs),
            ("k-NN k=10 over entities, vector given", knn_vector),
            ("k-NN k=10 over entities, text embedded", knn_text),
        ):
            await fn()  # warm-up
            print(summary(label, await timed(fn, args.samples)))
    finally:
        if not args.keep:
            await store.delete_graph(ns)
        await store.close()


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--entities", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=500, help="entities per write/embed batch")
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--namespace", default="bench_graphs")
    parser.add_argument("--random-vectors", action="store_true", help="skip the embedding model")
    parser.add_argument("--keep", action="store_true", help="keep the namespace afterwards")
    return parser.parse_args()


if __name__ == "__main__":
    anyio.run(main, parse())
