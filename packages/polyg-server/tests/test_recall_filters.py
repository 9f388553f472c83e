"""recall's filters and modes, and remember's WHO/PROJECT/WHY tags, through the MCP client."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

pytestmark = pytest.mark.anyio

REF = "2026-01-14T12:00:00Z"


async def _call(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    if tool == "recall":
        # These tests read the merged subgraph's nodes, which an answer within the
        # default token budget leaves out.
        args = {"max_tokens": 32_000, **args}
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def test_recall_filters_by_project_and_who_over_mcp(
    memory_client: Client, namespace: str
) -> None:
    await _call(
        memory_client,
        "remember",
        {
            "graph": namespace,
            "content": "The billing cache was flushed to fix stale invoices.",
            "reference_time": REF,
            "project": "billing",
            "who": "ops-agent",
        },
    )
    await _call(
        memory_client,
        "remember",
        {
            "graph": namespace,
            "content": "The search cache was flushed to fix stale results.",
            "reference_time": REF,
            "project": "search",
            "who": "dev-agent",
        },
    )
    both = await _call(
        memory_client,
        "recall",
        {"graph": namespace, "question": "What happened to the cache?", "reference_time": REF},
    )
    memories = {n["text"] for n in both["nodes"] if n["label"] == "S_Memory"}
    assert len(memories) == 2
    ranked = both["memories"]
    assert {m["content"] for m in ranked} == memories
    assert all(m["retrievers"] and m["created_at"].startswith("2026-01-14") for m in ranked)
    assert [m["score"] for m in ranked] == sorted((m["score"] for m in ranked), reverse=True)
    lexical = await _call(
        memory_client,
        "recall",
        {
            "graph": namespace,
            "question": "Which invoices were stale?",
            "reference_time": REF,
            "retrievers": ["lexical"],
            "memory_limit": 1,
        },
    )
    assert [m["content"] for m in lexical["memories"]] == [
        "The billing cache was flushed to fix stale invoices."
    ]
    assert set(lexical["memories"][0]["retrievers"]) == {"lexical"}
    refused = await memory_client.call_tool(
        "recall", {"graph": namespace, "question": "cache?", "retrievers": ["bm25"]}
    )
    assert refused.is_error
    billing = await _call(
        memory_client,
        "recall",
        {
            "graph": namespace,
            "question": "What happened to the cache?",
            "reference_time": REF,
            "project": "billing",
            "mode": "execution",
        },
    )
    kept = {n["text"] for n in billing["nodes"] if n["label"] == "S_Memory"}
    assert kept == {"The billing cache was flushed to fix stale invoices."}
    assert billing["mode"] == "execution"
    by_who = await _call(
        memory_client,
        "recall",
        {
            "graph": namespace,
            "question": "What happened to the cache?",
            "reference_time": REF,
            "who": "dev-agent",
        },
    )
    assert {n["text"] for n in by_who["nodes"] if n["label"] == "S_Memory"} == {
        "The search cache was flushed to fix stale results."
    }
