"""Latency of the PPR view (seed specificity + neighbourhood fetch + personalized PageRank).

Builds a memory graph of `--sizes` nodes in an embedded FalkorDB (a temporary data
dir): one fifth entities with random E_RELATES links (3 per entity), the rest events
each involving 1-2 entities (X_INVOLVES) and chained by T_BEFORE. Then runs the PPR
view from `--seeds` random entities, `--runs` times with fresh seeds, with the view's
default bounds (4 hops, 1,000 nodes, 2 s budget; see --hops, --max-nodes, --budget),
and prints median / p95 latency and the neighbourhood size.

Usage::

    uv run python scripts/bench_ppr.py [--sizes 10000 100000] [--runs 20] [--seeds 2]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

import anyio
from polyg_core.config import StorageSettings
from polyg_core.recall.ppr import PPRConfig, fetch_neighbourhood, ppr_view, seed_specificity
from polyg_core.recall.views import Seeds, ViewContext
from polyg_core.storage.embedded import EmbeddedFalkorDB
from polyg_core.storage.store import FalkorStore
from polyg_shared.intents import Intent

BATCH = 5_000


async def build(store: FalkorStore, ns: str, n_nodes: int, rng: random.Random) -> list[str]:
    await store.ensure_schema(ns)
    n_ent = n_nodes // 5
    n_ev = n_nodes - n_ent
    ents = [f"e{i}" for i in range(n_ent)]
    for i in range(0, n_ent, BATCH):
        await store.query(
            ns,
            "UNWIND $ids AS u CREATE (:E_Entity {uuid: u, name: u, name_key: u})",
            {"ids": ents[i : i + BATCH]},
        )
    rels = [(rng.randrange(n_ent), rng.randrange(n_ent)) for _ in range(n_ent * 3)]
    for i in range(0, len(rels), BATCH):
        await store.query(
            ns,
            "UNWIND $pairs AS p MATCH (a:E_Entity {uuid: p[0]}), (b:E_Entity {uuid: p[1]}) "
            "CREATE (a)-[:E_RELATES {relationship_type: 'related'}]->(b)",
            {"pairs": [[f"e{a}", f"e{b}"] for a, b in rels[i : i + BATCH] if a != b]},
        )
    for i in range(0, n_ev, BATCH):
        rows = [
            [f"v{j}", [f"e{rng.randrange(n_ent)}" for _ in range(rng.randint(1, 2))]]
            for j in range(i, min(i + BATCH, n_ev))
        ]
        await store.query(
            ns,
            "UNWIND $rows AS r CREATE (v:T_Event {uuid: r[0], description: r[0], occurred_at: 0}) "
            "WITH v, r UNWIND r[1] AS eu MATCH (e:E_Entity {uuid: eu}) CREATE (v)-[:X_INVOLVES]->(e)",
            {"rows": rows},
        )
        await store.query(
            ns,
            "UNWIND range($lo, $hi - 2) AS j MATCH (a:T_Event {uuid: 'v' + toString(j)}), "
            "(b:T_Event {uuid: 'v' + toString(j + 1)}) CREATE (a)-[:T_BEFORE]->(b)",
            {"lo": i, "hi": min(i + BATCH, n_ev)},
        )
    return ents


async def bench(
    store: FalkorStore, n_nodes: int, runs: int, n_seeds: int, config: PPRConfig
) -> None:
    ns = f"bench_ppr_{n_nodes}"
    await store.delete_graph(ns)
    rng = random.Random(11)
    t0 = time.perf_counter()
    ents = await build(store, ns, n_nodes, rng)
    built = time.perf_counter() - t0
    totals: list[float] = []
    fetched: list[int] = []
    for _ in range(runs):
        seeds = Seeds(entities={u: 1.0 for u in rng.sample(ents, n_seeds)})
        ctx = ViewContext(store, ns, Intent(multi_hop=True), seeds)
        start = time.perf_counter()
        view = await ppr_view(ctx, config)
        totals.append((time.perf_counter() - start) * 1000)
        assert view.status == "ok", view.error
        weights = await seed_specificity(store, ns, {"E_Entity": seeds.entities})
        hood = await fetch_neighbourhood(
            store,
            ns,
            weights,
            hops=config.hops,
            max_nodes=config.max_nodes,
            max_edges_per_hop=config.max_edges_per_hop,
            deadline=time.monotonic() + config.time_budget_s,
        )
        fetched.append(len(hood.ids))
    totals.sort()
    p95 = totals[min(len(totals) - 1, int(0.95 * len(totals)))]
    print(
        f"{n_nodes:>8,} nodes | built in {built:5.1f} s | PPR view median {statistics.median(totals):7.1f} ms"
        f" | p95 {p95:7.1f} ms | neighbourhood median {int(statistics.median(fetched)):,} nodes"
    )
    await store.delete_graph(ns)


async def main(sizes: list[int], runs: int, n_seeds: int, config: PPRConfig) -> None:
    data = Path(tempfile.mkdtemp(prefix="polyg-bench-ppr-"))
    server = EmbeddedFalkorDB(data)
    server.ensure_running()
    try:
        store = FalkorStore(StorageSettings(data_dir=data, query_timeout_ms=120_000))
        await store.connect()
        try:
            for n in sizes:
                await bench(store, n, runs, n_seeds, config)
        finally:
            await store.close()
    finally:
        server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Latency of the PPR view.")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--max-nodes", type=int, default=PPRConfig.max_nodes)
    parser.add_argument("--hops", type=int, default=PPRConfig.hops)
    parser.add_argument("--budget", type=float, default=PPRConfig.time_budget_s)
    args = parser.parse_args()
    cfg = PPRConfig(hops=args.hops, max_nodes=args.max_nodes, time_budget_s=args.budget)
    print(f"PPR view: {cfg.hops} hops, max {cfg.max_nodes:,} nodes, budget {cfg.time_budget_s:g} s")
    anyio.run(main, args.sizes, args.runs, args.seeds, cfg)
