"""The first recall of a new process on a namespace of many memories.

    uv run python scripts/bench_first_recall.py --memories 100000 --data-dir /tmp/polyg-first-recall

Writes `--memories` memories (once; a data dir that already holds them is reused) through
the semantic graph's batch writer, with random unit vectors (k-NN timings are real,
similarities meaningless) and texts drawn from a vocabulary of ~1,500 words, so BM25's
postings have a realistic spread. Then starts `--runs` new processes one after another;
each opens the memory, loads the embedding model (timed apart: any process that embeds
pays it), asks one question (the first recall), then `--warm` more (default 5), and
reports its times (wall clock and the process's CPU time, with the load average), how
many memories its first recall read from FalkorDB into the catalogue (`fetched`) and
from the catalogue file (`loaded`), and its peak RSS. The first process
after writing pays for building the catalogue file once; the table shows it apart.

On a namespace that already holds entities (an import's):

    nice -n 10 uv run python scripts/bench_first_recall.py --data-dir DIR --serve 9000 \
        --namespace NS &     # a new server on DIR: how long its start took; held up
    uv run python scripts/bench_first_recall.py --data-dir DIR --namespace NS \
        --about-entities --memories 5000 --remember 200 --runs 4 --warm 40 [--warm-up]

`--about-entities` writes memories naming the namespace's own entities through
`polyg import`'s writer (with the embedding model) and `--remember` more through
`Memory.remember`, then asks about those entities; `--warm-up` runs what polyg-server
loads once it is up before each process's first recall; `--profile PATH` profiles the
warm calls and times every query they send.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import random
import re
import resource
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, cast

import anyio
import numpy as np
from polyg_core.config import Settings, StorageSettings
from polyg_core.graphs.base import now_ms
from polyg_core.graphs.semantic import memory_row, write_memories
from polyg_core.memory import Memory
from polyg_core.recall.warm import warm_recall
from polyg_core.storage.embedded import EmbeddedFalkorDB
from polyg_core.transfer import RecordWriter, iter_records
from polyg_shared import MemoryCategory

NAMESPACE = "bench_first_recall"
MODEL = "local/minilm"
DIM = 384
BATCH = 1_000
START_MS = 1_735_689_600_000  # 2025-01-01
PEOPLE = [f"{a} {b}" for a in ("Ada", "Bram", "Cleo", "Dov", "Esme") for b in ("Ng", "Ortiz")]
QUESTIONS = [
    "What did Cleo Ng say about the harbour ferry timetable?",
    "Why was the bakery oven repaired in spring?",
    "When did Bram Ortiz move the choir rehearsal?",
    "Which garden beds got the new compost?",
    "Who fixed the lighthouse lamp?",
    "What happened to the library roof after the storm?",
]


def _vocabulary(rng: random.Random, size: int = 1_500) -> list[str]:
    syllables = ["ka", "lo", "mi", "ren", "sa", "tor", "vel", "un", "pa", "dri", "qu", "zen"]
    words = {"".join(rng.choice(syllables) for _ in range(rng.randint(2, 3))) for _ in range(size)}
    common = "harbour ferry bakery oven choir garden compost lighthouse lamp library roof"
    return sorted(words) + common.split()


def _text(rng: random.Random, words: list[str], i: int) -> str:
    # Zipf-like: a few words in many memories, most in few.
    n = rng.randint(6, 18)
    picked = [words[min(len(words) - 1, int(rng.paretovariate(1.1)) - 1)] for _ in range(n // 2)]
    picked += [rng.choice(words) for _ in range(n - len(picked))]
    rng.shuffle(picked)
    return f"{rng.choice(PEOPLE)}: note {i} " + " ".join(picked) + "."


async def _populate(memory: Memory, namespace: str, n: int) -> float:
    """`n` memories with random vectors in a namespace of their own (rewritten unless it
    holds exactly `n`; one holding anything but memories is refused, not deleted)."""
    store = memory.store
    res = await store.query(namespace, "MATCH (m:S_Memory) RETURN count(m)", read_only=True)
    if res.rows and int(res.rows[0][0]) == n:
        return 0.0
    other = await store.query(
        namespace, "MATCH (x) WHERE NOT x:S_Memory RETURN count(x) > 0", read_only=True
    )
    if other.rows and other.rows[0][0]:
        raise SystemExit(
            f"namespace {namespace!r} holds more than memories: it would be rewritten; "
            "use --about-entities to add memories to it, or another --namespace"
        )
    t0 = time.perf_counter()
    await store.delete_graph(namespace)
    await store.ensure_schema(namespace)
    await store.ensure_vectors(namespace, MODEL, DIM)
    rng = random.Random(7)
    vrng = np.random.default_rng(7)
    words = _vocabulary(rng)
    now = now_ms()
    for start in range(0, n, BATCH):
        size = min(BATCH, n - start)
        vecs = vrng.standard_normal((size, DIM)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        rows: list[dict[str, Any]] = []
        for j in range(size):
            i = start + j
            t = START_MS + i * 60_000
            text = _text(rng, words, i)
            rows.append(
                memory_row(
                    j, text, MemoryCategory.EPISODIC, [], [], [], t, None, vecs[j].tolist(), now
                )
            )
        await write_memories(store, namespace, rows)
        if start and start % 20_000 == 0:
            print(f"  written {start} memories ({time.perf_counter() - t0:.0f} s)", flush=True)
    return time.perf_counter() - t0


TOPICS = [
    "latency",
    "disk usage",
    "certificate renewal",
    "queue depth",
    "memory leak",
    "retry storm",
    "schema migration",
    "cache misses",
    "rate limits",
    "log volume",
]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
NOTE_FORMS = [
    "{p}: {a} was moved behind the new load balancer after the {t} review.",
    "{p} said the {t} alerts from {a} stopped once {b} got more workers.",
    "{a} now depends on {b} for {t}; {p} owns the follow-up.",
    "The {d} outage started in {a}: its {t} grew until {b} timed out.",
    "{p} rolled back {a} on {d} because of {t} in {b}.",
    "Note from {p}: {a} is to be retired next quarter and {b} takes over its {t} checks.",
]
ASK_FORMS = [
    "What happened to {a}?",
    "Why did {a} fail?",
    "Who owns {a}?",
    "What did {p} say about {a}?",
]


async def _entity_names(memory: Memory, namespace: str, want: int, rng: random.Random) -> list[str]:
    """Up to `want` names of entities spread over the whole namespace (random node ids)."""
    store = memory.store
    res = await store.query(namespace, "MATCH (n) RETURN max(id(n))", read_only=True)
    top = int(res.rows[0][0] or 0)
    names: list[str] = []
    for _ in range(20):  # bounded: each round asks for 4x the missing ids
        ids = [rng.randrange(top + 1) for _ in range(4 * (want - len(names)))]
        res = await store.query(
            namespace,
            "UNWIND $ids AS i MATCH (e:E_Entity) WHERE id(e) = i RETURN DISTINCT e.name",
            {"ids": ids},
            read_only=True,
            timeout_ms=120_000,
        )
        names = list(dict.fromkeys(names + [str(r[0]) for r in res.rows]))[:want]
        if len(names) >= want:
            break
    if not names:
        raise SystemExit(f"namespace {namespace!r} holds no entities to write memories about")
    return names


async def _populate_about_entities(
    memory: Memory, namespace: str, n: int, remembered: int, questions_file: Path
) -> dict[str, Any]:
    """`n` memories about the namespace's entities through `polyg import`'s writer (the
    configured embedding model), then `remembered` more through `Memory.remember` (the
    whole remember path), timed; and the questions about them for the children."""
    store = memory.store
    res = await store.query(namespace, "MATCH (m:S_Memory) RETURN count(m)", read_only=True)
    held = int(res.rows[0][0])
    if held and await anyio.Path(questions_file).exists():
        # Written by an earlier run (a remembered note can repeat an earlier one: fewer).
        return {"memories_already_held": held}
    if held:
        raise SystemExit(
            f"namespace {namespace!r} holds {held} memories but not this run's questions "
            f"({questions_file}): use a fresh copy of the data dir"
        )
    rng = random.Random(7)
    names = await _entity_names(memory, namespace, min(2 * (n + remembered), 20_000), rng)
    asked: list[dict[str, str]] = []

    def note(i: int) -> str:
        a, b = rng.sample(names, 2)
        p, t, d = rng.choice(PEOPLE), rng.choice(TOPICS), rng.choice(DAYS)
        if i % 10 == 0:  # questions about one memory in ten
            asked.append({"question": rng.choice(ASK_FORMS).format(a=a, p=p), "entity": a})
        return rng.choice(NOTE_FORMS).format(a=a, b=b, p=p, t=t, d=d)

    out: dict[str, Any] = {"entities_sampled": len(names), "load_before": os.getloadavg()[0]}
    t0, c0 = time.perf_counter(), time.process_time()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "memories.jsonl"
        with path.open("w", encoding="utf-8") as f:
            for i in range(n):
                rec = {
                    "kind": "memory",
                    "content": note(i),
                    "created_at": START_MS + i * 600_000,
                    "source_id": f"note-{i}",
                }
                f.write(json.dumps(rec) + "\n")
        report = await RecordWriter.of(memory).run(namespace, lambda: iter_records(path, "jsonl"))
    if report.errors:
        raise SystemExit(f"the import failed on {len(report.errors)} records: {report.errors[:3]}")
    out["imported"] = report.records
    out["import_s"] = round(time.perf_counter() - t0, 1)
    out["import_cpu_s"] = round(time.process_time() - c0, 1)
    took: list[float] = []
    for i in range(n, n + remembered):
        text = note(i)
        t1 = time.perf_counter()
        await memory.remember(text, graph=namespace, reference_time="2025-06-01T12:00:00Z")
        took.append(time.perf_counter() - t1)
    if took:
        out["remembered"] = len(took)
        out["remember_p50_ms"] = round(statistics.median(took) * 1000, 1)
        out["remember_p95_ms"] = round(_p95(took) * 1000, 1)
    out["load_after"] = os.getloadavg()[0]
    await anyio.Path(questions_file).write_text(json.dumps(asked))
    return out


def _found(entity: str, contents: list[str]) -> bool:
    """Whether one of the recalled memories names the entity (as a whole name)."""
    pattern = re.compile(rf"(?<![\w-]){re.escape(entity)}(?![\w-])")
    return any(pattern.search(c) for c in contents)


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def _served(memory: Memory) -> int:
    """Queries the store has sent so far (reads and writes)."""
    return sum(ep.reads + ep.writes for ep in memory.store.routing_stats())


async def _child(
    data_dir: Path,
    warm_calls: int,
    namespace: str,
    asked: Path | None,
    warm_up: bool,
    profile: Path | None,
    seed: int | None,
) -> None:
    t0 = time.perf_counter()
    settings = Settings(storage=StorageSettings(data_dir=data_dir))
    memory = await Memory.open(settings, namespace=namespace)
    try:
        opened = time.perf_counter() - t0
        # A seed makes two runs (code before and after a change) ask the same questions.
        rng = random.Random(seed)
        if asked is None:
            pool = [{"question": q, "entity": ""} for q in QUESTIONS]
        else:
            pool = json.loads(await anyio.Path(asked).read_text())
        picked = rng.sample(pool, min(len(pool), 1 + warm_calls))
        t_model = time.perf_counter()
        await memory.embedder.embed(["the model loads on its first use"])
        model = time.perf_counter() - t_model
        warmed = 0.0
        if warm_up:
            # What polyg-server does once it is up (recall/warm.py): PageRank's scipy and
            # dateparser's language data, loaded before the first question.
            t_warm = time.perf_counter()
            warm_recall()
            warmed = time.perf_counter() - t_warm
        load = os.getloadavg()[0]
        q0 = _served(memory)
        t1, c1 = time.perf_counter(), time.process_time()
        first_result = await memory.recall(picked[0]["question"])
        first, first_cpu = time.perf_counter() - t1, time.process_time() - c1
        first_trips = _served(memory) - q0
        catalogue: Any = memory.pipeline.catalogue
        cat: Any = await catalogue.get(namespace)
        fetched = getattr(catalogue, "fetched", None)
        loaded = getattr(cat, "loaded", len(cat))
        warm: list[float] = []
        warm_cpu: list[float] = []
        trips: list[int] = []
        stages: dict[str, list[float]] = {}
        found: list[bool] = []
        if picked[0]["entity"]:
            found.append(
                _found(picked[0]["entity"], [m.content for m in first_result.memories[:10]])
            )
        profiler = cProfile.Profile() if profile is not None else None
        timed: dict[str, list[float]] = {}
        counted: dict[str, list[int]] = {}
        sent: list[tuple[str, str, dict[str, Any]]] = []
        if profiler is not None:
            _time_queries(memory, timed, counted, sent)
            profiler.enable()  # the warm calls only
        for k in range(warm_calls):
            item = picked[1 + k % (len(picked) - 1)] if len(picked) > 1 else picked[0]
            q1 = _served(memory)
            t2, c2 = time.perf_counter(), time.process_time()
            result = await memory.recall(item["question"])
            warm.append(time.perf_counter() - t2)
            warm_cpu.append(time.process_time() - c2)
            trips.append(_served(memory) - q1)
            for stage, ms in result.timings_ms.items():
                stages.setdefault(stage, []).append(ms)
            if item["entity"]:
                found.append(_found(item["entity"], [m.content for m in result.memories[:10]]))
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(str(profile))
            await anyio.Path(f"{profile}.queries.json").write_text(json.dumps(timed))
            await anyio.Path(f"{profile}.rows.json").write_text(json.dumps(counted))
            costs = await _query_costs(memory, data_dir, sent)
            await anyio.Path(f"{profile}.costs.json").write_text(json.dumps(costs))
        out = {
            "load": load,
            "open_ms": opened * 1000,
            "model_ms": model * 1000,
            "warm_up_ms": warmed * 1000,
            "first_ms": first * 1000,
            "first_cpu_ms": first_cpu * 1000,
            "first_round_trips": first_trips,
            "warm_p50_ms": statistics.median(warm) * 1000,
            "warm_p95_ms": _p95(warm) * 1000,
            "warm_cpu_p50_ms": statistics.median(warm_cpu) * 1000,
            "warm_round_trips_mean": statistics.fmean(trips),
            "fetched": fetched,
            "loaded": loaded,
            "found_at_10": statistics.fmean(found) if found else None,
            "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "warm_ms": [round(w * 1000, 1) for w in warm],
            "stage_p50_ms": {k: round(statistics.median(v), 1) for k, v in stages.items()},
            "stage_p95_ms": {k: round(_p95(v), 1) for k, v in stages.items()},
        }
        print(json.dumps(out), flush=True)
    finally:
        await memory.close()


def _time_queries(
    memory: Memory,
    timed: dict[str, list[float]],
    counted: dict[str, list[int]],
    sent: list[tuple[str, str, dict[str, Any]]],
) -> None:
    """Time every query the store sends (wall clock as the caller sees it, queueing and
    the other queries in flight included) and count the rows it answers, grouped by the
    start of its Cypher text; keep each read (namespace, Cypher, parameters) in `sent`."""
    store: Any = memory.store
    send = store.query

    async def query(namespace: str, cypher: str, *args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        key = _kind(cypher)
        if kwargs.get("read_only") and len(sent) < COSTED_READS:
            params = args[0] if args else kwargs.get("params")
            sent.append((namespace, cypher, dict(params or {})))
        rows = 0
        try:
            res = await send(namespace, cypher, *args, **kwargs)
            rows = len(getattr(res, "rows", ()) or ())
            return res
        finally:
            timed.setdefault(key, []).append((time.perf_counter() - t0) * 1000)
            counted.setdefault(key, []).append(rows)

    store.query = query


def _kind(cypher: str) -> str:
    """A query's kind in the reports: the start of its Cypher text."""
    return " ".join(cypher.split())[:90]


COSTED_READS = 400
"""Reads of the warm calls sent again alone by `--profile` (the first ones): enough for
the common kinds, few enough for a loaded machine."""

_EXECUTION = re.compile(r"internal execution time: ([0-9.]+) milliseconds")


def _server_cpu(client: Any) -> float:
    cpu: dict[str, Any] = client.info("cpu")
    return float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"])


async def _query_costs(
    memory: Memory, data_dir: Path, sent: list[tuple[str, str, dict[str, Any]]], repeat: int = 3
) -> dict[str, list[list[float]]]:
    """Each read the warm calls sent, sent again alone through the store `repeat` times,
    nothing else in flight from this process: per query kind and call, [the server's CPU
    ms (its `used_cpu` over the repeats, less what the `INFO` probe itself costs), the
    process's CPU ms (building the query, the round trip, decoding the reply), FalkorDB's
    own execution time in ms as it reports it, rows]. Other clients of the server count
    in its CPU: on a shared server only the comparison of two runs means something."""
    import redis
    from polyg_core.storage.reply import cypher_params
    from polyg_core.storage.store import compact_vectors

    sock = EmbeddedFalkorDB(data_dir).running_socket()
    if sock is None:
        return {}
    client = redis.Redis(unix_socket_path=sock, socket_timeout=600, decode_responses=True)
    out: dict[str, list[list[float]]] = {}
    try:
        c0 = _server_cpu(client)
        probe = (_server_cpu(client) - c0) * 1000  # one INFO's own cost
        for namespace, cypher, params in sent:
            s0 = _server_cpu(client)
            p0 = time.process_time()
            rows = 0
            for _ in range(repeat):
                res = await memory.store.query(namespace, cypher, params, read_only=True)
                rows = len(res.rows)
            process = (time.process_time() - p0) * 1000 / repeat
            server = max(0.0, ((_server_cpu(client) - s0) * 1000 - probe) / repeat)
            text = cypher_params(compact_vectors(params, DIM)) + cypher
            response: Any = client.execute_command("GRAPH.RO_QUERY", namespace, text, "--compact")
            found = _EXECUTION.search(" ".join(str(x) for x in response[-1]))
            own = float(found.group(1)) if found else float("nan")
            out.setdefault(_kind(cypher), []).append([server, process, own, rows])
    finally:
        client.close()
    return out


def _query_report(profile: Path, runs: int, recalls: int) -> None:
    """Per query kind over every process's warm calls: calls per recall, ms per recall,
    rows per recall; then what the profiles counted per recall."""
    merged: dict[str, list[float]] = {}
    rows: dict[str, int] = {}
    for run in range(runs):
        path = Path(f"{profile}.{run + 1}.queries.json")
        if path.exists():
            for key, ms in json.loads(path.read_text()).items():
                merged.setdefault(key, []).extend(ms)
        counts = Path(f"{profile}.{run + 1}.rows.json")
        if counts.exists():
            for key, n in json.loads(counts.read_text()).items():
                rows[key] = rows.get(key, 0) + sum(n)
    calls = sum(len(ms) for ms in merged.values())
    print(
        f"\nqueries over {recalls} warm recalls (wall clock per call, as recall awaits it; "
        f"{calls / recalls:.2f} round trips and {sum(rows.values()) / recalls:.1f} rows "
        "per recall):"
    )
    for key, ms in sorted(merged.items(), key=lambda kv: -sum(kv[1]))[:15]:
        print(
            f"  {len(ms) / recalls:5.2f} per recall  {sum(ms) / recalls:6.1f} ms per recall  "
            f"{rows.get(key, 0) / recalls:6.1f} rows  "
            f"median {statistics.median(ms):5.1f}  p95 {_p95(ms):6.1f}  {key}"
        )
    _profile_counts(profile, runs, recalls)
    _costs_report(profile, runs, calls / recalls)


def _costs_report(profile: Path, runs: int, round_trips: float) -> None:
    """Per query kind, each read sent again alone: the server's and the process's CPU, per
    warm recall (`round_trips`: reads per warm recall, to scale the reads sent again)."""
    merged: dict[str, list[list[float]]] = {}
    for run in range(runs):
        path = Path(f"{profile}.{run + 1}.costs.json")
        if path.exists():
            for key, calls in json.loads(path.read_text()).items():
                merged.setdefault(key, []).extend(calls)
    if not merged:
        return

    every = [c for calls in merged.values() for c in calls]
    # Only the first COSTED_READS reads of each process were sent again: the recalls they
    # stand for.
    recalls = max(1, round(len(every) / round_trips)) if round_trips else 1

    def per_recall(calls: list[list[float]], i: int) -> float:
        return sum(c[i] for c in calls) / recalls

    print(
        f"\nreads sent again alone, CPU per warm recall: server {per_recall(every, 0):.2f} ms "
        f"(its own execution time {per_recall(every, 2):.2f} ms), process "
        f"{per_recall(every, 1):.2f} ms; by kind:"
    )
    for key, calls in sorted(merged.items(), key=lambda kv: -per_recall(kv[1], 0))[:16]:
        print(
            f"  {len(calls) / recalls:5.2f} per recall  server {per_recall(calls, 0):6.2f} ms "
            f"(execution {per_recall(calls, 2):5.2f})  process {per_recall(calls, 1):5.2f} ms  "
            f"{per_recall(calls, 3):6.1f} rows  {key}"
        )


PROFILE_COUNTS = {
    "maps decoded from replies (storage/reply._map)": ("reply.py", "_map"),
    "context nodes built (recall/context_nodes.to_context)": ("context_nodes.py", "to_context"),
    "nodes offered to a view (ViewCollector.add)": ("view_context.py", "add"),
}
"""Calls counted in the profiles, per recall: what recall decodes and builds."""


def _profile_counts(profile: Path, runs: int, recalls: int) -> None:
    import pstats

    totals = dict.fromkeys(PROFILE_COUNTS, 0)
    for run in range(runs):
        path = Path(f"{profile}.{run + 1}")
        if not path.exists():
            continue
        stats = cast(
            dict[tuple[str, int, str], tuple[int, int, float, float, Any]],
            pstats.Stats(str(path)).stats,  # type: ignore[attr-defined]
        )
        for (file, _line, func), (_cc, ncalls, _tt, _ct, _callers) in stats.items():
            for what, (suffix, name) in PROFILE_COUNTS.items():
                if func == name and file.endswith(suffix):
                    totals[what] += ncalls
    print(f"\nper warm recall, from the profiles ({recalls} recalls):")
    for what, n in totals.items():
        print(f"  {n / recalls:8.1f}  {what}")


def _rounded(row: dict[str, Any]) -> dict[str, Any]:
    return {
        k: round(v, 1) if isinstance(v, float) else v
        for k, v in row.items()
        if k not in ("warm_ms", "stage_p50_ms", "stage_p95_ms")
    }


async def _parent(
    n: int,
    data_dir: Path,
    runs: int,
    warm_calls: int,
    namespace: str,
    about_entities: bool,
    remembered: int,
    warm_up: bool,
    profile: Path | None,
    seed: int | None,
) -> None:
    settings = Settings(storage=StorageSettings(data_dir=data_dir))
    memory = await Memory.open(settings, namespace=namespace)  # keeps the server up
    sock = EmbeddedFalkorDB(data_dir).running_socket()
    asked: Path | None = None
    try:
        if sock:
            print(f"server before writing: {json.dumps(_server_figures(sock, namespace))}")
        if about_entities:
            asked = data_dir / f"questions-{namespace}.json"
            wrote = await _populate_about_entities(memory, namespace, n, remembered, asked)
            print(f"memories: {json.dumps(wrote)}")
        else:
            seconds = await _populate(memory, namespace, n)
            if seconds:
                print(f"wrote {n} memories in {seconds:.0f} s")
        if sock:
            print(f"server after writing: {json.dumps(_server_figures(sock, namespace))}")
        rows: list[dict[str, Any]] = []
        for run in range(runs):
            command = [sys.executable, __file__, "--child", "--data-dir", str(data_dir)]
            command += ["--warm", str(warm_calls), "--namespace", namespace]
            if asked is not None:
                command += ["--questions", str(asked)]
            if warm_up:
                command += ["--warm-up"]
            if profile is not None:
                command += ["--profile", f"{profile}.{run + 1}"]
            if seed is not None:
                command += ["--seed", str(seed + run)]
            out = await anyio.run_process(command, check=True)
            row = json.loads(out.stdout.decode().strip().splitlines()[-1])
            rows.append(row)
            print(f"process {run + 1}: {json.dumps(_rounded(row))}", flush=True)
            print(f"  stages p50 {json.dumps(row['stage_p50_ms'])}", flush=True)
            print(f"  stages p95 {json.dumps(row['stage_p95_ms'])}", flush=True)
        later = rows[1:] or rows
        every_warm = [w for r in later for w in r["warm_ms"]]
        print(
            f"\n{namespace}: new process, first recall: median "
            f"{statistics.median(r['first_ms'] for r in later):.0f} ms over {len(later)} "
            f"processes; warm recall over {len(every_warm)} calls of those processes: "
            f"p50 {statistics.median(every_warm):.0f} ms, p95 {_p95(every_warm):.0f} ms; "
            f"first process after writing: {rows[0]['first_ms']:.0f} ms"
        )
        if sock:
            print(f"server at the end: {json.dumps(_server_figures(sock, namespace))}")
        if profile is not None:
            _query_report(profile, runs, runs * warm_calls)
    finally:
        await memory.close()


def _server_figures(sock: str, namespace: str | None) -> dict[str, Any]:
    """The server's CPU seconds and memory (INFO), and the namespace's own count."""
    import redis

    client = redis.Redis(unix_socket_path=sock, socket_timeout=600, decode_responses=True)
    try:
        mem: dict[str, Any] = client.info("memory")  # type: ignore[assignment]
        out: dict[str, Any] = {
            "server_cpu_s": round(_server_cpu(client), 1),
            "used_memory_mb": round(float(mem["used_memory"]) / 2**20, 1),
            "rss_mb": round(float(mem["used_memory_rss"]) / 2**20, 1),
        }
        if namespace and client.exists(namespace):
            usage: Any = client.execute_command("GRAPH.MEMORY", "USAGE", namespace)
            if isinstance(usage, dict):
                pairs = cast(dict[str, Any], usage)
            else:
                flat = cast(list[Any], usage)
                pairs = {str(k): v for k, v in zip(flat[::2], flat[1::2], strict=False)}
            out["graph_memory_usage_mb"] = {
                k: v for k, v in pairs.items() if isinstance(v, int | float | str)
            }
        return out
    finally:
        client.close()


def _serve(data_dir: Path, hold_s: float, namespace: str | None) -> None:
    """Start a new embedded server on `data_dir`, say how long it took, hold it up.

    The start of a new server loads the snapshot and rebuilds every vector index
    (FalkorDB 4.16.3 does not persist them). The server is held until `hold_s` passes or
    this process gets SIGTERM/SIGINT, then stopped cleanly (its append-only file
    rewritten into its base, as a last user's stop does).
    """
    server = EmbeddedFalkorDB(data_dir)
    if server.running_socket() is not None:
        raise SystemExit(f"a server already runs on {data_dir}: stop it to time a new start")
    log_from = server.log_file.stat().st_size if server.log_file.exists() else 0
    load = os.getloadavg()
    t0 = time.perf_counter()
    sock = server.ensure_running()
    answered = time.perf_counter() - t0

    def _leave(signum: int, frame: object) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, _leave)
    try:
        with server.log_file.open("rb") as f:
            f.seek(log_from)
            log = f.read().decode(errors="replace")
        found = re.search(r"DB loaded from append only file: ([0-9.]+) seconds", log)
        out = {
            "load_before": [round(x, 2) for x in load],
            "load_after": [round(x, 2) for x in os.getloadavg()],
            "start_to_answer_s": round(answered, 1),
            "log_load_s": float(found.group(1)) if found else None,
            **_server_figures(sock, namespace),
        }
        print(json.dumps(out), flush=True)
        deadline = time.monotonic() + hold_s
        while time.monotonic() < deadline:
            time.sleep(min(5.0, max(0.0, deadline - time.monotonic())))
    finally:
        t1 = time.perf_counter()
        server.stop(force=True)
        print(json.dumps({"stop_s": round(time.perf_counter() - t1, 1)}), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--data-dir", type=Path, required=True, help="kept between runs")
    parser.add_argument("--runs", type=int, default=4, help="new processes, one after another")
    parser.add_argument("--warm", type=int, default=5, help="warm recalls per process")
    parser.add_argument(
        "--serve",
        type=float,
        default=None,
        metavar="SECONDS",
        help="only start a new server on the data dir, report its start, hold it this long",
    )
    parser.add_argument("--namespace", default=NAMESPACE, help="the namespace to measure")
    parser.add_argument(
        "--about-entities",
        action="store_true",
        help="write --memories memories naming the namespace's own entities through "
        "`polyg import`'s writer and the embedding model, and ask about those entities",
    )
    parser.add_argument(
        "--remember",
        type=int,
        default=0,
        help="with --about-entities, this many more through Memory.remember (timed)",
    )
    parser.add_argument(
        "--warm-up",
        action="store_true",
        help="each process loads what polyg-server loads once it is up (recall/warm.py), "
        "timed apart, before its first recall",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        default=None,
        help="cProfile each process's warm calls into this path (.1, .2, ... per process) "
        "and time each query they send (reported per query kind)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        help="pick each process's questions with this seed (process k: seed + k - 1), so "
        "that two runs ask the same questions in the same order",
    )
    parser.add_argument("--questions", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        _serve(args.data_dir, args.serve, args.namespace)
    elif args.child:
        anyio.run(
            _child,
            args.data_dir,
            args.warm,
            args.namespace,
            args.questions,
            args.warm_up,
            args.profile,
            args.seed,
        )
    else:
        anyio.run(
            _parent,
            args.memories,
            args.data_dir,
            args.runs,
            args.warm,
            args.namespace,
            args.about_entities,
            args.remember,
            args.warm_up,
            args.profile,
            args.seed,
        )
