"""Fixtures of the CLI tests: the CLI's environment pointed at the session's embedded
FalkorDB, and a namespace of the test's own."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from polyg_cli.app import app
from polyg_core.storage.embedded import EmbeddedFalkorDB
from polyg_core.testing.fixtures import *  # noqa: F403  # pyright: ignore[reportWildcardImportFromLibrary]
from typer.testing import CliRunner


@pytest.fixture
def env(falkordb_server: EmbeddedFalkorDB) -> dict[str, str]:
    """Environment that points the CLI at the session's embedded server, with no model."""
    return {"POLYG_DATA_DIR": str(falkordb_server.data_dir), "LLM_MODEL": "", "NO_COLOR": "1"}


@pytest.fixture
def graph(env: dict[str, str]) -> Iterator[str]:
    """A namespace of the test's own, deleted afterwards."""
    name = f"cli_{uuid.uuid4().hex[:10]}"
    yield name
    CliRunner().invoke(app, ["graphs", "delete", name, "--yes"], env=env)
