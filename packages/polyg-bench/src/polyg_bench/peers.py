"""Peers side by side: one workload through the MCP client against polyg and peer servers.

Every server runs as its own stdio process: polyg (`python -m polyg_server.main`),
`@modelcontextprotocol/server-memory` through npx, `mcp-graph-engine` and
`memorygraphmcp` through uvx (their own environments, never this project's). Both
uvx peers import APIs that MCP SDK 2 removed, so they run with `mcp<2` pinned in
their environment; memorygraphmcp also imports httpx without declaring it.

Workload for N entities (names from the generator, one relation per entity):
create each entity (one call each), create each relation (one call each), then
look up by name, search by name and list neighbours on random entities, and for the
graph engines shortest path, PageRank and connected components. Each operation's
median is reported with its ratio to polyg's median in the same run (memory peers
against polyg's memory tools, mcp-graph-engine against polyg's graph engine tools).
"""

from __future__ import annotations

import logging
import random
import re
import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio

from polyg_bench.generate import entity_name
from polyg_bench.stats import Timing

try:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "the peers benchmark needs the MCP client: pip install polyg-server (or uv sync)"
    ) from exc

logger = logging.getLogger(__name__)

MEMORY_OPS = ("create entity", "create relation", "lookup by name", "search", "neighbours")
ENGINE_OPS = (
    "create entity",
    "create relation",
    "neighbours",
    "shortest path",
    "pagerank",
    "components",
)
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
ENGINE_GRAPH = "bench_peers_engine"

Call = tuple[str, dict[str, Any]]


@dataclass
class Workload:
    """Names and relations shared by every server."""

    names: list[str]
    relations: list[tuple[int, int]]
    reads: int
    analyses: int
    seed: int

    @classmethod
    def make(cls, entities: int, *, reads: int = 100, analyses: int = 5, seed: int = 7) -> Workload:
        rng = random.Random(seed)
        names = [entity_name(rng, i) for i in range(entities)]
        rels: list[tuple[int, int]] = []
        for i in range(entities):
            j = rng.randrange(entities - 1)
            rels.append((i, j if j < i else j + 1))
        return cls(names, rels, reads, analyses, seed)


@dataclass
class Driver:
    """How one server does each operation: op name -> (i -> tool call), None if it cannot."""

    name: str
    kind: str  # "memory" or "engine"
    ops: dict[str, Callable[[int], Call] | None]
    ids: dict[int, str] = field(default_factory=lambda: {})  # entity index -> server id
    after_create: Callable[[int, str], None] | None = None


def polyg_memory_driver(w: Workload) -> Driver:
    n = w.names
    return Driver(
        "polyg",
        "memory",
        {
            "create entity": lambda i: ("add_entity", {"name": n[i], "entity_type": "service"}),
            "create relation": lambda i: (
                "link_entities",
                {
                    "source": n[w.relations[i][0]],
                    "target": n[w.relations[i][1]],
                    "relationship_type": "calls",
                },
            ),
            "lookup by name": lambda i: ("get_entity", {"entity": n[i], "limit": 20}),
            "search": lambda i: ("semantic_search", {"query": n[i], "k": 10}),
            "neighbours": lambda i: ("entity_lookup", {"entities": [n[i]], "depth": 1}),
        },
    )


def polyg_engine_driver(w: Workload) -> Driver:
    n, g = w.names, ENGINE_GRAPH
    return Driver(
        "polyg",
        "engine",
        {
            "create entity": lambda i: ("add_node", {"graph": g, "label": n[i], "type": "service"}),
            "create relation": lambda i: (
                "add_edge",
                {
                    "graph": g,
                    "source": n[w.relations[i][0]],
                    "target": n[w.relations[i][1]],
                    "relation": "calls",
                },
            ),
            "neighbours": lambda i: ("get_neighbors", {"graph": g, "node": n[i]}),
            "shortest path": lambda i: (
                "shortest_path",
                {"graph": g, "source": n[i], "target": n[-1 - i]},
            ),
            "pagerank": lambda i: ("pagerank", {"graph": g, "top_n": 10}),
            "components": lambda i: ("connected_components", {"graph": g}),
        },
    )


def server_memory_driver(w: Workload) -> Driver:
    n = w.names
    return Driver(
        "server-memory",
        "memory",
        {
            "create entity": lambda i: (
                "create_entities",
                {"entities": [{"name": n[i], "entityType": "service", "observations": []}]},
            ),
            "create relation": lambda i: (
                "create_relations",
                {
                    "relations": [
                        {
                            "from": n[w.relations[i][0]],
                            "to": n[w.relations[i][1]],
                            "relationType": "calls",
                        }
                    ]
                },
            ),
            "lookup by name": lambda i: ("open_nodes", {"names": [n[i]]}),
            "search": lambda i: ("search_nodes", {"query": n[i]}),
            "neighbours": None,
        },
    )


def memorygraph_driver(w: Workload) -> Driver:
    n = w.names
    d = Driver("memorygraphmcp", "memory", {})

    def remember_id(i: int, text: str) -> None:
        m = _UUID.search(text)
        if m:
            d.ids[i] = m.group(0)

    d.after_create = remember_id
    d.ops = {
        "create entity": lambda i: (
            "store_memory",
            {"type": "general", "title": n[i], "content": f"{n[i]} is a service"},
        ),
        "create relation": lambda i: (
            "create_relationship",
            {
                "from_memory_id": d.ids.get(w.relations[i][0], ""),
                "to_memory_id": d.ids.get(w.relations[i][1], ""),
                "relationship_type": "RELATED_TO",
            },
        ),
        "lookup by name": lambda i: ("get_memory", {"memory_id": d.ids.get(i, "")}),
        "search": lambda i: ("search_memories", {"query": n[i]}),
        "neighbours": lambda i: (
            "get_related_memories",
            {"memory_id": d.ids.get(i, ""), "max_depth": 1},
        ),
    }
    return d


def graph_engine_driver(w: Workload) -> Driver:
    n, g = w.names, "bench"
    return Driver(
        "mcp-graph-engine",
        "engine",
        {
            "create entity": None,  # add_facts creates the nodes it names
            "create relation": lambda i: (
                "add_facts",
                {
                    "graph": g,
                    "facts": [
                        {"from": n[w.relations[i][0]], "to": n[w.relations[i][1]], "rel": "calls"}
                    ],
                },
            ),
            "neighbours": lambda i: (
                "ask_graph",
                {"graph": g, "query": f"what does {n[i]} depend on"},
            ),
            "shortest path": lambda i: (
                "shortest_path",
                {"graph": g, "source": n[i], "target": n[-1 - i]},
            ),
            "pagerank": lambda i: ("pagerank", {"graph": g, "top_n": 10}),
            "components": lambda i: ("connected_components", {"graph": g}),
        },
    )


@dataclass
class PeerRun:
    """One server's timings, or why it could not run."""

    name: str
    kind: str
    timings: dict[str, Timing] = field(default_factory=lambda: {})
    errors: dict[str, int] = field(default_factory=lambda: {})
    first_errors: dict[str, str] = field(default_factory=lambda: {})
    unavailable: str | None = None


def _text(result: Any) -> str:
    parts: list[str] = []
    for c in getattr(result, "content", []) or []:
        t = getattr(c, "text", None)
        if isinstance(t, str):
            parts.append(t)
    return "\n".join(parts)


async def drive(params: StdioServerParameters, drivers: list[Driver], w: Workload) -> list[PeerRun]:
    """Run the workload through one stdio server for each of its drivers."""
    runs = [PeerRun(d.name, d.kind) for d in drivers]
    started = False
    try:
        async with Client(params) as client:
            started = True
            for d, run in zip(drivers, runs, strict=True):
                await _drive_one(client, d, run, w)
    except Exception as exc:
        why = f"{type(exc).__name__}: {exc}"[:300]
        for r in runs:
            if not started:
                r.unavailable = f"did not start: {why}"
            elif not r.timings:
                r.unavailable = f"failed: {why}"
    return runs


async def _drive_one(client: Client, d: Driver, run: PeerRun, w: Workload) -> None:
    rng = random.Random(w.seed)
    ops = MEMORY_OPS if d.kind == "memory" else ENGINE_OPS
    for op in ops:
        make = d.ops.get(op)
        if make is None:
            continue
        if op in ("create entity", "create relation"):
            targets = list(range(len(w.names)))
        elif op in ("pagerank", "components", "shortest path"):
            targets = [rng.randrange(len(w.names)) for _ in range(w.analyses)]
        else:
            targets = [rng.randrange(len(w.names)) for _ in range(w.reads)]
        samples: list[float] = []
        for i in targets:
            tool, args = make(i)
            t0 = time.perf_counter()
            try:
                with anyio.fail_after(120):
                    res = await client.call_tool(tool, args)
                failed, why = bool(res.is_error), _text(res)[:200]
                if not failed and op == "create entity" and d.after_create:
                    d.after_create(i, _text(res))
            except Exception as exc:  # a failed call is counted and reported
                failed, why = True, f"{type(exc).__name__}: {exc}"[:200]
            if failed:
                run.errors[op] = run.errors.get(op, 0) + 1
                run.first_errors.setdefault(op, why)
            else:
                samples.append((time.perf_counter() - t0) * 1000)
        run.timings[op] = Timing(op, samples)
        logger.info("%s %s: %d ok, %d errors", d.name, op, len(samples), run.errors.get(op, 0))


def peer_params(name: str, env: Mapping[str, str], workdir: str) -> StdioServerParameters | str:
    """How to start a peer, or why it cannot start here."""
    if name == "server-memory":
        if shutil.which("npx") is None:
            return (
                "npx is not installed (Node.js is needed for @modelcontextprotocol/server-memory)"
            )
        return StdioServerParameters(
            command="npx",
            args=["-y", "@modelcontextprotocol/server-memory"],
            env={**env, "MEMORY_FILE_PATH": f"{workdir}/server-memory.jsonl"},
        )
    if shutil.which("uvx") is None:
        return "uvx is not installed (uv is needed to run the PyPI peers in their own environments)"
    if name == "mcp-graph-engine":
        return StdioServerParameters(
            command="uvx", args=["--with", "mcp<2", "mcp-graph-engine"], env=dict(env), cwd=workdir
        )
    if name == "memorygraphmcp":
        return StdioServerParameters(
            command="uvx",
            args=["--with", "mcp<2", "--with", "httpx", "--from", "memorygraphmcp", "memorygraph"],
            env=dict(env),
            cwd=workdir,
        )
    return f"unknown peer {name!r}; known: server-memory, mcp-graph-engine, memorygraphmcp"


PEER_DRIVERS: dict[str, Callable[[Workload], Driver]] = {
    "server-memory": server_memory_driver,
    "mcp-graph-engine": graph_engine_driver,
    "memorygraphmcp": memorygraph_driver,
}


def ratios(runs: list[PeerRun]) -> list[dict[str, Any]]:
    """Rows of {server, kind, op, median, ratio to polyg's median of that kind, errors}."""
    base = {(r.kind, op): t.p50 for r in runs if r.name == "polyg" for op, t in r.timings.items()}
    rows: list[dict[str, Any]] = []
    for r in runs:
        if r.unavailable:
            rows.append({"server": r.name, "kind": r.kind, "op": "-", "unavailable": r.unavailable})
            continue
        for op in MEMORY_OPS if r.kind == "memory" else ENGINE_OPS:
            t = r.timings.get(op)
            b = base.get((r.kind, op))
            med = t.p50 if t and t.samples else None
            rows.append(
                {
                    "server": r.name,
                    "kind": r.kind,
                    "op": op,
                    "n": len(t.samples) if t else 0,
                    "median": round(med, 2) if med is not None else None,
                    "ratio": round(med / b, 2) if med is not None and b else None,
                    "errors": r.errors.get(op, 0),
                    "first_error": r.first_errors.get(op),
                }
            )
    return rows
