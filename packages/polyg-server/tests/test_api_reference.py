from __future__ import annotations

import functools
from pathlib import Path
from types import ModuleType

import pytest
from polyg_core.testing.scripts import load_script

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[3]


@functools.cache
def generator() -> ModuleType:
    return load_script(ROOT / "scripts" / "gen_api_reference.py")


async def test_committed_api_reference_matches_the_tool_schemas() -> None:
    text = await generator().render()
    committed = (ROOT / "docs" / "api-reference.md").read_text(encoding="utf-8")
    assert committed == text, (
        "docs/api-reference.md is stale: run uv run python scripts/gen_api_reference.py"
    )
    for name in ("recall", "semantic_search", "explain_why", "clear_graph", "add_node"):
        assert f"### `{name}`" in committed
