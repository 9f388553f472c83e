"""Import throughput: N entities + N relations + N events through `polyg import`'s writer.

    uv run python scripts/bench_import.py --n 10000            # with the configured embedder
    uv run python scripts/bench_import.py --n 10000 --no-embed # random vectors, no model: database cost only
    uv run python scripts/bench_import.py --n 10000 --extra 2000  # and 2,000 facts, causal links, concepts, memories, solutions

Writes a JSONL file of N entities, N relations (a ring plus random chords) and N
events (each involving two entities), imports it into a fresh namespace and
reports records/s per kind and overall, the process's peak RSS and FalkorDB's
memory for the graph. `--no-embed` swaps the embedder for one that returns a
random unit vector seeded by the text (the graph classes always embed; this
isolates the database and Python cost). Not a test: numbers go to the docs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import anyio
import redis.asyncio as aredis
from polyg_core.config import StorageSettings, settings_from_env
from polyg_core.providers.embeddings import make_embedder
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.storage.embedded import EmbeddedFalkorDB, default_data_dir
from polyg_core.storage.store import FalkorStore
from polyg_core.testing.hashing import HashEmbedder
from polyg_core.testing.timed import TimedEmbedder
from polyg_core.transfer import RecordWriter, iter_records

EXTRA_KINDS = ("fact", "causal_link", "concept", "memory", "solution")


def write_chunk(
    f: Any,
    rng: random.Random,
    lo: int,
    hi: int,
    known: int,
    relations: int,
    events: int,
    kinds: dict[str, int],
) -> None:
    """Entities lo..hi, then their relations (a ring plus random chords among the first
    `known` entities) and their events (each involving two of them)."""
    for i in range(lo, hi):
        rec = {"kind": "entity", "name": f"svc-{i}", "type": "Service", "properties": {"i": i}}
        f.write(json.dumps(rec) + "\n")
        kinds["entity"] += 1
    for r in range(relations):
        for i in range(lo, hi):
            j = (i + 1) % known if r == 0 and i % 2 == 0 else rng.randrange(known)
            if j == i:
                j = (i + 1) % known
            rec = {
                "kind": "relation",
                "source": f"svc-{i}",
                "target": f"svc-{j}",
                "type": ("calls", "depends_on", "owns")[r % 3],
                "source_type": "Service",
                "target_type": "Service",
            }
            f.write(json.dumps(rec) + "\n")
            kinds["relation"] += 1
    for _ in range(events * (hi - lo)):
        i = kinds["event"]
        a, b = rng.randrange(known), rng.randrange(known)
        rec = {
            "kind": "event",
            "description": f"deploy {i} of svc-{a} paged the owner of svc-{b}",
            "occurred_at": 1_760_000_000_000 + i * 60_000,
            "entities": [f"svc-{a}", f"svc-{b}"],
        }
        f.write(json.dumps(rec) + "\n")
        kinds["event"] += 1


def write_data(
    path: Path,
    n: int,
    seed: int = 7,
    extra: int = 0,
    relations: int = 1,
    events: int = 1,
    chunk: int | None = None,
) -> dict[str, int]:
    """N entities, `relations` x N relations and `events` x N events (then `extra` of
    each other kind). With `chunk`, the kinds come mixed: each chunk of entities is
    followed by its share of relations and events among the entities written so far,
    so a run stopped early holds every kind in proportion."""
    rng = random.Random(seed)
    kinds = {"entity": 0, "relation": 0, "event": 0}
    step = chunk or n
    with path.open("w", encoding="utf-8") as f:
        for lo in range(0, n, step):
            hi = min(n, lo + step)
            write_chunk(f, rng, lo, hi, n if chunk is None else hi, relations, events, kinds)
        records: dict[str, Callable[[int], dict[str, Any]]] = {
            "fact": lambda i: {
                "kind": "fact",
                "subject": f"svc-{i % n}",
                "predicate": "owned_by",
                "object": f"team-{i % 50}",
                "valid_from": 1_700_000_000_000 + i * 60_000,
            },
            "causal_link": lambda i: {
                "kind": "causal_link",
                "cause": f"svc-{i % n} latency rose in window {i}",
                "effect": f"svc-{(i * 7) % n} errors rose in window {i}",
                "confidence": 0.7,
                "entities": [f"svc-{i % n}"],
            },
            "concept": lambda i: {
                "kind": "concept",
                "name": f"topic-{i}",
                "description": f"what svc-{i % n} is about",
                "entities": [f"svc-{i % n}"],
            },
            "memory": lambda i: {
                "kind": "memory",
                "content": f"note {i}: svc-{i % n} was tuned",
                "concepts": [f"topic-{i}"],
            },
            "solution": lambda i: {
                "kind": "solution",
                "problem": f"svc-{i % n} queue backed up in window {i}",
                "solution": f"drain the svc-{i % n} queue for window {i}",
                "evidence": "runbook",
            },
        }
        for kind in EXTRA_KINDS if extra else ():
            for i in range(extra):
                f.write(json.dumps(records[kind](i)) + "\n")
            kinds[kind] = extra
    return kinds


def progress(marks: list[tuple[int, float]], done: int, elapsed: float) -> None:
    marks.append((done, elapsed))
    if len(marks) % 20 == 0:
        load = " ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"{done} records in {elapsed:.0f} s (load {load})", file=sys.stderr, flush=True)


def cpu_s() -> float:
    """This process's CPU seconds so far (all threads: Python and the model's)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


async def server_figures(probe: aredis.Redis) -> dict[str, float]:
    """The FalkorDB server's CPU seconds and memory (INFO)."""
    cpu: dict[str, Any] = await probe.info("cpu")
    mem: dict[str, Any] = await probe.info("memory")
    return {
        "cpu_s": float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"]),
        "used_memory": float(mem["used_memory"]),
        "used_memory_peak": float(mem["used_memory_peak"]),
        "rss": float(mem["used_memory_rss"]),
    }


def _decoded(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, dict):
        return {_decoded(k): _decoded(v) for k, v in cast(dict[Any, Any], value).items()}
    if isinstance(value, list):
        seq = cast(list[Any], value)
        return {_decoded(k): _decoded(v) for k, v in zip(seq[::2], seq[1::2], strict=False)}
    return value


async def graph_memory(probe: aredis.Redis, ns: str) -> dict[str, Any]:
    """GRAPH.MEMORY USAGE: the graph's matrices, attributes per label and type, indexes."""
    return _decoded(await probe.execute_command("GRAPH.MEMORY", "USAGE", ns))


async def counts(store: FalkorStore, ns: str) -> tuple[dict[str, int], dict[str, int]]:
    nodes = await store.query(
        ns, "MATCH (n) RETURN labels(n)[0], count(n)", read_only=True, timeout_ms=600_000
    )
    edges = await store.query(
        ns, "MATCH ()-[r]->() RETURN type(r), count(r)", read_only=True, timeout_ms=600_000
    )
    return (
        {str(k): int(v) for k, v in nodes.rows},
        {str(k): int(v) for k, v in edges.rows},
    )


async def index_sizes(store: FalkorStore, ns: str) -> list[dict[str, Any]]:
    """Per label, its indexes' kinds and FalkorDB's own statistics (`CALL db.indexes()`)."""
    res = await store.query(
        ns,
        "CALL db.indexes() YIELD label, properties, types, info RETURN label, properties, "
        "types, info",
        read_only=True,
    )
    out: list[dict[str, Any]] = []
    for label, props, types, info in res.rows:
        stats = cast(dict[str, Any], info or {})
        keep = {
            k: v
            for k, v in stats.items()
            if any(w in k for w in ("size", "num_docs", "num_records", "memory", "mb"))
        }
        out.append({"label": label, "properties": props, "types": types, "info": keep})
    return out


def split_file(path: Path, kinds: dict[str, int], dest: Path) -> list[tuple[str, Path]]:
    """The data file cut into one file per kind, in file order (the kinds come in runs)."""
    parts: list[tuple[str, Path]] = []
    with path.open(encoding="utf-8") as f:
        current: str | None = None
        out = None
        for line in f:
            kind = json.loads(line)["kind"]
            if kind != current:
                if out is not None:
                    out.close()
                current = kind
                part = dest / f"{len(parts)}-{kind}.jsonl"
                parts.append((kind, part))
                out = part.open("w", encoding="utf-8")
            assert out is not None
            out.write(line)
        if out is not None:
            out.close()
    return parts


async def bench(args: argparse.Namespace) -> None:
    n, no_embed, batch, extra = args.n, args.no_embed, args.batch, args.extra
    settings = settings_from_env(os.environ)
    if settings.storage.external:
        raise SystemExit("run on the embedded server (POLYG_DATA_DIR, no FALKORDB_HOST)")
    data_dir = settings.storage.data_dir
    server = EmbeddedFalkorDB(data_dir or default_data_dir())
    sock = server.ensure_running()
    probe = aredis.Redis(unix_socket_path=sock)
    store = await FalkorStore(
        StorageSettings(data_dir=data_dir, query_timeout_ms=600_000)
    ).connect()
    base: Embedder = (
        HashEmbedder("bench/hash") if no_embed else make_embedder(settings.embedding_model)
    )
    embedder = TimedEmbedder(base)
    ns = f"bench_import_{n}_{'noembed' if no_embed else 'embed'}"
    await store.delete_graph(ns)
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        path = Path(tmp) / "data.jsonl"
        kinds = write_data(
            path, n, extra=extra, relations=args.relations, events=args.events, chunk=args.mixed
        )
        if args.mixed:
            parts = [("mixed", path)]
        else:
            parts = split_file(path, kinds, Path(tmp))
            path.unlink()
        writer = RecordWriter.build(store, embedder, batch_size=batch)
        phases: list[dict[str, Any]] = []
        records = failed = 0
        total_s = 0.0
        live: dict[str, Any] = {}

        async def run_phases(parts: list[tuple[str, Path]]) -> None:
            nonlocal records, failed, total_s
            for kind, part in parts:
                marks: list[tuple[int, float]] = []
                t0 = time.perf_counter()
                c0, s0, e0 = cpu_s(), await server_figures(probe), embedder.seconds
                live.update(kind=kind, t0=t0, marks=marks)
                report = await writer.run(
                    ns,
                    lambda part=part: iter_records(part, "jsonl"),
                    on_progress=lambda done, t0=t0, marks=marks: progress(
                        marks, done, time.perf_counter() - t0
                    ),
                )
                spent = time.perf_counter() - t0
                c1, s1 = cpu_s(), await server_figures(probe)
                total_s += spent
                records += report.records
                failed += report.failed
                phases.append(
                    {
                        "kind": kind,
                        "records": report.records,
                        "failed": report.failed,
                        "seconds": round(spent, 1),
                        "per_s": round(report.records / spent, 1) if spent else None,
                        "importer_cpu_s": round(c1 - c0, 1),
                        "embed_wall_s": round(embedder.seconds - e0, 1),
                        "falkordb_cpu_s": round(s1["cpu_s"] - s0["cpu_s"], 1),
                        "used_memory_delta_mb": round(
                            (s1["used_memory"] - s0["used_memory"]) / 2**20, 1
                        ),
                        "load": [round(x, 2) for x in os.getloadavg()],
                    }
                )
                print(json.dumps(phases[-1]), file=sys.stderr, flush=True)
                part.unlink()

        cpu0, srv0 = cpu_s(), await server_figures(probe)
        cut_short = True
        with anyio.move_on_after(args.budget_s):
            await run_phases(parts)
            cut_short = False
        if cut_short and live:
            # The phase the budget stopped: what its progress marks say it had written.
            spent = time.perf_counter() - live["t0"]
            done = live["marks"][-1][0] if live["marks"] else 0
            total_s += spent
            records += done
            phases.append(
                {
                    "kind": live["kind"],
                    "records": done,
                    "seconds": round(spent, 1),
                    "per_s": round(done / spent, 1) if spent else None,
                    "stopped_by_budget": True,
                }
            )
        cpu1, srv1 = cpu_s(), await server_figures(probe)
    nodes, edges = await counts(store, ns)
    n_nodes, n_edges = sum(nodes.values()), sum(edges.values())
    used = srv1["used_memory"] - srv0["used_memory"]
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "n_entities": n,
                "relations_per_entity": args.relations,
                "events_per_entity": args.events,
                "embeddings": "hash-seeded random (no model)" if no_embed else base.model_name,
                "batch": batch,
                "records": records,
                "failed": failed,
                "total_s": round(total_s, 1),
                "records_per_s": round(records / total_s, 1) if total_s else None,
                "cut_short_by_budget": cut_short,
                "load_before": [round(x, 2) for x in load0],
                "load_after": [round(x, 2) for x in os.getloadavg()],
                "phases": phases,
                "importer_cpu_s": round(cpu1 - cpu0, 1),
                "embed_wall_s": round(embedder.seconds, 1),
                "texts_embedded": embedder.texts,
                "falkordb_cpu_s": round(srv1["cpu_s"] - srv0["cpu_s"], 1),
                "peak_rss_importer_mb": round(peak_mb, 1),
                "falkordb_rss_mb": round(srv1["rss"] / 2**20, 1),
                "falkordb_used_memory_peak_mb": round(srv1["used_memory_peak"] / 2**20, 1),
                "used_memory_delta_mb": round(used / 2**20, 1),
                "nodes": nodes,
                "edges": edges,
                "bytes_per_node_with_edges": round(used / n_nodes) if n_nodes else None,
                "bytes_per_node_or_edge": round(used / (n_nodes + n_edges)) if n_nodes else None,
                "graph_memory_usage": await graph_memory(probe, ns),
                "indexes": await index_sizes(store, ns),
            },
            indent=2,
            default=str,
        )
    )
    if not args.keep:
        await store.delete_graph(ns)
    await probe.aclose()
    await store.close()
    server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description="Import throughput benchmark.")
    parser.add_argument("--n", type=int, default=10_000, help="records per kind")
    parser.add_argument(
        "--no-embed", action="store_true", help="hash-seeded random vectors, no model"
    )
    parser.add_argument("--batch", type=int, default=500, help="records per batch")
    parser.add_argument(
        "--extra",
        type=int,
        default=0,
        help="also this many facts, causal links, concepts and memories",
    )
    parser.add_argument("--relations", type=int, default=1, help="relations per entity")
    parser.add_argument("--events", type=int, default=1, help="events per entity")
    parser.add_argument(
        "--budget-s", type=float, default=None, help="stop writing after this many seconds"
    )
    parser.add_argument(
        "--mixed",
        type=int,
        default=None,
        help="mix the kinds: this many entities, then their relations and events, and so on",
    )
    parser.add_argument("--keep", action="store_true", help="keep the namespace afterwards")
    parser.add_argument("--tmp", default=None, help="folder for the generated data file")
    args = parser.parse_args()
    anyio.run(bench, args)


if __name__ == "__main__":
    main()
