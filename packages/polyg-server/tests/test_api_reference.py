from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[3]


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "gen_api_reference", ROOT / "scripts" / "gen_api_reference.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def test_committed_api_reference_matches_the_tool_schemas() -> None:
    text = await generator().render()
    committed = (ROOT / "docs" / "api-reference.md").read_text(encoding="utf-8")
    assert committed == text, (
        "docs/api-reference.md is stale: run uv run python scripts/gen_api_reference.py"
    )
    for name in ("recall", "semantic_search", "explain_why", "clear_graph", "add_node"):
        assert f"### `{name}`" in committed
