"""`polyg import`: memory formats into a memory namespace, graph formats into a scratch graph."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, cast

import typer
from polyg_core.errors import InvalidInput
from polyg_core.transfer import (
    ImportReport,
    RecordWriter,
    count_lines,
    detect_format,
    is_graph_json,
    iter_records,
)
from polyg_core.transfer.reader import MEMORY_FORMATS
from polyg_core.transfer.records import MAX_LINE_BYTES, RECORD, Item, LineError
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from polyg_cli import render
from polyg_cli.runtime import EXIT_USER, CliState, fail, open_memory, print_json, run, state

logger = logging.getLogger(__name__)


class ImportFormat(StrEnum):
    """Formats `polyg import` reads."""

    auto = "auto"
    jsonl = "jsonl"
    json = "json"
    yaml = "yaml"
    csv = "csv"
    dot = "dot"
    graphml = "graphml"
    cypher = "cypher"


def _progress(st: CliState) -> Progress:
    return Progress(
        TextColumn("[bold]importing"),
        BarColumn(),
        MofNCompleteColumn(),
        TaskProgressColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=st.err,
        transient=True,
    )


def capped(items: Iterator[Item], max_bytes: int = MAX_LINE_BYTES) -> Iterator[Item]:
    """Records of a JSON or YAML document, each held to the JSONL line limit.

    A JSONL line over `max_bytes` is refused; the same record inside a `.json` or
    `.yaml` document is refused too (one 200 MB property would otherwise be stored).
    """
    for position, item in items:
        if not isinstance(item, LineError):
            size = len(RECORD.dump_json(item))
            if size > max_bytes:
                item = LineError(
                    position,
                    f"record is {size} bytes as JSON, over the {max_bytes}-byte limit of one "
                    "record (the same as a JSONL line); split it or shorten its values",
                )
        yield position, item


async def import_memory(
    st: CliState,
    path: Path,
    fmt: str,
    graph: str | None,
    *,
    strict: bool,
    dry_run: bool,
    quiet: bool,
) -> ImportReport:
    """Import a memory file (with a progress bar on stderr unless `quiet`)."""

    def items() -> Iterator[Item]:
        records = iter_records(path, fmt)
        return capped(records) if fmt in ("json", "yaml") else records

    total = count_lines(path) if fmt in ("jsonl", "cypher") else None
    if dry_run:
        writer_ns = graph or st.settings.namespace
        from polyg_core.transfer.writer import validate

        report = ImportReport(namespace=writer_ns, dry_run=True)
        validate(items(), report)
        report.skipped = report.records
        return report
    async with open_memory(st, graph) as memory:
        writer = RecordWriter.of(memory)
        ns = str(memory.namespace)
        if quiet:
            return await writer.run(ns, items, strict=strict)
        with _progress(st) as progress:
            task = progress.add_task("import", total=total, rate="")

            def advance(done: int) -> None:
                elapsed = progress.tasks[task].elapsed or 0.0
                rate = f"{done / elapsed:.0f} rec/s" if elapsed > 0 else ""
                progress.update(task, completed=done, rate=rate)

            return await writer.run(ns, items, strict=strict, on_progress=advance)


async def import_graph_file(
    st: CliState, content: str, fmt: str, graph: str | None, *, dry_run: bool
) -> dict[str, object]:
    """Import a graph format (CSV, DOT, GraphML, polyg JSON) into a scratch graph."""
    from polyg_core.algorithms.formats import parse
    from polyg_core.providers.embeddings import make_embedder
    from polyg_core.scratch.service import GraphEngine
    from polyg_core.storage.store import FalkorStore

    if dry_run:
        parsed = parse(content, fmt)
        return {
            "graph": graph,
            "format": fmt,
            "dry_run": True,
            "nodes": len(parsed.graph.nodes),
            "edges": len(parsed.graph.edges),
            "errors": [{"line": e.line, "message": e.message} for e in parsed.errors],
        }
    store = await FalkorStore(st.settings.storage).connect()
    try:
        embedder = make_embedder(st.settings.embedding_model, api_base=st.settings.llm_base_url)
        engine = GraphEngine(store, embedder, ttl_s=st.settings.scratch_ttl_s)
        out = await engine.io.import_graph(fmt, content, graph=graph)
    finally:
        await store.close()
    return {"graph": graph, "format": fmt, **out.model_dump(mode="json")}


def import_command(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="The file to import.")],
    graph: Annotated[
        str | None, typer.Option("--graph", "-g", help="Target graph (default FALKORDB_GRAPH).")
    ] = None,
    fmt: Annotated[
        ImportFormat, typer.Option("--format", "-f", help="Input format (auto: from the suffix).")
    ] = ImportFormat.auto,
    strict: Annotated[
        bool, typer.Option(help="Validate the whole file first; any bad record: write nothing.")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Validate only; write nothing.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Bulk-load a file into a memory namespace (jsonl, json, yaml, cypher) or a scratch
    graph (csv, dot, graphml, nodes-and-edges json). Re-importing a file creates no duplicates."""
    st = state(ctx)
    if not file.is_file():
        fail(st, f"{file} does not exist or is not a file; give the path of the file to import")
    try:
        kind = detect_format(file, fmt.value)
    except InvalidInput as exc:
        fail(st, str(exc))
    graph_json = kind == "json" and is_graph_json(file)
    if kind in MEMORY_FORMATS and not graph_json:
        report = run(
            st,
            lambda: import_memory(
                st, file, kind, graph, strict=strict, dry_run=dry_run, quiet=as_json
            ),
        )
        if as_json:
            print_json(report.to_dict())
        else:
            render.import_report(st.out, report, file.name)
        # Any failed record is a failed import for a script checking the exit code,
        # even when the other records were written.
        if report.aborted or report.errors:
            raise typer.Exit(EXIT_USER)
        return
    if graph is None:
        fail(st, f"{kind} files go into a scratch graph; name it with --graph NAME")
    try:
        content = file.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        fail(st, f"{file} is not UTF-8 text ({exc})")
    result = run(st, lambda: import_graph_file(st, content, kind, graph, dry_run=dry_run))
    if as_json:
        print_json(result)
        return
    if dry_run:
        st.out.print(
            f"{file.name}: {result['nodes']} nodes, {result['edges']} edges "
            f"(dry run, nothing written)"
        )
        return
    st.out.print(
        f"Imported {file.name} into scratch graph {graph!r}: "
        f"{result['nodes_added']} nodes added ({result['nodes_existing']} existing), "
        f"{result['edges_added']} edges added ({result['edges_existing']} existing)"
    )
    problems = _line_problems(result.get("unparseable"))
    if problems:
        st.out.print(f"[yellow]{len(problems)} lines could not be read:[/]")
        for p in problems[:20]:
            st.out.print(f"  line {p.get('line')}: {p.get('message')}", highlight=False)


def _line_problems(value: object) -> list[dict[str, Any]]:
    """The import's unreadable lines ({line, message} each), from its JSON-shaped answer."""
    if not isinstance(value, list):
        return []
    return [cast(dict[str, Any], p) for p in cast(list[object], value) if isinstance(p, dict)]
