"""Graph-wide reads (`get_graph_info`, `pagerank`, `degree_centrality`) over names in any
script, with combining marks, emoji, lone surrogates, NUL and other controls, sent
through a real MCP client to scratch graphs and to a memory graph.

A `UnicodeDecodeError` was reported from `get_graph_info` and `pagerank` under fuzzing:
whatever a name holds, a write either stores it (and every read gives it back) or is
refused naming the field, and no read answers "internal error".
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import anyio
import anyio.from_thread
import anyio.to_thread
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp_types import CallToolResult, TextContent

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

ODD = [
    "e\u0301\u0301",  # combining marks
    "\U0001f469\u200d\U0001f4bb",  # a joined emoji
    "\u202eevil",  # right-to-left override
    "\ud800",  # a lone high surrogate
    "x\udfffy",  # a lone low surrogate inside
    "nul\x00in",
    "\x1b[31m",
    "\uffff\ufffe",
    "İstanbul ẞ ǅ",  # case mappings that change the length
    "\U00010400\U0001e900",  # astral letters with case
]
names = st.lists(
    st.sampled_from(ODD) | st.text(min_size=1, max_size=12),  # every category, surrogates too
    min_size=2,
    max_size=5,
    unique=True,
)


def text_of(result: CallToolResult) -> str:
    block = result.content[0] if result.content else None
    return block.text if isinstance(block, TextContent) else ""


async def test_graph_wide_reads_answer_over_names_in_any_unicode(
    memory_client: Client, namespace: str
) -> None:
    scratch = f"{namespace}_u"
    problems: list[str] = []
    stored: list[str] = []

    async def call(tool: str, args: dict[str, Any]) -> CallToolResult:
        with anyio.fail_after(30):
            return await memory_client.call_tool(tool, args)

    def check(tool: str, args: dict[str, Any]) -> CallToolResult:
        result = anyio.from_thread.run(call, tool, args)
        text = text_of(result)
        if result.is_error and ("internal error" in text or "Decode" in text):
            problems.append(f"{tool}: {text[:300]}")
        return result

    @settings(
        max_examples=25,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(batch=names)
    def one(batch: list[str]) -> None:
        added = check(
            "add_nodes", {"graph": scratch, "nodes": [{"label": n, "type": n} for n in batch]}
        )
        if not added.is_error:
            stored.extend(batch)
        pairs = list(pairwise(batch))
        check(
            "add_edges",
            {
                "graph": scratch,
                "edges": [{"source": a, "target": b, "relation": a} for a, b in pairs],
            },
        )
        check("add_entity", {"name": batch[0], "entity_type": batch[-1]})
        check("add_concept", {"name": batch[-1], "description": batch[0]})
        for graph in (scratch, namespace):
            check("get_graph_info", {"graph": graph})
            check("pagerank", {"graph": graph, "top_n": 50})
            check("degree_centrality", {"graph": graph, "top_n": 50})
            check("list_nodes", {"graph": graph})

    try:
        await anyio.to_thread.run_sync(one)
        assert not problems, problems[:5]
        # What was stored comes back as it was written, never mangled (a name may have
        # been taken as an existing similar node: then that one's name is back).
        listed = await call("list_nodes", {"graph": scratch, "limit": 1000})
        assert not listed.is_error, text_of(listed)
        back = {n["label"] for n in listed.structured_content["nodes"]}  # type: ignore[index]
        assert stored and back and back <= set(stored)
    finally:
        await call("delete_graph", {"graph": scratch})
