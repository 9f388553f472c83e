"""Timings of the temporal and causal graphs on a namespace with 10,000 entities.

The namespace is bulk-loaded with UNWIND batches in the storage layout that
`TemporalGraph` and `CausalGraph` write (per-entity `T_BEFORE` chains, `X_INVOLVES`,
`X_AFFECTS`, epoch-ms timestamps, embeddings). Embeddings are random unit vectors:
the measured reads never compare them, and embedding ~50,000 texts would
measure the embedder, not the graph. The reads go through the public API:

* ``timeline``: `TemporalGraph.timeline` over a random one-day window of a year;
* ``timeline (entity)``: the same with an entity filter (name resolved);
* ``events_near``: events of 3 seed entities, 2 `T_BEFORE` steps, limit 50;
* ``causal upstream/downstream d=3``: `CausalGraph.upstream/downstream(uuid, depth=3)`.

``--writes N`` also times N `add_event` and N `add_link` calls with the real local
embedder (their time is mostly the embedding).

Usage::

    uv run python scripts/bench_temporal_causal.py [--entities 10000] [--iterations 200]
        [--writes 20] [--data-dir DIR]

Prints median / p95 / p99 / mean in milliseconds. Uses its own embedded FalkorDB
in a temporary directory unless --data-dir is given.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

import anyio
import numpy as np
from polyg_core.config import StorageSettings
from polyg_core.graphs.causal import CausalGraph
from polyg_core.graphs.temporal import TemporalGraph
from polyg_core.providers.embeddings.local import MiniLMEmbedder
from polyg_core.resolve import NameResolver
from polyg_core.storage.store import FalkorStore

NS = "bench_temporal_causal"
START = datetime(2025, 1, 1, tzinfo=UTC)
YEAR_MS = 365 * 24 * 3600 * 1000
DAY_MS = 24 * 3600 * 1000
BATCH = 1000


def _ms(dt: datetime) -> int:
    return int((dt - datetime(1970, 1, 1, tzinfo=UTC)) / timedelta(milliseconds=1))


def _vectors(rng: np.random.Generator, n: int, dim: int) -> list[list[float]]:
    v = rng.standard_normal((n, dim)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return v.tolist()


async def _batched(store: FalkorStore, cypher: str, rows: list[dict[str, Any]]) -> None:
    for i in range(0, len(rows), BATCH):
        await store.query(NS, cypher, {"rows": rows[i : i + BATCH]}, timeout_ms=600_000)


async def load(store: FalkorStore, n_entities: int, dim: int, seed: int = 7) -> dict[str, Any]:
    """Bulk-load entities, events (3 per entity), facts (1 per entity) and a causal graph."""
    rng = np.random.default_rng(seed)
    pyr = random.Random(seed)
    base = _ms(START)
    now = _ms(datetime.now(UTC))
    entities: list[dict[str, Any]] = [
        {"uuid": uuid.uuid4().hex, "name": f"entity-{i}", "key": f"entity{i}"}
        for i in range(n_entities)
    ]
    for row, vec in zip(entities, _vectors(rng, n_entities, dim), strict=True):
        row["vec"] = vec
    await _batched(
        store,
        "UNWIND $rows AS r CREATE (:E_Entity {uuid: r.uuid, name: r.name, name_key: r.key, "
        "entity_type: 'entity', properties: '{}', created_at: $now, updated_at: $now, "
        "embedding: vecf32(r.vec)})".replace("$now", str(now)),
        entities,
    )
    # Events: 3 per entity on average, each involving 1 or 2 entities, spread over a year.
    n_events = 3 * n_entities
    events: list[dict[str, Any]] = []
    involves: list[dict[str, str]] = []
    timeline: dict[str, list[tuple[int, str]]] = {}
    for i, vec in enumerate(_vectors(rng, n_events, dim)):
        t = base + pyr.randrange(YEAR_MS)
        eid = uuid.uuid4().hex
        events.append({"uuid": eid, "desc": f"event {i}", "t": t, "vec": vec})
        for x in {pyr.randrange(n_entities) for _ in range(pyr.choice((1, 2)))}:
            involves.append({"e": eid, "x": entities[x]["uuid"]})
            timeline.setdefault(entities[x]["uuid"], []).append((t, eid))
    await _batched(
        store,
        "UNWIND $rows AS r CREATE (:T_Event {uuid: r.uuid, description: r.desc, "
        "occurred_at: r.t, recorded_at: r.t, embedding: vecf32(r.vec)})",
        events,
    )
    await _batched(
        store,
        "UNWIND $rows AS r MATCH (e:T_Event {uuid: r.e}), (x:E_Entity {uuid: r.x}) "
        "CREATE (e)-[:X_INVOLVES]->(x)",
        involves,
    )
    before: list[dict[str, str]] = []
    for x, items in timeline.items():
        items.sort()
        before += [{"a": a, "b": b, "x": x} for (_, a), (_, b) in pairwise(items)]
    await _batched(
        store,
        "UNWIND $rows AS r MATCH (a:T_Event {uuid: r.a}), (b:T_Event {uuid: r.b}) "
        "CREATE (a)-[:T_BEFORE {entity: r.x}]->(b)",
        before,
    )
    facts = [
        {
            "uuid": uuid.uuid4().hex,
            "x": e["uuid"],
            "s": e["name"],
            "sk": e["key"],
            "o": f"team-{i % 50}",
            "vf": base + pyr.randrange(YEAR_MS),
            "vec": vec,
        }
        for i, (e, vec) in enumerate(zip(entities, _vectors(rng, n_entities, dim), strict=True))
    ]
    await _batched(
        store,
        "UNWIND $rows AS r MATCH (x:E_Entity {uuid: r.x}) "
        "CREATE (f:T_Fact {uuid: r.uuid, subject: r.s, subject_key: r.sk, predicate: 'owned_by', "
        "predicate_key: 'ownedby', object: r.o, object_key: r.o, valid_from: r.vf, "
        "recorded_at: r.vf, embedding: vecf32(r.vec)})-[:X_INVOLVES]->(x)",
        facts,
    )
    # Causal: one node per 2 entities, 2 links per node, mostly forward (a DAG) with 2%
    # back-links so cycles exist; each node affects one entity.
    n_causal = max(2, n_entities // 2)
    causal = [
        {"uuid": uuid.uuid4().hex, "desc": f"condition {i}", "key": f"condition {i}", "vec": v}
        for i, v in enumerate(_vectors(rng, n_causal, dim))
    ]
    await _batched(
        store,
        "UNWIND $rows AS r CREATE (:C_Node {uuid: r.uuid, description: r.desc, key: r.key, "
        f"node_type: 'event', created_at: {now}, embedding: vecf32(r.vec)}})",
        causal,
    )
    links: set[tuple[int, int]] = set()
    while len(links) < 2 * n_causal:
        a = pyr.randrange(n_causal)
        b = (
            pyr.randrange(n_causal)
            if pyr.random() < 0.02
            else min(n_causal - 1, a + 1 + int(pyr.expovariate(1 / 20)))
        )
        if a != b:
            links.add((a, b))
    await _batched(
        store,
        "UNWIND $rows AS r MATCH (a:C_Node {uuid: r.a}), (b:C_Node {uuid: r.b}) "
        f"CREATE (a)-[:C_CAUSES {{confidence: r.c, created_at: {now}}}]->(b)",
        [
            {"a": causal[a]["uuid"], "b": causal[b]["uuid"], "c": round(pyr.uniform(0.3, 1), 2)}
            for a, b in sorted(links)
        ],
    )
    await _batched(
        store,
        "UNWIND $rows AS r MATCH (c:C_Node {uuid: r.c}), (x:E_Entity {uuid: r.x}) "
        "CREATE (c)-[:X_AFFECTS]->(x)",
        [{"c": c["uuid"], "x": entities[pyr.randrange(n_entities)]["uuid"]} for c in causal],
    )
    return {
        "entities": entities,
        "causal": causal,
        "counts": {
            "entities": n_entities,
            "events": n_events,
            "x_involves": len(involves) + len(facts),
            "t_before": len(before),
            "facts": len(facts),
            "causal_nodes": n_causal,
            "c_causes": len(links),
        },
    }


async def timed(
    name: str, fn: Callable[[int], Awaitable[Any]], iterations: int, warmup: int = 10
) -> tuple[str, list[float]]:
    for i in range(warmup):
        await fn(i)
    samples: list[float] = []
    for i in range(iterations):
        t0 = time.perf_counter()
        await fn(i)
        samples.append((time.perf_counter() - t0) * 1000)
    return name, samples


def report(name: str, samples: list[float]) -> str:
    s = sorted(samples)
    p = lambda q: s[min(len(s) - 1, int(q * len(s)))]  # noqa: E731
    return (
        f"{name:<32} n={len(s):>4}  median {statistics.median(s):7.2f}  p95 {p(0.95):7.2f}  "
        f"p99 {p(0.99):7.2f}  mean {statistics.fmean(s):7.2f}"
    )


async def main(args: argparse.Namespace) -> None:
    data_dir = (
        Path(args.data_dir) if args.data_dir else Path(tempfile.mkdtemp(prefix="polyg-bench-"))
    )
    store = FalkorStore(StorageSettings(data_dir=data_dir, query_timeout_ms=600_000))
    await store.connect()
    embedder = MiniLMEmbedder()
    try:
        await store.delete_graph(NS)
        await store.ensure_schema(NS)
        await store.ensure_vectors(NS, embedder.model_name, embedder.dimension)
        t0 = time.perf_counter()
        data = await load(store, args.entities, embedder.dimension)
        print(f"loaded in {time.perf_counter() - t0:.1f}s: {data['counts']}")
        resolver = NameResolver(store, embedder)
        temporal = TemporalGraph(store, embedder, resolver)
        causal = CausalGraph(store, embedder, resolver)
        rng = random.Random(11)
        entities, nodes = data["entities"], data["causal"]

        def window(_: int) -> tuple[datetime, datetime]:
            start = START + timedelta(milliseconds=rng.randrange(YEAR_MS - DAY_MS))
            return start, start + timedelta(days=1)

        async def timeline(i: int) -> None:
            start, end = window(i)
            await temporal.timeline(NS, start, end, limit=100)

        async def timeline_entity(_: int) -> None:
            await temporal.timeline(NS, entity=rng.choice(entities)["name"], limit=100)

        async def near(_: int) -> None:
            seeds = [rng.choice(entities)["uuid"] for _ in range(3)]
            await temporal.events_near(NS, seeds, depth=2, limit=50)

        async def upstream(_: int) -> None:
            await causal.upstream(NS, rng.choice(nodes)["uuid"], depth=3)

        async def downstream(_: int) -> None:
            await causal.downstream(NS, rng.choice(nodes)["uuid"], depth=3)

        results = [
            await timed("timeline (1-day window)", timeline, args.iterations),
            await timed("timeline (entity)", timeline_entity, args.iterations),
            await timed("events_near (3 seeds, depth 2)", near, args.iterations),
            await timed("causal upstream d=3", upstream, args.iterations),
            await timed("causal downstream d=3", downstream, args.iterations),
        ]
        if args.writes:

            async def add_event(i: int) -> None:
                await temporal.add_event(
                    NS,
                    f"benchmark event {i} {uuid.uuid4().hex[:6]}",
                    START + timedelta(hours=i),
                    entities=[rng.choice(entities)["name"]],
                )

            async def add_link(i: int) -> None:
                await causal.add_link(
                    NS, f"bench cause {i} {uuid.uuid4().hex[:6]}", rng.choice(nodes)["uuid"], 0.5
                )

            results.append(await timed("add_event (real embedder)", add_event, args.writes, 2))
            results.append(await timed("add_link (real embedder)", add_link, args.writes, 2))
        for name, samples in results:
            print(report(name, samples))
    finally:
        if not args.keep:
            await store.delete_graph(NS)
        await store.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--entities", type=int, default=10_000)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--writes", type=int, default=20)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--keep", action="store_true", help="keep the namespace afterwards")
    anyio.run(main, parser.parse_args())
