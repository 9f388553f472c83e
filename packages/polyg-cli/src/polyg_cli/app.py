"""The `polyg` command: import, export, stats, graphs, recall, remember, serve, doctor, demo,
backup, restore.

Exit codes: 0 ok, 1 user error (bad input, unknown graph; the message says how to
fix it), 2 environment error (FalkorDB or the embedding model unavailable).
"""

from __future__ import annotations

import logging
from importlib.metadata import PackageNotFoundError, version
from typing import Annotated

import typer
from polyg_core.config import load_settings
from rich.console import Console

from polyg_cli.admin import graphs_command, stats_command
from polyg_cli.ask import recall_command, remember_command
from polyg_cli.backup_commands import backup_command, restore_command
from polyg_cli.bench import bench_app
from polyg_cli.demo import demo_command
from polyg_cli.doctor import doctor_command
from polyg_cli.exporter import export_command
from polyg_cli.importer import import_command
from polyg_cli.jobs import jobs_app, worker_command
from polyg_cli.runtime import CliState, state

logger = logging.getLogger(__name__)

app = typer.Typer(
    name="polyg",
    help="Multi-graph memory for AI agents: import, export, inspect, ask, serve.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
)


def _version() -> str:
    try:
        return version("polyg-cli")
    except PackageNotFoundError:
        return "unknown"


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"polyg {_version()}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Log details to stderr.")
    ] = False,
    _version_flag: Annotated[
        bool,
        typer.Option(
            "--version", callback=_show_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Read the settings once (environment, FALKORDB_*, EMBEDDING_MODEL, LLM_MODEL, ...)."""
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    ctx.obj = CliState(settings=load_settings(), out=Console(), err=Console(stderr=True))


app.command("import")(import_command)
app.command("export")(export_command)
app.command("stats")(stats_command)
app.command("graphs")(graphs_command)
app.command("recall")(recall_command)
app.command("remember")(remember_command)
app.command("doctor")(doctor_command)
app.command("demo")(demo_command)
app.command("backup")(backup_command)
app.command("restore")(restore_command)
app.add_typer(jobs_app)
app.command("worker")(worker_command)
app.add_typer(bench_app, name="bench")


@app.command("serve")
def serve_command(
    http: Annotated[bool, typer.Option("--http", help="Streamable HTTP instead of stdio.")] = False,
) -> None:
    """Run the MCP server (the same as `polyg-mcp`)."""
    from polyg_server.main import main as server_main

    server_main(["--http"] if http else [])


@app.command("ui")
def ui_command(
    ctx: typer.Context,
    port: Annotated[
        int | None, typer.Option("--port", help="Port (default: POLYG_PORT or 3000).")
    ] = None,
) -> None:
    """Serve the web explorer on 127.0.0.1 (the HTTP server) and print its address."""
    from polyg_server.main import main as server_main

    chosen = state(ctx).settings.port if port is None else port
    typer.echo(f"polyg explorer: http://127.0.0.1:{chosen}/ui  (Ctrl+C stops it)")
    server_main(["--http", "--host", "127.0.0.1", "--port", str(chosen)])


def main() -> None:
    """The `polyg` console script."""
    app()
