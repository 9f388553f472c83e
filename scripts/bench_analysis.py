"""Timings for polyg's graph analysis (polyg_core.algorithms).

Two parts:

* ``libraries``: the same algorithm in rustworkx, networkx and scipy.sparse on
  one random directed graph (default 100,000 edges), the numbers behind the
  choice of backend in ``polyg_core/algorithms/operations.py``.
* ``functions``: polyg's own functions on ``GraphData`` at 1,000 / 10,000 /
  100,000 edges (conversion from GraphData included).

Usage::

    uv run python scripts/bench_analysis.py libraries [--edges 100000]
    uv run python scripts/bench_analysis.py functions [--sizes 1000 10000 100000]

Both print a table of the best of ``--repeat`` runs, in milliseconds.
"""

from __future__ import annotations

import argparse
import itertools
import random
import time
from collections.abc import Callable
from typing import Any

import networkx as nx
import numpy as np
import rustworkx as rx
from polyg_core.algorithms import operations as alg
from polyg_core.algorithms.model import EdgeData, GraphData, NodeData
from scipy import sparse
from scipy.sparse import csgraph

CYCLE_CAP = 100


def random_edges(n_edges: int, seed: int = 7) -> tuple[int, list[tuple[int, int]]]:
    """A random directed graph with `n_edges` distinct edges over `n_edges // 5` nodes."""
    rng = random.Random(seed)
    n_nodes = max(10, n_edges // 5)
    edges: set[tuple[int, int]] = set()
    while len(edges) < n_edges:
        u, v = rng.randrange(n_nodes), rng.randrange(n_nodes)
        if u != v:
            edges.add((u, v))
    return n_nodes, sorted(edges)


def best_ms(fn: Callable[[], Any], repeat: int) -> float:
    times: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return min(times)


def bench_libraries(n_edges: int, repeat: int) -> None:
    n, edges = random_edges(n_edges)
    src, dst = 0, n - 1
    rxg = rx.PyDiGraph()
    rxg.add_nodes_from(range(n))
    rxg.add_edges_from_no_data(edges)
    nxg = nx.DiGraph()
    nxg.add_nodes_from(range(n))
    nxg.add_edges_from(edges)
    rows_arr = np.fromiter((u for u, _ in edges), dtype=np.int64, count=len(edges))
    cols_arr = np.fromiter((v for _, v in edges), dtype=np.int64, count=len(edges))
    mat = sparse.csr_matrix((np.ones(len(edges)), (rows_arr, cols_arr)), shape=(n, n))

    def scipy_pagerank() -> np.ndarray:
        out = np.asarray(mat.sum(axis=1)).ravel()
        inv = np.divide(1.0, out, out=np.zeros_like(out), where=out > 0)
        transposed = sparse.csr_matrix(sparse.diags(inv) @ mat).T.tocsr()
        x = np.full(n, 1.0 / n)
        dangling = out == 0
        for _ in range(100):
            prev = x
            x = 0.85 * (transposed @ x + x[dangling].sum() / n) + 0.15 / n
            if np.abs(x - prev).sum() < n * 1e-6:
                break
        return x

    def first_cycles_rx() -> None:
        for _ in itertools.islice(rx.simple_cycles(rxg), CYCLE_CAP):
            pass

    def first_cycles_nx() -> None:
        for _ in itertools.islice(nx.simple_cycles(nxg), CYCLE_CAP):
            pass

    def build_rx() -> None:
        g = rx.PyDiGraph()
        g.add_nodes_from(range(n))
        g.add_edges_from_no_data(edges)

    def build_nx() -> None:
        g = nx.DiGraph()
        g.add_nodes_from(range(n))
        g.add_edges_from(edges)

    cases: list[tuple[str, str, Callable[[], Any]]] = [
        ("build graph", "rustworkx", build_rx),
        ("build graph", "networkx", build_nx),
        (
            "build graph",
            "scipy.sparse",
            lambda: sparse.csr_matrix((np.ones(len(edges)), (rows_arr, cols_arr)), shape=(n, n)),
        ),
        ("pagerank", "rustworkx", lambda: rx.pagerank(rxg)),
        ("pagerank", "networkx", lambda: nx.pagerank(nxg)),
        ("pagerank", "scipy.sparse", scipy_pagerank),
        (
            "shortest path (BFS)",
            "rustworkx",
            lambda: rx.digraph_dijkstra_shortest_paths(rxg, src, dst),
        ),
        ("shortest path (BFS)", "networkx", lambda: nx.shortest_path(nxg, src, dst)),
        (
            "shortest path (BFS)",
            "scipy.sparse",
            lambda: csgraph.shortest_path(
                mat, unweighted=True, indices=src, return_predecessors=True
            ),
        ),
        ("weak components", "rustworkx", lambda: rx.weakly_connected_components(rxg)),
        ("weak components", "networkx", lambda: list(nx.weakly_connected_components(nxg))),
        (
            "weak components",
            "scipy.sparse",
            lambda: csgraph.connected_components(mat, directed=True, connection="weak"),
        ),
        ("strong components", "rustworkx", lambda: rx.strongly_connected_components(rxg)),
        ("strong components", "networkx", lambda: list(nx.strongly_connected_components(nxg))),
        (
            "strong components",
            "scipy.sparse",
            lambda: csgraph.connected_components(mat, directed=True, connection="strong"),
        ),
        (f"first {CYCLE_CAP} cycles", "rustworkx", first_cycles_rx),
        (f"first {CYCLE_CAP} cycles", "networkx", first_cycles_nx),
        ("is DAG", "rustworkx", lambda: rx.is_directed_acyclic_graph(rxg)),
        ("is DAG", "networkx", lambda: nx.is_directed_acyclic_graph(nxg)),
    ]
    print(f"random digraph: {n} nodes, {len(edges)} edges; best of {repeat}, ms")
    print(f"{'algorithm':<22}{'library':<14}{'ms':>10}")
    for name, lib, fn in cases:
        print(f"{name:<22}{lib:<14}{best_ms(fn, repeat):>10.1f}")


def graph_data(n_edges: int) -> GraphData:
    n, edges = random_edges(n_edges)
    return GraphData(
        nodes=[NodeData(f"n{i}", f"node {i}") for i in range(n)],
        edges=[EdgeData(f"n{u}", f"n{v}", "links") for u, v in edges],
    )


def bench_functions(sizes: list[int], repeat: int) -> None:
    print(f"polyg_core.algorithms on GraphData (conversion included); best of {repeat}, ms")
    print(f"{'function':<34}" + "".join(f"{s:>12,}" for s in sizes))
    graphs = {s: graph_data(s) for s in sizes}
    cases: list[tuple[str, Callable[[GraphData], Any]]] = [
        ("pagerank(top_n=10)", lambda g: alg.pagerank(g, top_n=10)),
        (
            "personalized_pagerank(1 seed)",
            lambda g: alg.personalized_pagerank(g, {"n0": 1.0}, top_n=10),
        ),
        ("shortest_path(n0, n_last)", lambda g: alg.shortest_path(g, "n0", g.nodes[-1].id)),
        ("connected_components(weak)", lambda g: alg.connected_components(g)),
        ("connected_components(strong)", lambda g: alg.connected_components(g, strong=True)),
        (
            f"find_cycles(max_cycles={CYCLE_CAP})",
            lambda g: alg.find_cycles(g, max_cycles=CYCLE_CAP),
        ),
        (
            "find_cycles(max_length=4)",
            lambda g: alg.find_cycles(g, max_cycles=CYCLE_CAP, max_length=4),
        ),
        ("graph_info", alg.graph_info),
    ]
    for name, fn in cases:
        cells = "".join(f"{best_ms(lambda g=graphs[s], f=fn: f(g), repeat):>12.1f}" for s in sizes)
        print(f"{name:<34}{cells}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    sub = parser.add_subparsers(dest="part", required=True)
    libs = sub.add_parser("libraries", help="rustworkx vs networkx vs scipy.sparse")
    libs.add_argument("--edges", type=int, default=100_000)
    libs.add_argument("--repeat", type=int, default=3)
    funcs = sub.add_parser("functions", help="polyg_core.algorithms functions")
    funcs.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    funcs.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if args.part == "libraries":
        bench_libraries(args.edges, args.repeat)
    else:
        bench_functions(args.sizes, args.repeat)


if __name__ == "__main__":
    main()
