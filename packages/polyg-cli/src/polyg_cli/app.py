"""The `polyg` command: import, export, stats, graphs, recall, remember, serve, doctor, demo,
backup, restore.

Exit codes: 0 ok, 1 user error (bad input, unknown graph; the message says how to
fix it), 2 environment error (FalkorDB or the embedding model unavailable).
"""

from __future__ import annotations

import importlib
import logging
import os
from typing import Annotated, Any

import typer
from typer.core import TyperGroup
from typer.main import get_command_from_info, get_group
from typer.models import CommandInfo

logger = logging.getLogger(__name__)

# Each command lives in its own module, which imports polyg_core, the Redis client, numpy
# and rich: over two seconds on a small machine. `polyg --help` and a mistyped command need
# none of it, so a command's module is imported only when that command runs (or shows its
# own help). name: (module, attribute: a command function or a Typer group, short help).
LAZY_COMMANDS: dict[str, tuple[str, str, str]] = {
    "import": (
        "polyg_cli.importer",
        "import_command",
        "Bulk-load a file into a memory namespace or a scratch graph.",
    ),
    "export": (
        "polyg_cli.exporter",
        "export_command",
        "Export a graph (jsonl, json, cypher, ...).",
    ),
    "stats": ("polyg_cli.admin", "stats_command", "Node and edge counts per graph."),
    "graphs": ("polyg_cli.admin", "graphs_command", "List the graphs, or delete one."),
    "recall": ("polyg_cli.ask", "recall_command", "Answer a question from memory."),
    "remember": ("polyg_cli.ask", "remember_command", "Remember a text."),
    "doctor": (
        "polyg_cli.doctor",
        "doctor_command",
        "Check FalkorDB, the embedding model and the LLM configuration.",
    ),
    "demo": ("polyg_cli.demo", "demo_command", "Load two scenarios and answer questions."),
    "backup": (
        "polyg_cli.backup_commands",
        "backup_command",
        "Take a consistent backup of the running FalkorDB into a directory.",
    ),
    "restore": (
        "polyg_cli.backup_commands",
        "restore_command",
        "Restore a backup into an empty data dir.",
    ),
    "worker": ("polyg_cli.jobs", "worker_command", "Run a worker process for queued jobs."),
    "jobs": ("polyg_cli.jobs", "jobs_app", "Background jobs: list, watch, show, cancel, retry."),
    "bench": (
        "polyg_cli.bench",
        "bench_app",
        "Benchmarks: latency, load, peers, retrieval and extraction quality.",
    ),
}
"""The commands loaded on first use, in the order `polyg --help` lists them."""


class LazyGroup(TyperGroup):
    """The root group: lists every command without importing it, loads one when it runs."""

    def list_commands(self, ctx: Any) -> list[str]:
        eager = [name for name in super().list_commands(ctx) if name not in LAZY_COMMANDS]
        return [*LAZY_COMMANDS, *eager]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name in LAZY_COMMANDS and cmd_name not in self.commands:
            self.commands[cmd_name] = load_command(cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        rows = [(name, LAZY_COMMANDS[name][2]) for name in LAZY_COMMANDS]
        for name in super().list_commands(ctx):
            command = self.commands[name]
            if name not in LAZY_COMMANDS and not command.hidden:
                rows.append((name, command.get_short_help_str(formatter.width)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def load_command(name: str) -> Any:
    """Import the module of a lazily listed command and build its click command."""
    module_name, attribute, short_help = LAZY_COMMANDS[name]
    target = getattr(importlib.import_module(module_name), attribute)
    if isinstance(target, typer.Typer):
        command: Any = get_group(target)
        command.name = name
    else:
        info = CommandInfo(name=name, callback=target)
        command = get_command_from_info(info, pretty_exceptions_short=True, rich_markup_mode=None)
    command.short_help = short_help
    return command


app = typer.Typer(
    name="polyg",
    cls=LazyGroup,
    help="Multi-graph memory for AI agents: import, export, inspect, ask, serve.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    # Plain click help: flags read as flags (`--json`), not as `--json <bool>`, and no
    # rich import before a command runs.
    rich_markup_mode=None,
)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

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
    from polyg_core.config import settings_from_env
    from polyg_core.errors import InvalidInput
    from rich.console import Console

    from polyg_cli.runtime import CliState

    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    err = Console(stderr=True)
    try:
        settings = settings_from_env(os.environ)
    except InvalidInput as exc:
        err.print(f"polyg: {exc}", style="red", markup=False, highlight=False)
        raise typer.Exit(2) from None
    ctx.obj = CliState(settings=settings, out=Console(), err=err)


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

    from polyg_cli.runtime import state

    chosen = state(ctx).settings.port if port is None else port
    typer.echo(f"polyg explorer: http://127.0.0.1:{chosen}/ui  (Ctrl+C stops it)")
    server_main(["--http", "--host", "127.0.0.1", "--port", str(chosen)])


def main() -> None:
    """The `polyg` console script."""
    app()
