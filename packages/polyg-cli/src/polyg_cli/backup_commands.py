"""`polyg backup DIR` and `polyg restore DIR`: consistent snapshots of the embedded FalkorDB."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from polyg_cli.runtime import EXIT_USER, CliState, fail, print_json, run, state


def _data_dir(st: CliState, verb: str) -> Path:
    if st.settings.storage.external:
        fail(
            st,
            f"`polyg {verb}` works on the embedded FalkorDB (POLYG_DATA_DIR); for an external "
            "server use its own BGSAVE or replication, or `polyg export` per namespace",
            EXIT_USER,
        )
    from polyg_core.storage.embedded import default_data_dir

    return st.settings.storage.data_dir or default_data_dir()


def backup_command(
    ctx: typer.Context,
    dest: Annotated[Path, typer.Argument(help="A new or empty directory for the backup.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """Snapshot every namespace of the data dir into DEST, consistent while writes go on."""
    st = state(ctx)
    data_dir = _data_dir(st, "backup")

    async def go() -> None:
        import anyio
        from polyg_core.storage.backup import backup
        from polyg_core.storage.embedded import EmbeddedFalkorDB

        server = EmbeddedFalkorDB(data_dir)
        try:
            info = await anyio.to_thread.run_sync(lambda: backup(server, dest))
        finally:
            await anyio.to_thread.run_sync(server.stop)
        if as_json:
            print_json({"path": str(dest), "graphs": info.graphs, "bytes": info.bytes})
        else:
            st.out.print(
                f"backed up {len(info.graphs)} graphs ({info.bytes} bytes) from {data_dir} "
                f"to {dest}; restore with `polyg restore {dest}` into an empty POLYG_DATA_DIR"
            )

    run(st, go)


def restore_command(
    ctx: typer.Context,
    src: Annotated[Path, typer.Argument(help="A directory written by `polyg backup`.")],
    graph: Annotated[
        str | None,
        typer.Option(
            "--graph",
            help="Restore only this graph (namespace) of the backup, into a data dir that may "
            "hold others and be in use; the others are left as they are.",
        ),
    ] = None,
    replace: Annotated[
        bool,
        typer.Option(
            "--replace",
            help="With --graph: overwrite that graph when the data dir already has it.",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """Restore a backup into the data dir (POLYG_DATA_DIR): all of it into a data dir with
    no data yet, or one graph (--graph) into any data dir."""
    st = state(ctx)
    data_dir = _data_dir(st, "restore")
    if replace and graph is None:
        fail(st, "--replace goes with --graph NAME: it overwrites that one graph", EXIT_USER)

    async def go() -> None:
        import anyio
        from polyg_core.storage.backup import restore, restore_graph
        from polyg_core.storage.embedded import EmbeddedFalkorDB

        if graph is None:
            info = await anyio.to_thread.run_sync(lambda: restore(data_dir, src))
            graphs = info.graphs
        else:
            name = graph
            server = EmbeddedFalkorDB(data_dir)
            try:
                info = await anyio.to_thread.run_sync(
                    lambda: restore_graph(server, src, name, replace=replace)
                )
            finally:
                await anyio.to_thread.run_sync(server.stop)
            graphs = [graph]
        if as_json:
            print_json({"data_dir": str(data_dir), "graphs": graphs, "bytes": info.bytes})
        else:
            what = f"graph {graph!r}" if graph is not None else f"{len(graphs)} graphs"
            st.out.print(f"restored {what} from {src} (taken {info.created_at}) into {data_dir}")

    run(st, go)
