"""Control characters (NUL at least) are refused in every string argument of every tool,
with the field named, before anything reaches FalkorDB or the job queue."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client
from polyg_core.config import Settings
from polyg_core.errors import InvalidInput
from polyg_core.jobs import JobQueue
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.storage.store import FalkorStore
from polyg_server.app import create_server
from polyg_server.context import JobOptions, ServerContext
from polyg_server.registry import list_tool_specs
from polyg_server.testing import text_of
from polyg_shared.timeutil import parse_timestamp
from polyg_shared.types import control_char_error

pytestmark = pytest.mark.anyio


def _string_fields(schema: dict[str, Any]) -> list[tuple[str, bool]]:
    """Top-level (name, is_list) of the string and list-of-string properties of a schema."""
    out: list[tuple[str, bool]] = []
    for name, prop in schema.get("properties", {}).items():
        options = [prop, *prop.get("anyOf", [])]
        if any(o.get("type") == "string" for o in options):
            out.append((name, False))
        elif any(
            o.get("type") == "array" and o.get("items", {}).get("type") == "string" for o in options
        ):
            out.append((name, True))
    return out


async def test_every_string_argument_of_every_tool_refuses_nul_naming_the_field(
    memory_ctx: ServerContext,
) -> None:
    server = create_server(memory_ctx)
    specs = await list_tool_specs(server)
    checked = 0
    async with Client(server) as client:
        with anyio.fail_after(120):
            for spec in specs:
                for field, is_list in _string_fields(spec["inputSchema"]):
                    if field == "graph":
                        continue
                    value: Any = ["ok", "bad\x00value"] if is_list else "bad\x00value"
                    result = await client.call_tool(spec["name"], {field: value})
                    text = text_of(result)
                    assert result.is_error, (spec["name"], field)
                    where = f"{field}.1" if is_list else field
                    assert f"- {where}: contains the control character NUL" in text, (
                        spec["name"],
                        text,
                    )
                    assert "falkordb" not in text.lower() and "internal error" not in text
                    checked += 1
    # cause, entities, node, tags, content, question... across the tool set
    assert checked >= 100


@pytest.mark.parametrize(
    ("tool", "args", "where"),
    [
        ("add_causal_link", {"cause": "a\x00", "effect": "b"}, "cause"),
        ("get_causal_chain", {"node": "x\x00y"}, "node"),
        ("recall", {"question": "why?", "tags": ["\x00"]}, "tags.0"),
        ("add_nodes", {"nodes": [{"name": "ok"}, {"name": "n\x00"}]}, "nodes.1.name"),
        ("add_entity", {"name": "e", "entity_type": "T", "properties": {"k\x00": 1}}, "properties"),
        ("add_entity", {"name": "e\x1b[31m", "entity_type": "T"}, "name"),
        ("remember", {"content": "text \ud800 lone", "wait": True}, "content"),
    ],
)
async def test_nested_and_other_control_characters_are_refused_with_their_location(
    memory_client: Client, tool: str, args: dict[str, Any], where: str
) -> None:
    with anyio.fail_after(30):
        result = await memory_client.call_tool(tool, args)
    text = text_of(result)
    assert result.is_error
    assert f"- {where}" in text and "contains" in text, text
    assert "Fix these arguments" in text


async def test_tabs_and_newlines_are_still_accepted(memory_client: Client) -> None:
    with anyio.fail_after(30):
        result = await memory_client.call_tool(
            "add_entity",
            {"name": "tabbed\tname", "entity_type": "Service", "properties": {"n": "a\nb"}},
        )
    assert not result.is_error, text_of(result)


async def test_a_nul_in_a_tag_of_a_queued_remember_is_refused_before_queuing(
    store: FalkorStore,
    server_settings: Settings,
    cached_embedder: Embedder,
    namespace: str,
    queue_name: str,
) -> None:
    ctx = ServerContext(
        store=store,
        settings=server_settings,
        embedder=cached_embedder,
        jobs=JobOptions(workers=0, queue_name=queue_name, sweep_s=1, dequeue_timeout_s=1.0),
    )
    async with Client(create_server(ctx)) as client:
        with anyio.fail_after(30):
            refused = await client.call_tool(
                "remember", {"content": "a note", "tags": ["ok", "t\x00g"], "wait": False}
            )
            jobs = await client.call_tool("list_jobs", {})
    assert refused.is_error
    assert "- tags.1: contains the control character NUL" in text_of(refused)
    assert jobs.structured_content is not None
    assert jobs.structured_content["jobs"] == []
    # The queue's own entry point refuses it too (callers other than the tool).
    queue = await JobQueue.open(store, name=queue_name)
    try:
        with pytest.raises(InvalidInput, match=r"nothing queued: tags\.0 contains"):
            await queue.enqueue_remember("a note", graph=namespace, tags=["\x00"])
    finally:
        await queue.close()


def test_control_char_error_walks_deep_nesting_without_recursion() -> None:
    deep: Any = "x\x00"
    for _ in range(5000):
        deep = [deep]
    found = control_char_error({"a": deep})
    assert found is not None and len(found[0]) == 5001


@pytest.mark.parametrize("value", ["0001-01-01", "9999-12-31", "0001-01-01T00:00:00+01:00"])
def test_the_date_range_error_names_the_real_bounds(value: str) -> None:
    with pytest.raises(ValueError, match="outside the supported range") as info:
        parse_timestamp(value)
    assert "years 1-9999" not in str(info.value)
    assert "0001-01-02T00:00:00Z to 9999-12-30T00:00:00Z" in str(info.value)


def test_the_ends_of_the_range_are_accepted() -> None:
    assert parse_timestamp("0001-01-02").year == 1
    assert parse_timestamp("9999-12-30").year == 9999


async def test_a_list_sent_as_a_json_string_is_checked_decoded(memory_client: Client) -> None:
    with anyio.fail_after(30):
        result = await memory_client.call_tool(
            "recall", {"question": "why?", "tags": '["ok", "bad\\u0000"]'}
        )
    assert result.is_error
    assert "- tags.1: contains the control character NUL" in text_of(result)
