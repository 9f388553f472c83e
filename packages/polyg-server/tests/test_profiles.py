"""What a server offers by default, what each profile costs in tokens, and what the tool
descriptions say, read through a real MCP client as a model would get them."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from types import ModuleType

import anyio
import pytest
from mcp import Client
from mcp_types import Tool
from polyg_core.config import Settings
from polyg_core.testing.scripts import load_script
from polyg_server.app import create_server
from polyg_server.context import ContextOpening
from polyg_server.registry import ALL, PROFILES

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[3]
MAX_DEFAULT_TOOLS = 12
MAX_DEFAULT_TOKENS = 4_000
MEMORY_JOB = {
    "recall",
    "remember",
    "get_entity",
    "query_facts",
    "query_timeline",
    "explain_why",
    "update_entity",
    "invalidate_fact",
    "delete_node",
    "get_job",
}
JARGON = re.compile(r"(?i)seed[ -]?0\d\d|\bseed \d|magma")


@functools.cache
def generator() -> ModuleType:
    return load_script(ROOT / "scripts" / "gen_api_reference.py")


async def _listed(settings: Settings) -> list[Tool]:
    async with Client(create_server(ContextOpening(settings))) as client:
        with anyio.fail_after(20):
            return (await client.list_tools()).tools


async def test_the_default_server_offers_the_memory_job_in_12_tools_and_4k_tokens() -> None:
    tools = await _listed(Settings())
    tokens = generator().tools_list_tokens(tools)
    assert {t.name for t in tools} == MEMORY_JOB
    assert len(tools) <= MAX_DEFAULT_TOOLS
    assert tokens <= MAX_DEFAULT_TOKENS, f"the default tools/list is {tokens} tokens"
    assert all(t.output_schema is None for t in tools)
    assert all(t.description and len(t.description) > 60 for t in tools)


async def test_output_schemas_are_advertised_when_asked() -> None:
    tools = await _listed(Settings(output_schemas=True))
    assert all(t.output_schema is not None for t in tools)
    recall = next(t for t in tools if t.name == "recall")
    assert recall.output_schema is not None
    assert {"answer", "memories"} <= set(recall.output_schema["properties"])


async def test_the_documented_cost_of_every_profile_is_what_the_client_gets() -> None:
    gen = generator()
    documented = (ROOT / "docs" / "api-reference.md").read_text(encoding="utf-8")
    for profile in (*PROFILES, ALL):
        plain = await _listed(Settings(tools=profile))
        typed = await _listed(Settings(tools=profile, output_schemas=True))
        count, tokens, with_schemas = (
            len(plain),
            gen.tools_list_tokens(plain),
            gen.tools_list_tokens(typed),
        )
        row = next(line for line in documented.splitlines() if line.startswith(f"| `{profile}`"))
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[2:] == [str(count), f"{tokens:,}", f"{with_schemas:,}"], (
            f"docs/api-reference.md has stale costs for {profile}: "
            "run uv run python scripts/gen_api_reference.py"
        )


async def test_profiles_and_tool_names_combine_and_every_tool_is_in_one_profile() -> None:
    everything = {t.name for t in await _listed(Settings(tools=ALL))}
    by_profile = {p: {t.name for t in await _listed(Settings(tools=p))} for p in PROFILES}
    assert set().union(*by_profile.values()) == everything
    assert sum(len(names) for names in by_profile.values()) == len(everything)
    mixed = {t.name for t in await _listed(Settings(tools="memory, add_fact,scratch"))}
    assert mixed == MEMORY_JOB | {"add_fact"} | by_profile["scratch"]
    assert {t.name for t in await _listed(Settings(tools="recall,remember"))} == {
        "recall",
        "remember",
    }
    assert {t.name for t in await _listed(Settings(tools="magma"))} == by_profile["retrieval"]


async def test_descriptions_speak_to_the_model_without_internal_references() -> None:
    for tool in await _listed(Settings(tools=ALL, output_schemas=True)):
        text = json.dumps(tool.model_dump(by_alias=True, exclude_none=True, mode="json"))
        found = JARGON.search(text)
        assert found is None, f"{tool.name} mentions {found.group(0)!r}"
