"""`polyg --help` lists every command without importing any, and flags read as flags."""

from __future__ import annotations

import subprocess
import sys

import pytest
from polyg_cli.app import LAZY_COMMANDS, LazyGroup, app
from typer.main import get_command
from typer.testing import CliRunner

EVERY_COMMAND = [*LAZY_COMMANDS, "serve", "ui"]


def _help(*args: str) -> str:
    result = CliRunner().invoke(app, [*args, "--help"])
    assert result.exit_code == 0, result.output
    return result.output


def test_the_root_help_lists_every_command_once() -> None:
    text = _help()
    rows = text.split("Commands:", 1)[1].splitlines()
    listed = [row.split()[0] for row in rows if row.startswith("  ") and not row.startswith("   ")]
    for name in EVERY_COMMAND:
        assert listed.count(name) == 1, (name, text)


def test_the_root_help_imports_no_command_module_and_no_engine() -> None:
    code = (
        "import sys\n"
        "sys.argv = ['polyg', '--help']\n"
        "from polyg_cli.app import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('polyg_core', 'polyg_shared', 'polyg_server', 'redis', 'numpy', 'rich') "
        "or m in ('polyg_cli.importer', 'polyg_cli.bench', 'polyg_cli.runtime'))\n"
        "print('HEAVY', heavy)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "Commands:" in done.stdout
    assert "HEAVY []" in done.stdout, done.stdout


@pytest.mark.parametrize("name", EVERY_COMMAND)
def test_a_command_help_shows_flags_without_a_type(name: str) -> None:
    text = _help(name)
    assert "<bool>" not in text, text
    assert "--help  " in text or "--help\n" in text


def test_flags_are_flags_in_the_recall_help() -> None:
    text = _help("recall")
    assert "--json " in text and "--json <" not in text
    assert "--limit <int range>" in text


def test_a_loaded_command_keeps_the_short_help_the_root_lists() -> None:
    group = get_command(app)
    assert isinstance(group, LazyGroup)
    ctx = group.make_context("polyg", ["recall", "x"], resilient_parsing=True)
    for name, (_, _, short_help) in LAZY_COMMANDS.items():
        command = group.get_command(ctx, name)
        assert command is not None and command.short_help == short_help, name


def test_an_unknown_command_is_refused_with_the_list_to_look_at() -> None:
    result = CliRunner().invoke(app, ["nope"])
    assert result.exit_code == 2
    assert "No such command 'nope'" in result.output
    assert "polyg --help" in result.output
