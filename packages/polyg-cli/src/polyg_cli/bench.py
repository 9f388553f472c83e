"""`polyg bench`: scale, load, peers, retrieval, extraction and profile benchmarks.

Each command prints Markdown tables (the ones in docs/benchmarks.md) and, with
`--json PATH`, writes the raw numbers. Unless FALKORDB_HOST/FALKORDB_URL is set,
every run uses its own embedded FalkorDB in a temporary directory, so user data is
never touched and the server's memory can be read. `retrieval` is the exception: its
data can be inspected afterwards, so it uses `--keep DIR` or else POLYG_DATA_DIR when
set (only its own `bench_retrieval_<n>` namespaces are written).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import logging
import os
import platform
import tempfile
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from polyg_cli.runtime import CliState, run, state

if TYPE_CHECKING:
    from polyg_bench.renaming import RenamedRun
    from polyg_bench.retrieval import RetrievalReport
    from polyg_core.config import Settings
    from polyg_core.memory import Memory
    from polyg_core.providers.llm import LLM

bench_app = typer.Typer(
    name="bench",
    help="Benchmarks: latency at scale, HTTP load, peers side by side, retrieval and "
    "extraction quality.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


@bench_app.callback()
def _needs_the_bench_package() -> None:
    """Benchmarks: latency at scale, HTTP load, peers side by side, retrieval quality."""
    if importlib.util.find_spec("polyg_bench") is None:
        typer.echo(
            "polyg bench runs from a clone of the polyg repository (uv run polyg bench ...): "
            "the benchmark runners are in the workspace package polyg-bench, which is not "
            "published",
            err=True,
        )
        raise typer.Exit(2)


JsonOut = Annotated[Path | None, typer.Option("--json", help="Also write the raw numbers here.")]


@dataclass
class BenchEnv:
    """A store for benchmarking plus what child servers need to reach the same FalkorDB."""

    store: Any
    embedder: Any
    child_env: dict[str, str]
    server_pid: int | None
    probe: Any

    def memory(self, settings: Settings, llm: LLM | None = None) -> Memory:
        """A `Memory` over this store and embedder, answering with `llm` when given."""
        from polyg_core.memory import Memory

        return Memory(store=self.store, embedder=self.embedder, llm=llm, settings=settings)


@asynccontextmanager
async def bench_env(st: CliState, data_dir: Path | None = None) -> AsyncGenerator[BenchEnv]:
    """A private embedded FalkorDB (or the configured external one) and the embedder.

    `data_dir` puts the embedded FalkorDB there instead of in a temporary directory (it
    is reused if already running, and the directory stays), so the data can be opened
    after the run.
    """
    import redis.asyncio as aredis
    from polyg_core.config import StorageSettings
    from polyg_core.providers.embeddings import make_embedder
    from polyg_core.storage.embedded import EmbeddedFalkorDB
    from polyg_core.storage.store import FalkorStore

    settings = st.settings
    embedder = make_embedder(settings.embedding_model, api_base=settings.llm_base_url)
    env = {k: v for k, v in os.environ.items() if k not in ("LLM_MODEL", "POLYG_API_KEY")}
    if settings.storage.external:
        store = await FalkorStore(settings.storage).connect()
        try:
            yield BenchEnv(store, embedder, env, None, None)
        finally:
            await store.close()
        return
    with contextlib.ExitStack() as dirs:
        where = (
            data_dir
            if data_dir is not None
            else Path(dirs.enter_context(tempfile.TemporaryDirectory(prefix="polyg-bench-")))
        )
        where.mkdir(parents=True, exist_ok=True)
        server = EmbeddedFalkorDB(where)
        sock = server.ensure_running()
        store = await FalkorStore(
            StorageSettings(data_dir=where, query_timeout_ms=600_000)
        ).connect()
        probe = aredis.Redis(unix_socket_path=sock)
        env["POLYG_DATA_DIR"] = str(where)
        try:
            yield BenchEnv(store, embedder, env, server.pid, probe)
        finally:
            await probe.aclose()
            await store.close()
            # Stops the server unless another polyg process (a server on the dir) uses it.
            server.stop()


def machine() -> str:
    """One line: cores, memory, CPU model, Python."""
    mem = "?"
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores, {mem}, {cpu}, Python {platform.python_version()}"


def markdown(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    """A Markdown table of `rows` with the given columns (missing values as '-')."""
    head = "| " + " | ".join(columns) + " |\n|" + "---|" * len(columns) + "\n"
    body = "".join(
        "| " + " | ".join("-" if r.get(c) is None else str(r.get(c)) for c in columns) + " |\n"
        for r in rows
    )
    return head + body


def _write_json(path: Path | None, data: Any) -> None:
    if path is not None:
        path.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")


def _mb(n: int | None) -> str | None:
    return None if n is None else f"{n / 1024 / 1024:.0f}"


@bench_app.command("scale")
def scale_command(
    ctx: typer.Context,
    sizes: Annotated[list[int], typer.Option("--size", help="Entities per namespace; repeat.")] = [  # noqa: B006
        1000,
        10000,
    ],
    iterations: Annotated[int, typer.Option(help="Timed calls per read.")] = 100,
    recall_iterations: Annotated[int, typer.Option(help="Timed recall/remember calls.")] = 30,
    seed: Annotated[int, typer.Option(help="Generator seed.")] = 7,
    json_out: JsonOut = None,
) -> None:
    """Generate namespaces of each size and time the reads, recall and remember (no LLM)."""
    from polyg_bench.scale import run_size

    st = state(ctx)

    async def go() -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        async with bench_env(st) as env:
            memory = env.memory(st.settings)
            for size in sizes:
                res = await run_size(
                    memory,
                    size,
                    seed=seed,
                    iterations=iterations,
                    recall_iterations=recall_iterations,
                    server_pid=env.server_pid,
                    probe=env.probe,
                )
                rows.append(res.row())
                st.err.print(f"size {size} done in {res.load_seconds:.1f} s load")
        return rows

    rows = run(st, go)
    print(f"machine: {machine()}\n")
    print(
        markdown(
            [
                {
                    **r,
                    "graph_mb": r["graph_mb"],
                    "used_mb": _mb(r["used_memory_delta"]),
                    "falkordb_rss_mb": _mb(r["server_rss"]),
                    "process_rss_mb": _mb(r["process_rss"]),
                }
                for r in rows
            ],
            [
                "entities",
                "nodes",
                "edges",
                "load_seconds",
                "ingest_per_s",
                "graph_mb",
                "used_mb",
                "falkordb_rss_mb",
                "process_rss_mb",
            ],
        )
    )
    timing_rows = [{"entities": r["entities"], **t} for r in rows for t in r["timings"]]
    print(markdown(timing_rows, ["entities", "name", "n", "p50", "p95", "p99"]))
    _write_json(json_out, {"machine": machine(), "rows": rows})


@bench_app.command("load")
def load_command(
    ctx: typer.Context,
    entities: Annotated[int, typer.Option(help="Generated namespace size.")] = 1000,
    clients: Annotated[list[int], typer.Option("--clients", help="Concurrent clients; repeat.")] = [  # noqa: B006
        1,
        10,
        50,
        100,
    ],
    workloads: Annotated[list[str], typer.Option("--workload", help="direct, recall, mixed.")] = [  # noqa: B006
        "direct",
        "recall",
        "mixed",
    ],
    max_requests: Annotated[int, typer.Option(help="Request budget per cell.")] = 2000,
    max_seconds: Annotated[float, typer.Option(help="Time limit per cell.")] = 20.0,
    json_out: JsonOut = None,
) -> None:
    """The HTTP server on 127.0.0.1 under concurrent MCP clients: QPS, p50/p99, errors."""
    from polyg_bench.generate import generate
    from polyg_bench.load import WORKLOADS, run_cell
    from polyg_bench.server import http_server
    from polyg_bench.stats import rss_bytes

    st = state(ctx)
    unknown = [w for w in workloads if w not in WORKLOADS]
    if unknown:
        st.err.print(f"unknown workload(s) {unknown}; use {', '.join(WORKLOADS)}")
        raise typer.Exit(1)

    async def go() -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        async with bench_env(st) as env:
            ns = "bench_load"
            gen = await generate(env.store, ns, entities, dimension=env.embedder.dimension)
            async with http_server({**env.child_env, "FALKORDB_GRAPH": ns}) as server:
                for workload in workloads:
                    for n in clients:
                        cell = await run_cell(
                            server.url,
                            workload,
                            n,
                            gen.entity_names,
                            max_requests=max_requests,
                            max_seconds=max_seconds,
                        )
                        rows.append({**cell.row(), "server_rss_mb": _mb(rss_bytes(server.pid))})
                        st.err.print(f"{workload} x{n}: {rows[-1]['qps']} QPS")
            await env.store.delete_graph(ns)
        return rows

    rows = run(st, go)
    print(f"machine: {machine()}\n")
    cols = ["workload", "clients", "requests", "qps", "p50", "p99", "error_rate", "wall_s"]
    print(markdown(rows, [*cols, "server_rss_mb"]))
    errors = [r for r in rows if r.get("first_error")]
    for r in errors:
        print(f"- {r['workload']} x{r['clients']}: first error: {r['first_error']}")
    _write_json(json_out, {"machine": machine(), "rows": rows})


@bench_app.command("peers")
def peers_command(
    ctx: typer.Context,
    entities: Annotated[int, typer.Option(help="Entities (and relations) to create.")] = 1000,
    reads: Annotated[int, typer.Option(help="Timed lookups/searches/neighbour calls.")] = 100,
    analyses: Annotated[int, typer.Option(help="Timed calls per analysis.")] = 5,
    peers: Annotated[list[str], typer.Option("--peer", help="Peers to run; repeat.")] = [  # noqa: B006
        "server-memory",
        "mcp-graph-engine",
        "memorygraphmcp",
    ],
    json_out: JsonOut = None,
) -> None:
    """The same workload through MCP (stdio) against polyg and peer servers; ratios to polyg."""
    import sys

    from mcp.client.stdio import StdioServerParameters
    from polyg_bench.peers import (
        PEER_DRIVERS,
        PeerRun,
        Workload,
        drive,
        peer_params,
        polyg_engine_driver,
        polyg_memory_driver,
        ratios,
    )

    st = state(ctx)
    w = Workload.make(entities, reads=reads, analyses=analyses)

    async def go() -> list[PeerRun]:
        runs: list[PeerRun] = []
        async with bench_env(st) as env:
            await env.store.delete_graph("bench_peers")
            polyg = StdioServerParameters(
                command=sys.executable,
                args=["-m", "polyg_server.main"],
                env={
                    **env.child_env,
                    "FALKORDB_GRAPH": "bench_peers",
                    "POLYG_LOG_LEVEL": "WARNING",
                },
            )
            runs += await drive(polyg, [polyg_memory_driver(w), polyg_engine_driver(w)], w)
            await env.store.delete_graph("bench_peers")
            with tempfile.TemporaryDirectory(prefix="polyg-peers-") as work:
                peer_env = {k: v for k, v in env.child_env.items() if k != "VIRTUAL_ENV"}
                for name in peers:
                    params = peer_params(name, peer_env, work)
                    if isinstance(params, str):
                        runs.append(PeerRun(name, "?", unavailable=params))
                        continue
                    runs += await drive(params, [PEER_DRIVERS[name](w)], w)
                    st.err.print(f"{name} done")
        return runs

    runs = run(st, go)
    rows = ratios(runs)
    print(f"machine: {machine()}; {entities} entities, {entities} relations\n")
    print(markdown(rows, ["server", "kind", "op", "n", "median", "ratio", "errors"]))
    for r in rows:
        if r.get("unavailable"):
            print(f"- {r['server']}: could not run: {r['unavailable']}")
        elif r.get("first_error"):
            print(f"- {r['server']} {r['op']}: first error: {r['first_error']}")
    _write_json(json_out, {"machine": machine(), "rows": rows})


@bench_app.command("retrieval")
def retrieval_command(
    ctx: typer.Context,
    dataset: Annotated[Path, typer.Argument(help="A dataset in the retrieval JSON format.")],
    json_out: JsonOut = None,
    llm_standin: Annotated[
        str | None,
        typer.Option(
            "--llm-standin",
            metavar="MODEL",
            help="Send the LLM requests to a local stand-in on 127.0.0.1 that answers with "
            "polyg's rules and reports the tokens MODEL would bill (e.g. openai/gpt-4o-mini); "
            "litellm prices them. Measures cost offline; the answers are not an LLM's.",
        ),
    ] = None,
    retrievers: Annotated[
        str | None,
        typer.Option(
            "--retrievers",
            help="Comma-separated retrievers polyg's recall fuses (default all: lexical, "
            "dense, entity, time, neighbours, graph).",
        ),
    ] = None,
    ablation: Annotated[
        bool,
        typer.Option(
            "--ablation",
            help="After the full system, ask every question again with each retriever alone "
            "and each left out (same ingested data) and print the ablation table.",
        ),
    ] = False,
    keep: Annotated[
        Path | None,
        typer.Option(
            "--keep",
            metavar="DIR",
            help="Keep the data: the benchmark's FalkorDB lives in DIR and its namespaces "
            "are not deleted (open them with POLYG_DATA_DIR=DIR).",
        ),
    ] = None,
    renamed_speakers: Annotated[
        int,
        typer.Option(
            "--renamed-speakers",
            metavar="K",
            help="After the run, ingest and ask the dataset again K times (1 to 10, 0 = "
            "off) with its speakers renamed to invented names (variant k: the bench's name "
            "pairs k, k+1...; names, possessives and short forms in the turns, questions "
            "and answers; evidence untouched), each in namespaces of its own "
            "(bench_retrieval_renamed<k>_<n>), and print polyg's R@k per category as "
            "given, per variant, their mean and minimum, and as given minus the mean "
            "(JSON key renamed_speakers): how much recall depends on the speakers' names.",
        ),
    ] = 0,
) -> None:
    """Evidence recall@1/5/10/20 of polyg's recalled memories against BM25 and dense k-NN.

    Without --keep the run uses POLYG_DATA_DIR when set (else a temporary directory)
    and deletes its namespaces at the end.
    """
    from contextlib import AsyncExitStack

    from polyg_bench.retrieval import run_retrieval
    from polyg_core.providers.llm import make_llm

    st = state(ctx)
    _quiet_bm25s()
    names = run(st, lambda: _retrievers(retrievers))
    run(st, lambda: _renamed_count(renamed_speakers))
    data = run(st, lambda: _load(dataset))
    data_dir = keep if keep is not None else st.settings.storage.data_dir

    async def go() -> Any:
        async with AsyncExitStack() as stack:
            env = await stack.enter_async_context(bench_env(st, data_dir))
            llm = make_llm(st.settings)
            standin: Any = None
            if llm_standin:
                from polyg_bench.llm_standin import standin_server

                server, llm = await stack.enter_async_context(standin_server(llm_standin))
                standin = server.request_responder
            memory = env.memory(st.settings, llm)
            report = await run_retrieval(
                memory,
                data,
                keep=keep is not None,
                retrievers=names,
                ablation=ablation,
                progress=lambda line: st.err.print(line, highlight=False),
            )
            # Counted before the renamed runs send their own requests.
            by_kind: list[dict[str, Any]] = standin.by_kind() if standin is not None else []
            plumbing: dict[str, int] = standin.plumbing() if standin is not None else {}
            renamed = await _renamed_runs(st, memory, data, renamed_speakers, keep, names)
            return report, by_kind, plumbing, renamed

    report, by_kind, plumbing, renamed = run(st, go)
    table = report.table()
    print(
        f"machine: {machine()}; dataset {dataset}: {report.turns} turns ingested "
        f"({report.empty_turns} empty turns skipped, {report.identical_turns} identical to "
        f"an earlier turn), {len(report.questions)} questions ({report.skipped_questions} "
        f"skipped for lack of evidence, {report.ignored_evidence} evidence ids naming no "
        f"turn ignored)\n"
    )
    print(f"polyg retrievers: {', '.join(report.retrievers)}\n")
    print(markdown(table, ["system", "category", "n", "R@1", "R@5", "R@10", "R@20"]))
    budgets = report.budget_table()
    print(
        "evidence recall within a token budget: what each system ranks, packed best first "
        "into N tokens (recall's max_tokens packing; about four characters a token)\n"
    )
    print(markdown(budgets, list(budgets[0]) if budgets else []))
    _print_answers(report)
    timings = report.timings()
    print(
        markdown(
            [timings],
            [
                "ingest_s",
                "turns_per_s",
                "recall_p50_ms",
                "recall_p95_ms",
                "recall_round_trips",
                "remember_p50_ms",
            ],
        )
    )
    cost = _cost_per_call(report)
    print("per call (means):\n")
    print(
        markdown(
            cost,
            ["call", "n", "p50_ms", "prompt_tokens", "completion_tokens", "cost_usd", "llm_calls"],
        )
    )
    print(f"degraded recalls (rule-based path): {report.degraded_recalls}/{len(report.questions)}")
    usage = report.usage_table()
    model = llm_standin or st.settings.llm_model
    if llm_standin:
        model = f"{llm_standin} (local stand-in: real prompt sizes, rule-based answers)"
    print(f"\nLLM usage per call, p50 / mean (model: {model or 'none, rule-based path'}):\n")
    print(_usage_markdown(usage))
    _print_standin(by_kind, plumbing)
    _print_ablation(report)
    _print_data_location(st, data_dir, keep, report)
    renamed_json = _print_renamed(report, renamed, keep) if renamed is not None else {}
    _write_json(
        json_out,
        {
            "machine": machine(),
            "dataset": str(dataset),
            "model": model,
            **report.data(),
            "cost": cost,
            "usage": usage,
            "llm_requests_by_kind": by_kind,
            "llm_plumbing": plumbing,
            **renamed_json,
        },
    )


async def _renamed_count(count: int) -> int:
    """The --renamed-speakers count, checked before minutes of ingesting."""
    from polyg_bench.renaming import check_variant_count

    return check_variant_count(count)


async def _renamed_runs(
    st: CliState,
    memory: Memory,
    data: Any,
    count: int,
    keep: Path | None,
    retrievers: list[str] | None,
) -> list[RenamedRun] | None:
    """The --renamed-speakers variants, run on the same store (None when off)."""
    if not count:
        return None
    from polyg_bench.renaming import run_renamed

    return await run_renamed(
        memory,
        data,
        count,
        keep=keep is not None,
        retrievers=retrievers,
        progress=lambda line: st.err.print(line, highlight=False),
    )


def _print_renamed(
    report: RetrievalReport, runs: list[RenamedRun], keep: Path | None
) -> dict[str, Any]:
    """Print the renamed-speakers comparison; its JSON under `renamed_speakers`."""
    from polyg_bench.renaming import renamed_data

    data = renamed_data(report, runs)
    print(
        f"\nrenamed speakers: polyg's evidence recall with the dataset as given and with "
        f"its speakers renamed ({len(runs)} variant(s); names, possessives and short forms "
        "replaced in turns, questions and answers; evidence untouched)\n"
    )
    print(
        markdown(
            data["comparison"],
            ["category", "run", "speakers", "n", "R@1", "R@5", "R@10", "R@20"],
        )
    )
    namespaces = [ns for r in runs for ns in r.report.namespaces]
    fate = "kept" if keep is not None else "deleted"
    print(f"renamed-speaker namespaces {fate}: {', '.join(namespaces)}")
    return {"renamed_speakers": data}


def _print_answers(report: RetrievalReport) -> None:
    answers = report.answer_table()
    if not answers:
        return
    print(
        "answers (extractive synthesizer unless an LLM is configured): token F1 against "
        "the gold answer, and the share right (F1 >= 0.5)\n"
    )
    print(markdown(answers, ["category", "n", "F1", "right"]))
    print("calibration: answers bucketed by confidence, how often each bucket is right\n")
    print(
        markdown(
            report.calibration(),
            ["confidence", "n", "right", "accuracy", "mean_confidence", "mean_f1"],
        )
    )
    print(f"expected calibration error (10 buckets): {report.ece()}\n")


def _cost_per_call(report: RetrievalReport) -> list[dict[str, Any]]:
    """Per call kind: how many, the median time and the mean LLM usage."""
    turns = report.turns or 1
    questions = len(report.questions) or 1
    return [
        {
            "call": "remember",
            "n": report.turns,
            "p50_ms": round(report.remember_timing.p50, 1),
            **{k: round(v / turns, 6) for k, v in report.remember_usage.items()},
        },
        {
            "call": "recall",
            "n": len(report.questions),
            "p50_ms": round(report.recall_timing.p50, 1),
            **{k: round(v / questions, 6) for k, v in report.recall_usage.items()},
        },
    ]


def _print_standin(by_kind: list[dict[str, Any]], plumbing: dict[str, Any]) -> None:
    if not by_kind:
        return
    print("\nstand-in requests by kind (mean tokens per request):\n")
    print(markdown(by_kind, ["kind", "calls", "prompt_tokens", "completion_tokens"]))
    print(
        f"LLM path plumbing: of {plumbing['requests']} synthesis requests, "
        f"{plumbing['with_question']} carried the question, {plumbing['with_answer_shape']} "
        f"the answer shape of its type, {plumbing['with_context_nodes']} the context nodes"
    )


def _print_ablation(report: RetrievalReport) -> None:
    ablation_rows = report.ablation_table()
    if not ablation_rows:
        print("\ninvariant: not checked (needs --ablation to measure single retrievers)")
        return
    cats = [f"R@10 {c}" for c in report.categories]
    print("\nablation (R@k overall; R@10 per category):\n")
    print(markdown(ablation_rows, ["configuration", "R@1", "R@5", "R@10", "R@20", *cats]))
    print("invariant: polyg R@k >= the best single retriever's, k in 1, 5, 10, 20\n")
    for row in report.invariant():
        verdict = "holds" if row["holds"] else "violated: " + "; ".join(row["violations"])
        print(f"- invariant {row['category']}: {verdict}")


def _print_data_location(
    st: CliState, data_dir: Path | None, keep: Path | None, report: RetrievalReport
) -> None:
    where = (
        "the configured FalkorDB server"
        if st.settings.storage.external
        else str(data_dir or "a temporary directory")
    )
    if keep is None:
        print(f"\ndata: {where}; namespaces deleted (--keep DIR keeps them)")
        return
    first = report.namespaces[0] if report.namespaces else ""
    print(
        f"\ndata kept in {where}: namespaces {', '.join(report.namespaces)} "
        f"(e.g. POLYG_DATA_DIR={keep} polyg stats -g {first})"
    )


DEFAULT_EXTRACTION_SET = Path("packages/polyg-core/tests/remember/data/extraction_notes.json")


@bench_app.command("extraction")
def extraction_command(
    ctx: typer.Context,
    notes: Annotated[
        Path,
        typer.Argument(help="A labelled set of notes (default: the repository's, from its root)."),
    ] = DEFAULT_EXTRACTION_SET,
    json_out: JsonOut = None,
    mistakes: Annotated[
        bool, typer.Option("--mistakes", help="Also list what was missed or wrong, per note.")
    ] = False,
) -> None:
    """Precision and recall of the rule-based extractor on labelled notes, and its targets.

    Needs no database and no model: the extractor reads each note against the set's
    reference time and the names the note lists as already known.
    """
    from polyg_bench.extraction import LabelledSet, evaluate_extraction, load_labelled_set

    st = state(ctx)
    labelled = run(st, lambda: _labelled(notes, load_labelled_set))
    splits = sorted({n.split for n in labelled.notes})
    report = evaluate_extraction(labelled)
    print(f"labelled set {notes}: {report.notes} notes ({', '.join(splits)})\n")
    print("all notes:\n")
    print(markdown(report.table(), ["kind", "labelled", "extracted", "precision", "recall", "f1"]))
    by_split: dict[str, Any] = {}
    for split in splits if len(splits) > 1 else []:
        part = evaluate_extraction(
            LabelledSet(
                reference=labelled.reference, notes=[n for n in labelled.notes if n.split == split]
            )
        )
        by_split[split] = part.data()
        print(f"{split} notes only ({part.notes}):\n")
        print(
            markdown(part.table(), ["kind", "labelled", "extracted", "precision", "recall", "f1"])
        )
        print(markdown(part.seed_table(), ["metric", "target", "actual", "of"]))
    print("entities per kind of note:\n")
    print(markdown(report.note_kind_table(), ["notes", "entities", "precision", "recall"]))
    print("entity extraction accuracy against the targets (all notes):\n")
    print(markdown(report.seed_table(), ["metric", "target", "actual", "of"]))
    print(
        f"notes with nothing to extract left empty: {report.empty_kept_empty}/{report.empty_notes}"
        f"; forbidden words found as entities or concepts: {len(report.forbidden)}"
    )
    for note_id, word, where in report.forbidden:
        print(f"- {note_id}: {word!r} as {where}")
    if mistakes:
        print("\nmistakes per note:\n")
        for note_id, lines in report.mistakes.items():
            print(f"{note_id}:")
            for line in lines:
                print(f"  - {line}")
    _write_json(json_out, {"labelled_set": str(notes), **report.data(), "splits": by_split})


async def _labelled(path: Path, load: Any) -> Any:
    return load(path)


def _quiet_bm25s() -> None:
    """bm25s sets its own logger to DEBUG when imported: one line per index and query."""
    try:
        import bm25s  # noqa: F401  # pyright: ignore[reportUnusedImport]
    except ImportError:  # the baseline raises with the install line when it runs
        return
    logging.getLogger("bm25s").setLevel(logging.WARNING)


async def _retrievers(option: str | None) -> list[str] | None:
    """The --retrievers names, checked before minutes of ingesting (None: all)."""
    from polyg_core.recall.memories import check_retrievers

    if option is None:
        return None
    names = option.split(",")
    check_retrievers(names)
    return names


_USAGE_COLUMNS = ("prompt_tokens", "completion_tokens", "total_tokens", "cost_usd", "llm_calls")


def _usage_markdown(usage: Sequence[dict[str, Any]]) -> str:
    """The usage table with `p50 / mean` in each cell."""
    rows = [
        {
            "call": r["call"],
            "n": r["n"],
            **{c: f"{r[c + '_p50']} / {r[c + '_mean']}" for c in _USAGE_COLUMNS},
        }
        for r in usage
    ]
    return markdown(rows, ["call", "n", *_USAGE_COLUMNS])


async def _load(path: Path) -> Any:
    from polyg_bench.dataset import load_dataset

    return load_dataset(path)


@bench_app.command("profile")
def profile_command(
    ctx: typer.Context,
    entities: Annotated[int, typer.Option(help="Generated namespace size.")] = 1000,
    calls: Annotated[int, typer.Option(help="Profiled recall and remember calls each.")] = 20,
    top: Annotated[int, typer.Option(help="Functions listed per table.")] = 25,
) -> None:
    """cProfile of recall and remember (rule-based path) on a generated namespace."""
    from polyg_bench.generate import generate
    from polyg_bench.profile import profile_operations

    st = state(ctx)

    async def go() -> Any:
        async with bench_env(st) as env:
            ns = "bench_profile"
            gen = await generate(env.store, ns, entities, dimension=env.embedder.dimension)
            memory = env.memory(st.settings)
            try:
                return await profile_operations(memory, gen, calls=calls, top=top)
            finally:
                await env.store.delete_graph(ns)

    for p in run(st, go):
        print(f"## {p.operation} x{p.calls}: by own time\n\n{p.by_tottime}")
        print(f"## {p.operation} x{p.calls}: by cumulative time\n\n{p.by_cumtime}")


@bench_app.command("answers")
def answers_command(
    ctx: typer.Context,
    json_out: JsonOut = None,
    probes: Annotated[
        bool,
        typer.Option(
            "--probes/--no-probes",
            help="Also ask each scenario's probes (questions its data cannot answer, or "
            "answers only in part); none can be right, so their confidence should be low.",
        ),
    ] = True,
) -> None:
    """Ask the seven shipped scenarios' questions: how many answers say what they should,
    and how often each confidence bucket is right (calibration)."""
    from polyg_bench.answers import (
        calibration_table,
        expected_calibration_error,
        kind_table,
        run_scenario_answers,
        scenario_graded,
    )
    from polyg_core.providers.llm import make_llm

    st = state(ctx)

    async def go() -> Any:
        async with bench_env(st) as env:
            memory = env.memory(st.settings, make_llm(st.settings))
            return await run_scenario_answers(memory, probes=probes)

    answers = run(st, go)
    rows = [
        {
            "scenario": a.scenario,
            "kind": a.kind,
            "question": a.question,
            "confidence": a.confidence,
            "right": "yes"
            if a.right
            else "no: "
            + ", ".join(
                [*(f"missing {m!r}" for m in a.missing), *(f"holds {u!r}" for u in a.unwanted)]
            ),
        }
        for a in answers
    ]
    right = sum(1 for a in answers if a.right)
    print(f"machine: {machine()}; LLM: {st.settings.llm_model or 'none (rule-based path)'}\n")
    print(markdown(rows, ["scenario", "kind", "question", "confidence", "right"]))
    print(f"right: {right}/{len(answers)} (every expected text present, no unwanted one)\n")
    kinds = kind_table(answers)
    print(markdown(kinds, ["kind", "n", "right", "mean_confidence", "max_confidence"]))
    calibration = calibration_table(scenario_graded(answers))
    print("calibration: answers bucketed by confidence, how often each bucket is right\n")
    print(markdown(calibration, ["confidence", "n", "right", "accuracy", "mean_confidence"]))
    ece = expected_calibration_error(scenario_graded(answers))
    print(f"expected calibration error (10 buckets): {ece}\n")
    _write_json(
        json_out,
        {
            "machine": machine(),
            "answers": [a.__dict__ for a in answers],
            "kinds": kinds,
            "calibration": calibration,
            "ece": ece,
        },
    )


@bench_app.command("intents")
def intents_command(
    ctx: typer.Context,
    questions: Annotated[
        Path | None,
        typer.Option("--questions", help="A labelled question set (default: the shipped one)."),
    ] = None,
    json_out: JsonOut = None,
) -> None:
    """Accuracy of the rule-based intent classifier on a labelled question set: precision,
    recall and F1 per intent type, and how often entities, timeframes and causal direction
    are read exactly."""
    from polyg_bench.intents import classify_all, load_questions

    st = state(ctx)

    async def go() -> Any:
        return classify_all(load_questions(questions))

    report = run(st, go)
    print(f"{len(report.pairs)} labelled questions, rule-based classifier\n")
    print(markdown(report.type_table(), ["intent", "n", "precision", "recall", "F1"]))
    print(markdown(report.parts_table(), ["part", "n", "accuracy"]))
    mistakes = report.mistakes()
    if mistakes:
        print("first questions read wrongly:\n")
        print(markdown(mistakes, ["question", "wrong"]))
    _write_json(
        json_out,
        {
            "types": report.type_table(),
            "parts": report.parts_table(),
            "mistakes": report.mistakes(limit=1000),
        },
    )


@bench_app.command("updates")
def updates_command(
    ctx: typer.Context,
    cases: Annotated[
        Path | None,
        typer.Option(
            "--cases", help="A JSON Lines file of update cases (default: the shipped --set)."
        ),
    ] = None,
    case_set: Annotated[
        str,
        typer.Option(
            "--set",
            help="A shipped set: ours (written beside the ranking rules) or blind-1 to "
            "blind-36 (each written apart from the rules and the other sets; blind-35 and "
            "blind-36 held out).",
        ),
    ] = "ours",
    size: Annotated[
        list[str] | None,
        typer.Option("--size", help="small (the case's notes only) and/or large (plus filler)."),
    ] = None,
    filler: Annotated[
        int, typer.Option("--filler", min=1, help="Filler memories in a large namespace.")
    ] = 3000,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Only the first N cases.")
    ] = None,
    json_out: JsonOut = None,
) -> None:
    """Knowledge updates: how often recall ranks the current note first, the stale one first,
    and how often the answer holds the current value, in small and large namespaces."""
    from polyg_bench.updates import SIZES, load_cases, run_updates
    from polyg_core.errors import InvalidInput
    from polyg_core.providers.llm import make_llm

    st = state(ctx)
    try:
        chosen = load_cases(cases, case_set)[:limit]
    except InvalidInput as exc:
        typer.echo(f"Error: {exc}", err=True)
        raise typer.Exit(2) from exc
    sizes = list(dict.fromkeys(size or SIZES))

    async def go() -> Any:
        async with bench_env(st) as env:
            memory = env.memory(st.settings, make_llm(st.settings))
            return await run_updates(
                memory,
                chosen,
                sizes=sizes,
                filler=filler,
                progress=lambda m: typer.echo(m, err=True),
            )

    report = run(st, go)
    print(f"machine: {machine()}; LLM: {st.settings.llm_model or 'none (rule-based path)'}")
    print(f"cases: {len(chosen)}; filler in large namespaces: {filler}\n")
    print(
        markdown(
            report.table(),
            ["size", "tense", "n", "current_first", "stale_first", "answer_right"],
        )
    )
    misses = [r for r in report.results if not (r.current_first and r.answer_right)]
    if misses:
        print("misses (first memory / answer):\n")
        for r in misses:
            print(f"- [{r.size}] {r.case}: {r.question}\n  first: {r.first}\n  answer: {r.answer}")
    _write_json(
        json_out,
        {
            "machine": machine(),
            "table": report.table(),
            "results": [r.__dict__ for r in report.results],
        },
    )
