"""`polyg stats` and `polyg graphs`."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

import typer
from rich.table import Table

from polyg_cli import render
from polyg_cli.runtime import fail, print_json, run, show, state


class GraphsAction(StrEnum):
    """What `polyg graphs` does."""

    list = "list"
    delete = "delete"


async def _store(st: Any) -> Any:
    from polyg_core.storage.store import FalkorStore

    return await FalkorStore(st.settings.storage).connect()


def stats_command(
    ctx: typer.Context,
    graph: Annotated[
        str | None, typer.Option("--graph", "-g", help="Graph (default FALKORDB_GRAPH).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """Node and edge counts per graph and cross-link type."""
    st = state(ctx)
    name = graph or st.settings.namespace

    async def go() -> Any:
        from polyg_core.errors import InvalidInput
        from polyg_core.graphs.stats import graph_statistics

        store = await _store(st)
        try:
            if name not in await store.list_graphs():
                raise InvalidInput(f"there is no graph {name!r}; see `polyg graphs` for the names")
            return await graph_statistics(store, name)
        finally:
            await store.close()

    show(st, run(st, go), as_json, render.statistics)


def graphs_command(
    ctx: typer.Context,
    action: Annotated[
        GraphsAction, typer.Argument(help="list, or delete NAME")
    ] = GraphsAction.list,
    name: Annotated[str | None, typer.Argument(help="The graph to delete.")] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Delete without asking.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """List the graphs (with their kind and size), or delete one."""
    st = state(ctx)
    if action is GraphsAction.delete:
        if not name:
            fail(st, "name the graph to delete: polyg graphs delete NAME")
        if not yes and not typer.confirm(f"Delete graph {name!r} and everything in it?"):
            raise typer.Exit(1)

        async def delete() -> bool:
            store = await _store(st)
            try:
                return bool(await store.delete_graph(name))
            finally:
                await store.close()

        deleted = run(st, delete)
        if not deleted:
            fail(st, f"there is no graph {name!r}; see `polyg graphs` for the names")
        if as_json:
            print_json({"deleted": name})
        else:
            st.out.print(f"deleted graph {name!r}")
        return

    async def listing() -> list[dict[str, Any]]:
        store = await _store(st)
        try:
            out: list[dict[str, Any]] = []
            for g in await store.list_graphs():
                meta = await store.metadata(g)
                res = await store.query(g, "MATCH (n) RETURN count(n)", read_only=True)
                out.append(
                    {
                        "name": g,
                        "kind": meta.get("kind", "unknown"),
                        "nodes": int(res.scalar(0)),
                        "embedding_model": meta.get("embedding_model"),
                    }
                )
            return out
        finally:
            await store.close()

    graphs = run(st, listing)
    if as_json:
        print_json(graphs)
        return
    table = Table(title="graphs", title_justify="left")
    for col in ("name", "kind", "nodes", "embedding model"):
        table.add_column(col, justify="right" if col == "nodes" else "left")
    for g in graphs:
        table.add_row(g["name"], str(g["kind"]), str(g["nodes"]), str(g["embedding_model"] or ""))
    st.out.print(table)
