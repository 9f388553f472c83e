"""Seed 000's "MCP Tools" section, called with the specification's own argument names.

A client written against the specification (`get_entity` with `name`, `recall` with
`query`, `query_timeline` with `from`/`to`, `search_semantic`, ...) works unchanged:
every call below uses exactly the names the section gives, through the real MCP client.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import Client
from mcp_types import CallToolResult, TextContent

pytestmark = pytest.mark.anyio

SPEC_TOOLS = {
    "recall",
    "remember",
    "search_semantic",
    "add_concept",
    "query_timeline",
    "add_event",
    "add_fact",
    "get_causal_chain",
    "add_causal_link",
    "explain_why",
    "get_entity",
    "add_entity",
    "link_entities",
    "get_statistics",
    "clear_graph",
    "export_graph",
}


def _text(result: CallToolResult) -> str:
    return " ".join(b.text for b in result.content if isinstance(b, TextContent))


async def call(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert not result.is_error, f"{tool}({args}): {_text(result)}"
    return dict(result.structured_content or {})


async def test_every_spec_tool_is_listed(memory_client: Client) -> None:
    names = {t.name for t in (await memory_client.list_tools()).tools}
    assert names >= SPEC_TOOLS, SPEC_TOOLS - names


async def test_the_spec_tools_answer_to_the_spec_argument_names(memory_client: Client) -> None:
    c = memory_client
    alice = await call(c, "add_entity", {"name": "Alice", "entity_type": "Person"})
    assert alice["entity"]["name"] == "Alice"
    await call(c, "add_entity", {"name": "auth-service", "entity_type": "Service"})
    await call(
        c, "link_entities", {"source": "Alice", "target": "auth-service", "relationship": "owns"}
    )
    entity = await call(c, "get_entity", {"name": "auth-service", "include_relationships": True})
    assert entity["entity"]["name"] == "auth-service"
    assert [r["relationship_type"] for r in entity["relationships"]] == ["owns"]
    bare = await call(c, "get_entity", {"name": "Alice", "include_relationships": False})
    assert bare["entity"]["name"] == "Alice" and bare["relationships"] == []

    await call(c, "add_concept", {"name": "secret management", "description": "keeping keys"})
    await call(
        c,
        "add_event",
        {"description": "deploy v2.3.1 rolled out", "occurred_at": "2026-01-07T14:32:00Z"},
    )
    await call(
        c,
        "add_event",
        {"description": "auth service crashed", "occurred_at": "2026-01-07T14:33:12Z"},
    )
    await call(
        c,
        "add_fact",
        {
            "subject": "auth-service",
            "predicate": "version",
            "object": "2.3.1",
            "valid_from": "2026-01-07T14:32:00Z",
        },
    )
    timeline = await call(
        c, "query_timeline", {"from": "2026-01-07T00:00:00Z", "to": "2026-01-07T14:33:00Z"}
    )
    assert [e["description"] for e in timeline["events"]] == ["deploy v2.3.1 rolled out"]

    await call(
        c,
        "add_causal_link",
        {"cause": "deploy v2.3.1 removed AUTH_SECRET", "effect": "AUTH_SECRET missing"},
    )
    await call(
        c,
        "add_causal_link",
        {"cause": "AUTH_SECRET missing", "effect": "auth service crash", "confidence": 0.95},
    )
    chain = await call(
        c, "get_causal_chain", {"event": "auth service crash", "direction": "upstream"}
    )
    assert chain["root"]["description"] == "auth service crash"
    causes = {n["description"] for ch in chain["chains"] for n in ch["nodes"]}
    assert "deploy v2.3.1 removed AUTH_SECRET" in causes
    why = await call(c, "explain_why", {"event": "auth service crash"})
    assert "deploy v2.3.1 removed AUTH_SECRET" in why["root_causes"]

    found = await call(c, "search_semantic", {"query": "keeping keys secret", "limit": 3})
    same = await call(c, "semantic_search", {"query": "keeping keys secret", "k": 3})
    assert found["hits"] and found["hits"] == same["hits"]

    remembered = await call(
        c,
        "remember",
        {
            "content": "Bob rotated the AUTH_SECRET after the auth service crash.",
            "context": "incident review",
        },
    )
    assert remembered["created"] is True
    answer = await call(
        c,
        "recall",
        {"query": "Why did the auth service crash?", "include_reasoning": True, "max_results": 2},
    )
    assert answer["answer"] and len(answer["memories"]) <= 2
    assert answer["reasoning"]["causal_chain"]
    short = await call(
        c, "recall", {"query": "Why did the auth service crash?", "include_reasoning": False}
    )
    assert short["reasoning"]["causal_chain"] == []

    stats = await call(c, "get_statistics", {})
    assert stats["graphs"]["entity"]["nodes"] >= 2
    as_json = await call(c, "export_graph", {"format": "json"})
    records = json.loads(as_json["text"])
    assert as_json["format"] == "json" and len(records) == as_json["records"] > 0
    as_jsonl = await call(c, "export_graph", {})
    assert [json.loads(line) for line in as_jsonl["text"].splitlines()] == records
    cleared = await call(c, "clear_graph", {"graph": "causal", "confirm": True})
    assert cleared["which"] == "causal"
    after = await call(c, "get_statistics", {})
    assert after["graphs"]["causal"]["nodes"] == 0
    assert after["graphs"]["entity"]["nodes"] == stats["graphs"]["entity"]["nodes"]


async def test_a_spec_name_given_with_ours_is_refused(memory_client: Client) -> None:
    result = await memory_client.call_tool("get_entity", {"name": "x", "entity": "y"})
    assert result.is_error and "name" in _text(result)


async def test_the_remember_context_is_kept_as_its_why_tag(memory_client: Client) -> None:
    out = await call(
        memory_client,
        "remember",
        {"content": "The cache was flushed before the release.", "context": "release checklist"},
    )
    assert out["created"] is True
    tagged = await call(
        memory_client,
        "recall",
        {"query": "When was the cache flushed?", "tags": ["why:release checklist"]},
    )
    assert [m["content"] for m in tagged["memories"]] == [
        "The cache was flushed before the release."
    ]
