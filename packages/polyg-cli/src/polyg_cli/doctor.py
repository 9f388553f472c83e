"""`polyg doctor`: is FalkorDB reachable, do its vector indexes answer, does the embedding
model load, is an LLM configured."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from polyg_cli.runtime import EXIT_ENV, CliState, print_json, run, state

if TYPE_CHECKING:
    from polyg_core.storage.embedded import EmbeddedFalkorDB
    from polyg_core.storage.store import FalkorStore


@dataclass
class Check:
    """One check: its name, whether it passed (None: optional and absent), details, the fix."""

    name: str
    ok: bool | None
    detail: str
    fix: str = ""


async def _falkordb(st: CliState, repair: bool) -> list[Check]:
    from polyg_core.storage.store import FalkorStore

    store = FalkorStore(st.settings.storage)
    t0 = time.perf_counter()
    try:
        await store.connect()
        graphs = await store.list_graphs()
        ms = (time.perf_counter() - t0) * 1000
        up = Check("FalkorDB", True, f"{store.where}, {len(graphs)} graphs, {ms:.0f} ms")
        return [up, await _vector_indexes(store, repair)]
    except Exception as exc:  # report every failure: this is a diagnostic
        fix = (
            "check FALKORDB_HOST/FALKORDB_PORT/FALKORDB_PASSWORD, or unset them to use the "
            "embedded server"
            if st.settings.storage.external
            else "install the embedded server with `pip install 'polyg-core[embedded]'` "
            "(Linux x86_64/aarch64, macOS arm64) or set FALKORDB_HOST to a running FalkorDB"
        )
        return [Check("FalkorDB", False, f"{type(exc).__name__}: {exc}", fix)]
    finally:
        await store.close()


async def _vector_indexes(store: FalkorStore, repair: bool) -> Check:
    """Probe every vector index with a k-NN query of known size (rebuild with `repair`)."""
    from polyg_core.storage.index_check import PROBE_K

    t0 = time.perf_counter()
    try:
        checks = await store.check_vector_indexes(repair=repair)
    except Exception as exc:  # report every failure: this is a diagnostic
        return Check("vector indexes", False, f"{type(exc).__name__}: {exc}")
    ms = (time.perf_counter() - t0) * 1000
    graphs = len({c.graph for c in checks})
    lines = [f"{len(checks)} in {graphs} graphs probed in {ms:.0f} ms (k-NN, k up to {PROBE_K})"]
    lines += [c.describe() for c in checks if not c.healthy]
    if store.embedded is not None:
        lines += _last_start_check(store.embedded)
    if all(c.ok for c in checks):
        return Check("vector indexes", True, "\n".join(lines))
    fix = (
        "the rebuild did not help; see the FalkorDB log, then export and re-import the graph"
        if repair
        else "run `polyg doctor --repair` to rebuild them (a few seconds per 10,000 vectors)"
    )
    return Check("vector indexes", False, "\n".join(lines), fix)


def _last_start_check(embedded: EmbeddedFalkorDB) -> list[str]:
    """What the embedded server's last start found after replaying its append-only file."""
    record = embedded.last_index_check()
    if not record:
        return []
    indexes = [i for i in record.get("indexes", []) if i.get("found") != i.get("expected")]
    when = record.get("checked_at", "?")
    if record.get("error"):
        return [f"check after the replay at {when} failed: {record['error']}"]
    if not indexes:
        return [f"after the replay at {when}: all vector indexes answered in full"]
    rebuilt = ", ".join(
        f"{i['label']} in {i['graph']!r} ({i['found']} of {i['expected']} -> "
        f"{i.get('found_after')})"
        for i in indexes
    )
    return [f"rebuilt after the replay at {when}: {rebuilt}"]


def _aof(st: CliState, repair: bool) -> Check | None:
    """Check the embedded server's append-only file (repair: copy it aside, then cut the
    torn or corrupt tail). Runs before the store starts the server on it."""
    if st.settings.storage.external:
        return None
    from polyg_core.storage import aof_check
    from polyg_core.storage.embedded import EmbeddedFalkorDB, default_data_dir, server_binaries

    embedded = EmbeddedFalkorDB(st.settings.storage.data_dir or default_data_dir())
    try:
        server, _ = server_binaries()
        report = (aof_check.repair if repair else aof_check.check)(embedded.db_dir, server)
    except Exception as exc:  # report every failure: this is a diagnostic
        return Check("append-only file", False, f"{type(exc).__name__}: {exc}")
    lines = [report.describe()]
    lines += _truncated_loads(embedded)
    if report.backup is not None:
        after = aof_check.check(embedded.db_dir, server)
        lines = [
            f"repaired: cut {report.describe()}",
            f"the original is kept in {report.backup}",
            f"now: {after.describe()}",
        ]
        return Check("append-only file", after.ok and not after.damaged, "\n".join(lines))
    if report.ok and not report.damaged:
        return Check("append-only file", True, "\n".join(lines))
    return Check(
        "append-only file",
        False,
        "\n".join(lines),
        "stop every polyg process on this data dir, then run `polyg doctor --repair` "
        "(it keeps a copy of the file and says what it cut)",
    )


def _truncated_loads(embedded: EmbeddedFalkorDB) -> list[str]:
    """Starts that loaded a torn AOF and dropped its tail (redis logs each one)."""
    try:
        log = embedded.log_file.read_text(errors="replace").splitlines()
    except OSError:
        return []
    hits = [line.strip() for line in log if "AOF loaded anyway" in line]
    if not hits:
        return []
    return [f"{len(hits)} start(s) loaded a torn file and dropped its last command: {hits[-1]}"]


async def _embeddings(st: CliState) -> Check:
    model = st.settings.embedding_model
    t0 = time.perf_counter()
    try:
        from polyg_core.providers.embeddings import make_embedder

        embedder = make_embedder(model, api_base=st.settings.llm_base_url)
        vec = await embedder.embed(["polyg doctor"])
        ms = (time.perf_counter() - t0) * 1000
        return Check(
            "embeddings", True, f"{embedder.model_name}, dimension {vec.shape[1]}, {ms:.0f} ms"
        )
    except Exception as exc:  # report every failure: this is a diagnostic
        fix = (
            "install the local model with `pip install 'polyg-core[local]'`"
            if model.startswith("local/")
            else f"check EMBEDDING_MODEL={model} and its provider's API key"
        )
        return Check("embeddings", False, f"{type(exc).__name__}: {exc}", fix)


def _llm(st: CliState) -> Check:
    model = st.settings.llm_model
    if not model:
        return Check(
            "LLM",
            None,
            "not configured: recall and remember use the rule-based classifier, extractor "
            "and extractive answers (results say degraded: true)",
            "set LLM_MODEL (e.g. openai/gpt-4o-mini with OPENAI_API_KEY, or ollama/llama3.1)",
        )
    base = f" at {st.settings.llm_base_url}" if st.settings.llm_base_url else ""
    return Check("LLM", True, f"{model}{base} (configured; not called by doctor)")


def doctor_command(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
    repair: Annotated[
        bool,
        typer.Option(
            "--repair",
            help="Cut a torn or corrupt append-only file at its last whole command (after "
            "copying it aside) and rebuild the vector indexes whose k-NN probe answers short.",
        ),
    ] = False,
) -> None:
    """Check FalkorDB and its vector indexes, the embedding model and the LLM configuration;
    say what is missing."""
    st = state(ctx)

    async def go() -> list[Check]:
        aof = _aof(st, repair)
        if aof is not None and not aof.ok:
            # Starting the server now would load a torn file and drop its tail for good.
            held = Check("FalkorDB", False, "not started: its append-only file is damaged")
            return [aof, held, await _embeddings(st), _llm(st)]
        first = [aof] if aof is not None else []
        return [*first, *await _falkordb(st, repair), await _embeddings(st), _llm(st)]

    checks = run(st, go)
    failed = any(c.ok is False for c in checks)
    if as_json:
        data: dict[str, Any] = {"ok": not failed, "checks": [asdict(c) for c in checks]}
        print_json(data)
    else:
        table = Table(title="polyg doctor", title_justify="left")
        table.add_column("check")
        table.add_column("status")
        table.add_column("detail")
        for c in checks:
            status = (
                "[green]ok[/]" if c.ok else "[red]missing[/]" if c.ok is False else "[yellow]off[/]"
            )
            detail = c.detail + (f"\n[dim]fix: {c.fix}[/]" if c.fix and not c.ok else "")
            table.add_row(c.name, status, detail)
        st.out.print(table)
    if failed:
        raise typer.Exit(EXIT_ENV)
