"""Every `polyg` command's help is written for its user: no references to the project's
internal specification documents."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import typer
from polyg_cli.app import app
from typer.testing import CliRunner

INTERNAL = re.compile(r"(?i)seed[ -]?0\d\d|\bseed \d|magma step")


def _commands(command: Any, path: list[str]) -> Iterator[list[str]]:
    """Every command path under a click (or typer's own click) command."""
    yield path
    if not hasattr(command, "list_commands"):
        return
    ctx = command.context_class(command)
    for name in command.list_commands(ctx):
        sub = command.get_command(ctx, name)
        if sub is not None:
            yield from _commands(sub, [*path, name])


def test_no_command_help_mentions_internal_documents() -> None:
    root = typer.main.get_command(app)
    paths = list(_commands(root, []))
    assert ["import"] in paths and ["bench", "extraction"] in paths
    runner = CliRunner()
    for path in paths:
        result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0, (path, result.output)
        found = INTERNAL.search(result.output)
        assert found is None, f"polyg {' '.join(path)} --help mentions {found.group(0)!r}"
