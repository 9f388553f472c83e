"""Benchmark of the graph engine on FalkorDB: CSV import throughput and analysis timings.

Run: uv run python scripts/bench_engine.py [--sizes 1000,10000,100000] [--data-dir DIR]

For each size a random directed graph (edges = 5 x nodes, a few relations) is
imported from CSV into a scratch graph (no embeddings, as for any import above
the embedding limit), then each analysis runs through the engine: fetch from
FalkorDB + algorithm, or FalkorDB's own procedure where the engine uses one.
FalkorDB's algo.pageRank is timed too, for comparison (its scores differ).
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from polyg_core.config import StorageSettings
from polyg_core.scratch import GraphEngine
from polyg_core.scratch.fetch import fetch_graph
from polyg_core.storage.store import FalkorStore


def make_csv(edges: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    nodes = max(edges // 5, 2)
    lines = ["source,target,relation"]
    relations = ("calls", "uses", "imports", "depends_on")
    seen: set[tuple[int, int, str]] = set()
    while len(lines) - 1 < edges:
        a, b = rng.randrange(nodes), rng.randrange(nodes)
        rel = relations[rng.randrange(len(relations))]
        if a == b or (a, b, rel) in seen:
            continue
        seen.add((a, b, rel))
        lines.append(f"n{a},n{b},{rel}")
    return "\n".join(lines) + "\n"


async def timed(fn: Callable[[], Awaitable[Any]]) -> tuple[float, Any]:
    start = time.perf_counter()
    out = await fn()
    return time.perf_counter() - start, out


async def bench(sizes: list[int], data_dir: Path) -> None:
    store = FalkorStore(StorageSettings(data_dir=data_dir, query_timeout_ms=600_000))
    await store.connect()
    engine = GraphEngine(store, None)
    py = GraphEngine(store, None)
    py.analysis.use_builtin = False
    print(f"{'edges':>8} {'nodes':>7} {'step':<36} {'seconds':>9}  note")
    try:
        for size in sizes:
            await one_size(store, engine, py, size)
    finally:
        await store.close()


async def one_size(store: FalkorStore, engine: GraphEngine, py: GraphEngine, size: int) -> None:
    ns = f"bench_engine_{size}"
    await store.delete_graph(ns)
    text = make_csv(size)
    dt, out = await timed(lambda: engine.io.import_graph("csv", text, graph=ns))
    n = out.nodes_added
    print(f"{size:>8} {n:>7} {'import csv':<36} {dt:9.3f}  {size / dt:,.0f} edges/s")
    dt, g = await timed(lambda: fetch_graph(store, ns, "scratch"))
    print(f"{size:>8} {n:>7} {'fetch into GraphData':<36} {dt:9.3f}")
    src, dst = "n0", g.nodes[-1].id
    rows: list[tuple[str, Callable[[], Awaitable[Any]], str]] = [
        ("pagerank (fetch+python)", lambda: engine.analysis.pagerank(10, graph=ns), ""),
        (
            "shortest_path (cypher shortestPath)",
            lambda: engine.analysis.shortest_path(src, dst, graph=ns),
            "",
        ),
        (
            "shortest_path (fetch+python)",
            lambda: py.analysis.shortest_path(src, dst, graph=ns),
            "",
        ),
        (
            "connected_components (fetch+py)",
            lambda: engine.analysis.connected_components(graph=ns),
            "",
        ),
        (
            "find_cycles (fetch+python)",
            lambda: engine.analysis.find_cycles(100, graph=ns),
            "",
        ),
        (
            "falkordb algo.pageRank (compare)",
            lambda: store.query(
                ns,
                "CALL algo.pageRank('G_Node', 'G_EDGE') YIELD node, score "
                "RETURN node.name, score ORDER BY score DESC LIMIT 10",
                read_only=True,
            ),
            "",
        ),
    ]
    if size <= 10_000:
        rows.append(
            (
                "betweenness (fetch+rustworkx)",
                lambda: engine.analysis.betweenness(10, graph=ns),
                "",
            )
        )
    for name, fn, _ in rows:
        dt, result = await timed(fn)
        note = ""
        if name.startswith("shortest_path"):
            note = f"length {getattr(result, 'length', None)}"
        elif name.startswith("connected"):
            note = f"{getattr(result, 'count', '?')} components"
        elif name.startswith("find_cycles"):
            note = f"{len(result.cycles)} cycles listed"
        print(f"{size:>8} {n:>7} {name:<36} {dt:9.3f}  {note}")
    await store.delete_graph(ns)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--data-dir", type=Path, default=None)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.data_dir is not None:
        anyio.run(bench, sizes, args.data_dir)
        return
    with tempfile.TemporaryDirectory(prefix="polyg-bench-") as tmp:
        anyio.run(bench, sizes, Path(tmp))


if __name__ == "__main__":
    main()
