"""Ask a kept retrieval namespace its questions again: recall's cost per question, and its results.

    # once: ingest the dev conversation and keep the data
    uv run polyg bench retrieval ../shared/fixtures/dev-conversation/conversation.json --keep DIR
    # then, as often as needed (each run is one new process on the same data)
    uv run python scripts/bench_recall_replay.py DATASET --data-dir DIR --out after.json
    uv run python scripts/bench_recall_replay.py --compare before.json after.json
    uv run python scripts/bench_recall_replay.py --summary after.json   # again, by question kind

Each question is asked as `polyg bench retrieval` asks it (same reference time, retrievers
and memory limit). Per recall the run records what a loaded machine does not distort:
FalkorDB round trips, how many of them started with no other query in flight (the
sequential steps), the main thread's CPU time (the event loop's own work), the process's
CPU time (the embedder's thread included), and wall-clock time; and a fingerprint of the
result (the memories' uuids and scores, the nodes, the answer and its confidence), so
two versions of the code can be shown to answer identically (`--compare`).
`--profile FILE` writes a cProfile of the recalls (pstats format) timed by the main
thread's CPU clock, so waiting for a core or for FalkorDB does not count.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import json
import statistics
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
from polyg_bench.dataset import load_dataset
from polyg_core.config import Settings, StorageSettings
from polyg_core.memory import Memory
from polyg_core.providers.embeddings import make_embedder
from polyg_core.recall.warm import freeze_heap as freeze_recall_heap
from polyg_core.recall.warm import warm_recall
from polyg_core.storage.embedded import EmbeddedFalkorDB
from polyg_core.storage.store import FalkorStore
from polyg_shared.retrieval import RETRIEVERS


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


class _QueryCounter:
    """Wraps `FalkorStore.query`: queries sent, and those sent with none other in flight."""

    def __init__(self, store: FalkorStore) -> None:
        self.sent = 0
        self.alone = 0
        self.in_flight = 0
        original = store.query

        async def counted(*args: Any, **kwargs: Any) -> Any:
            self.sent += 1
            self.alone += int(self.in_flight == 0)
            self.in_flight += 1
            try:
                return await original(*args, **kwargs)
            finally:
                self.in_flight -= 1

        store.query = counted  # type: ignore[method-assign]


def _whole(result: Any) -> str:
    """A digest of the whole result but its timings (the context, edges, reasoning, sources,
    every memory's retriever scores...): equal digests, equal results."""
    data = result.model_dump(mode="json", exclude={"timings_ms"})
    for view in data.get("views", []):
        view.pop("elapsed_ms", None)
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def _fingerprint(result: Any) -> dict[str, Any]:
    return {
        "whole": _whole(result),
        "memories": [[m.uuid, round(m.score, 9)] for m in result.memories],
        "nodes": [n.uuid for n in result.nodes],
        "answer": result.answer,
        "confidence": round(result.confidence, 9),
        # The dense retriever's scaled scores: FalkorDB's HNSW index can answer the same
        # vector with another tail under load, which moves them (and the fused scores).
        "dense": [m.retrievers.get("dense") for m in result.memories],
        # A view that ran out of time, or PPR's fetch cut short by its time budget (a
        # loaded machine), changes what is found.
        "views": [[v.view, v.status, v.error] for v in result.views],
    }


async def replay(
    dataset_path: Path,
    data_dir: Path,
    namespace_prefix: str,
    rounds: int,
    profile: Path | None,
    freeze_heap: bool = False,
) -> list[dict[str, Any]]:
    """Every question of the dataset asked `rounds` times (the first round is reported)."""
    dataset = load_dataset(dataset_path)
    settings = Settings()
    server = EmbeddedFalkorDB(data_dir)
    server.ensure_running()
    store = await FalkorStore(
        StorageSettings(data_dir=data_dir, query_timeout_ms=600_000)
    ).connect()
    embedder = make_embedder(settings.embedding_model, api_base=settings.llm_base_url)
    memory = Memory(store=store, embedder=embedder, llm=None, settings=settings)
    counter = _QueryCounter(store)
    # The profile counts the main thread's CPU time, not the waits for a loaded machine.
    prof = cProfile.Profile(time.thread_time) if profile else None
    rows: list[dict[str, Any]] = []
    try:
        for ci, conv in enumerate(dataset.conversations):
            ns = f"{namespace_prefix}_{ci}"
            ref = conv.sessions[-1].date_time if conv.sessions else None
            asked = [q for q in dataset.questions if q.conversation_id == conv.id]
            # Warm-up: the model, the catalogue file, the classifier's tables, the modules
            # the graph side imports on first use; PageRank's scipy and dateparser's data
            # as the server and `polyg bench retrieval` load them before the first question
            # (the warm-up questions reach no PageRank: without it the first PPR question
            # paid for importing scipy, ~0.8 s, 8 ms on the PPR questions' mean).
            warm_recall()
            for ppr in (False, True):
                await memory.recall("What happened?", graph=ns, reference_time=ref, ppr=ppr)
            if freeze_heap:
                # As the server does once warm.
                freeze_recall_heap()
            for r in range(rounds):
                for qi, q in enumerate(asked):
                    sent, alone = counter.sent, counter.alone
                    cpu_main, cpu_all = time.thread_time(), time.process_time()
                    t0 = time.perf_counter()
                    if prof:
                        prof.enable()
                    result = await memory.recall(
                        q.question,
                        graph=ns,
                        reference_time=ref,
                        retrievers=list(RETRIEVERS),
                        memory_limit=200,
                    )
                    if prof:
                        prof.disable()
                    row = {
                        "round": r,
                        "index": qi,
                        "question": q.question,
                        "category": q.category,
                        "wall_ms": (time.perf_counter() - t0) * 1000,
                        "main_cpu_ms": (time.thread_time() - cpu_main) * 1000,
                        "process_cpu_ms": (time.process_time() - cpu_all) * 1000,
                        "round_trips": counter.sent - sent,
                        "sequential": counter.alone - alone,
                        "timings": result.timings_ms,
                        "result": _fingerprint(result),
                    }
                    rows.append(row)
    finally:
        await store.close()
    if prof and profile:
        prof.dump_stats(str(profile))
    return rows


def _ran_ppr(row: dict[str, Any]) -> bool:
    """Whether the recall ran the personalized-PageRank view (a question that gathers or
    chains): those are the slow tail."""
    return any(view == "ppr" for view, _status, _error in row["result"].get("views", []))


def summarize(rows: list[dict[str, Any]]) -> None:
    def col(key: str, of: list[dict[str, Any]]) -> list[float]:
        return [float(r[key]) for r in of]

    ppr = [r for r in rows if _ran_ppr(r)]
    other = [r for r in rows if not _ran_ppr(r)]
    for name, group in (("all", rows), ("ppr", ppr), ("no ppr", other)):
        if not group:
            continue
        print(f"{name}: {len(group)} recalls")
        for key in ("round_trips", "sequential"):
            print(f"  {key}: mean {statistics.fmean(col(key, group)):.2f}")
        for key in ("main_cpu_ms", "process_cpu_ms", "wall_ms"):
            v = col(key, group)
            print(
                f"  {key}: mean {statistics.fmean(v):.1f}, p50 {statistics.median(v):.1f}, "
                f"p95 {_pct(v, 95):.1f}"
            )


def compare(a_path: Path, b_path: Path) -> None:
    a: list[dict[str, Any]] = json.loads(a_path.read_text())
    b: list[dict[str, Any]] = json.loads(b_path.read_text())
    by_key: Mapping[tuple[int, int], dict[str, Any]] = {(r["round"], r["index"]): r for r in b}
    same = {"memories": 0, "nodes": 0, "answer": 0, "confidence": 0}
    if all("whole" in row["result"] for row in (*a, *b)):
        same["whole"] = 0
    differ: list[str] = []
    for r in a:
        other = by_key.get((r["round"], r["index"]))
        if other is None:
            continue
        timed_out = [
            f"{run}: {view} {status} {error or ''}".strip()
            for run, row in (("first", r), ("second", other))
            for view, status, error in row["result"].get("views", [])
            if status == "timeout" or (view == "ppr" and error)
        ]
        for k in same:
            if r["result"][k] == other["result"][k]:
                same[k] += 1
            elif k in ("memories", "whole"):
                dense = "dense" in r["result"] and r["result"]["dense"] != other["result"]["dense"]
                differ.append(
                    f"{k} differ: {r['question']}"
                    + (f" (timed out: {timed_out})" if timed_out else "")
                    + (" (the dense k-NN scores differ)" if dense else "")
                )
    print(f"{len(a)} recalls compared: " + ", ".join(f"{k} equal {v}" for k, v in same.items()))
    for q in differ:
        print(f"  {q}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("dataset", type=Path, nargs="?")
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--namespace-prefix", default="bench_retrieval")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--profile", type=Path)
    parser.add_argument("--compare", type=Path, nargs=2)
    parser.add_argument("--summary", type=Path, help="print the summary of a run's --out file")
    parser.add_argument(
        "--freeze-heap",
        action="store_true",
        help="after the warm-up, take what the process holds out of the collector's full "
        "passes, as the server does once warm",
    )
    args = parser.parse_args()
    if args.compare:
        compare(*args.compare)
        return
    if args.summary:
        summarize(json.loads(args.summary.read_text()))
        return
    if args.dataset is None or args.data_dir is None:
        parser.error("give the dataset and --data-dir (or --compare A B)")
    rows = anyio.run(
        replay,
        args.dataset,
        args.data_dir,
        args.namespace_prefix,
        args.rounds,
        args.profile,
        args.freeze_heap,
    )
    summarize(rows)
    if args.out:
        args.out.write_text(json.dumps(rows))


if __name__ == "__main__":
    main()
