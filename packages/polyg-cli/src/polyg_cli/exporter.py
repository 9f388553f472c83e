"""`polyg export`: a memory namespace (or scratch graph) as JSONL, JSON, Cypher or a graph format.

JSONL, JSON and Cypher are streamed page by page (any size, lossless, re-importable);
GraphML, DOT, CSV and Mermaid go through the graph engine (graph view, size-limited).
"""

from __future__ import annotations

import sys
from contextlib import nullcontext
from enum import StrEnum
from pathlib import Path
from typing import IO, Annotated

import typer
from polyg_core.transfer import iter_export, write_json, write_jsonl
from polyg_core.transfer.cypher_dump import write_cypher

from polyg_cli.runtime import CliState, run, state


class ExportFormat(StrEnum):
    """Formats `polyg export` writes."""

    jsonl = "jsonl"
    json = "json"
    cypher = "cypher"
    graphml = "graphml"
    dot = "dot"
    csv = "csv"
    mermaid = "mermaid"


STREAMED = (ExportFormat.jsonl, ExportFormat.json, ExportFormat.cypher)


async def export_to(st: CliState, fmt: ExportFormat, graph: str, out: IO[str]) -> int:
    """Write a graph to `out`; the number of records (or nodes) written."""
    from polyg_core.storage.store import FalkorStore

    store = await FalkorStore(st.settings.storage).connect()
    try:
        if graph not in await store.list_graphs():
            from polyg_core.errors import InvalidInput

            raise InvalidInput(f"there is no graph {graph!r}; see `polyg graphs` for the names")
        if fmt is ExportFormat.cypher:
            return await write_cypher(store, graph, out)
        if fmt in STREAMED:
            records = iter_export(store, graph)
            if fmt is ExportFormat.jsonl:
                return await write_jsonl(records, out)
            return await write_json(records, out, graph)
        from polyg_core.scratch.service import GraphEngine

        engine = GraphEngine(store, None)
        result = await engine.io.export_graph(fmt.value, graph=graph)
        out.write(result.content)
        if not result.content.endswith("\n"):
            out.write("\n")
        return result.node_count
    finally:
        await store.close()


def export_command(
    ctx: typer.Context,
    fmt: Annotated[ExportFormat, typer.Option("--format", "-f", help="Output format.")],
    graph: Annotated[
        str | None, typer.Option("--graph", "-g", help="Graph to export (default FALKORDB_GRAPH).")
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file (default stdout).")
    ] = None,
) -> None:
    """Export a graph. jsonl/json/cypher are lossless and re-importable with `polyg import`."""
    st = state(ctx)
    name = graph or st.settings.namespace
    target = output.open("w", encoding="utf-8") if output else nullcontext(sys.stdout)
    with target as out:
        n = run(st, lambda: export_to(st, fmt, name, out))
    if output:
        st.err.print(f"wrote {n} {'records' if fmt in STREAMED else 'nodes'} to {output}")
