"""The tools' JSON schemas kept on disk between starts: read back only while nothing they
depend on has changed, and never needed for the server to start."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from polyg_core.config import Settings
from polyg_server.app import create_server
from polyg_server.context import ContextOpening
from polyg_server.main import schema_cache_file
from polyg_server.registry import list_tool_specs

pytestmark = pytest.mark.anyio


async def _listed(cache: Path | None) -> list[dict[str, Any]]:
    settings = Settings(tools="all", output_schemas=True)
    return await list_tool_specs(create_server(ContextOpening(settings), schema_cache=cache))


async def test_a_second_start_lists_the_schemas_the_first_generated(tmp_path: Path) -> None:
    cache = tmp_path / "polyg" / "tool-schemas.json"
    generated = await _listed(None)
    first = await _listed(cache)
    written = cache.read_bytes()
    second = await _listed(cache)
    assert first == generated and second == generated
    assert cache.read_bytes() == written  # read back, not written again
    stored = json.loads(written)
    assert len(stored["schemas"]) >= len({t["name"] for t in generated})


async def test_the_stored_schemas_are_what_the_server_lists_while_the_key_holds(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "tool-schemas.json"
    await _listed(cache)
    stored = json.loads(cache.read_text())
    name = next(k for k in stored["schemas"] if k.endswith("AddEntityInput:validation"))
    stored["schemas"][name]["properties"]["name"]["description"] = "changed on disk"
    cache.write_text(json.dumps(stored))
    listed = {t["name"]: t for t in await _listed(cache)}
    assert listed["add_entity"]["inputSchema"]["properties"]["name"]["description"] == (
        "changed on disk"
    )

    stored["key"] = "another source"
    cache.write_text(json.dumps(stored))
    listed = {t["name"]: t for t in await _listed(cache)}
    name_schema = listed["add_entity"]["inputSchema"]["properties"]["name"]
    assert name_schema.get("description") != "changed on disk"
    assert json.loads(cache.read_text())["key"] != "another source"  # regenerated, saved


async def test_an_unusable_cache_file_only_costs_the_generation(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    (tmp_path / "broken.json").write_text("{not json")
    generated = await _listed(None)
    assert await _listed(blocker / "tool-schemas.json") == generated
    assert await _listed(tmp_path / "broken.json") == generated


def test_the_cache_file_follows_xdg_cache_home(tmp_path: Path) -> None:
    assert schema_cache_file({"XDG_CACHE_HOME": str(tmp_path)}) == (
        tmp_path / "polyg" / "tool-schemas.json"
    )
    assert schema_cache_file({}) == Path.home() / ".cache" / "polyg" / "tool-schemas.json"
