"""List answers in pages through the real in-memory MCP client: a limit, an opaque
cursor that continues the same call, and a token budget the answer keeps."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp_types import TextContent
from polyg_core.memory import Memory
from polyg_core.testing.scripts import load_script
from polyg_server.context import ServerContext
from polyg_server.paging import estimate_tokens
from polyg_server.testing import call

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[3]
PEOPLE = ("Orla Finch", "Tamsin Reyes", "Idris Vale")


@functools.cache
def generator() -> ModuleType:
    return load_script(ROOT / "scripts" / "gen_api_reference.py")


def real_tokens(answer: dict[str, Any]) -> int:
    text = json.dumps(answer, ensure_ascii=False, separators=(",", ":"))
    return int(generator().count_tokens(text))


async def refused(client: Client, name: str, args: dict[str, Any]) -> str:
    with anyio.fail_after(60):
        result = await client.call_tool(name, args)
    assert result.is_error
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def pages(client: Client, name: str, args: dict[str, Any]) -> list[dict[str, Any]]:
    """Every page of a call, following next_cursor to the end."""
    out = [await call(client, name, args)]
    while out[-1]["next_cursor"] is not None:
        assert len(out) < 50, "paging does not end"
        out.append(await call(client, name, {**args, "cursor": out[-1]["next_cursor"]}))
    return out


async def _events(ctx: ServerContext, count: int, words: int = 6) -> None:
    mem: Memory = ctx.require_memory()
    ns = ctx.namespace(None)
    for i in range(count):
        text = f"{PEOPLE[i % 3]} reviewed harbour ledger {i:03d} " + "and noted a tide " * words
        await mem.temporal.add_event(
            ns,
            text.strip(),
            f"2026-03-{1 + i % 28:02d}T{8 + i // 28:02d}:00:00Z",
            entities=[PEOPLE[i % 3]],
        )


async def test_a_timeline_pages_through_every_event_once_in_order(
    memory_client: Client, memory_ctx: ServerContext
) -> None:
    await _events(memory_ctx, 23)
    whole = await call(memory_client, "query_timeline", {"limit": 100, "max_tokens": 32_000})
    assert whole["count"] == 23 and whole["next_cursor"] is None and not whole["truncated"]
    paged = await pages(memory_client, "query_timeline", {"limit": 10, "max_tokens": 32_000})
    assert [p["count"] for p in paged] == [10, 10, 3]
    assert [p["truncated"] for p in paged] == [True, True, False]
    seen = [e["uuid"] for p in paged for e in p["events"]]
    assert seen == [e["uuid"] for e in whole["events"]]
    # The limit may change between pages; the filters may not.
    first = await call(memory_client, "query_timeline", {"limit": 5})
    more = await call(
        memory_client, "query_timeline", {"limit": 15, "cursor": first["next_cursor"]}
    )
    assert [e["uuid"] for e in first["events"] + more["events"]] == seen[:20]
    other = await refused(
        memory_client,
        "query_timeline",
        {"entity": PEOPLE[0], "cursor": first["next_cursor"]},
    )
    assert "other arguments" in other
    garbage = await refused(memory_client, "query_timeline", {"cursor": "not-a-cursor!"})
    assert "next_cursor" in garbage


async def test_max_tokens_cuts_a_page_short_and_the_answer_stays_within_it(
    memory_client: Client, memory_ctx: ServerContext
) -> None:
    await _events(memory_ctx, 30, words=40)
    budget = 1_500
    paged = await pages(memory_client, "query_timeline", {"limit": 100, "max_tokens": budget})
    assert len(paged) > 2
    for page in paged:
        assert real_tokens(page) <= budget
        assert estimate_tokens(json.dumps(page, ensure_ascii=False)) >= real_tokens(page)
    assert all(p["truncated"] for p in paged[:-1])
    assert sum(p["count"] for p in paged) == 30
    facts = await pages(memory_client, "query_facts", {"history": True, "max_tokens": 200})
    assert all(real_tokens(p) <= 200 for p in facts)


async def test_one_result_larger_than_the_budget_is_shortened_not_dropped(
    memory_client: Client, memory_ctx: ServerContext
) -> None:
    mem = memory_ctx.require_memory()
    ns = memory_ctx.namespace(None)
    long = "Orla Finch wrote the harbour inventory: " + "crates of rope, nets and lanterns; " * 110
    await mem.temporal.add_event(ns, long, "2026-04-02T10:00:00Z", entities=["Orla Finch"])
    page = await call(memory_client, "query_timeline", {"max_tokens": 300})
    (event,) = page["events"]
    assert page["truncated"] and page["next_cursor"] is None
    assert event["description"].endswith("…") and len(event["description"]) < len(long)
    assert real_tokens(page) <= 300


async def test_scratch_lists_rankings_and_graph_lists_page_the_same_way(
    memory_client: Client, memory_ctx: ServerContext, namespace: str
) -> None:
    graph = f"{namespace}.scratch"
    names = [f"dock crane {i:02d}" for i in range(12)]
    await call(memory_client, "add_nodes", {"graph": graph, "nodes": [{"label": n} for n in names]})
    edges = [{"source": names[0], "target": n, "relation": "feeds"} for n in names[1:]]
    await call(memory_client, "add_edges", {"graph": graph, "edges": edges})
    listed = await pages(memory_client, "list_nodes", {"graph": graph, "limit": 5})
    assert [n["label"] for p in listed for n in p["nodes"]] == sorted(names)
    found = await pages(memory_client, "find_edges", {"graph": graph, "limit": 4})
    assert len({(e["source"], e["target"]) for p in found for e in p["edges"]}) == 11
    near = await pages(
        memory_client, "get_neighbors", {"graph": graph, "node": names[0], "limit": 3}
    )
    assert len([n for p in near for n in p["neighbors"]]) == 11
    ranked = await pages(memory_client, "degree_centrality", {"graph": graph, "top_n": 5})
    labels = [r["label"] for p in ranked for r in p["rankings"]]
    assert labels[0] == names[0] and sorted(labels) == sorted(names)
    ranked_by_limit = await call(memory_client, "pagerank", {"graph": graph, "limit": 2})
    assert len(ranked_by_limit["rankings"]) == 2 and ranked_by_limit["next_cursor"]
    graphs = await pages(memory_client, "list_graphs", {"limit": 1})
    listed_graphs = [g["name"] for p in graphs for g in p["graphs"]]
    assert graph in listed_graphs and listed_graphs == sorted(set(listed_graphs))
    assert all(len(p["graphs"]) <= 1 for p in graphs)


async def test_causal_chains_and_explanations_page_by_path(
    memory_client: Client, memory_ctx: ServerContext
) -> None:
    mem = memory_ctx.require_memory()
    ns = memory_ctx.namespace(None)
    causes = [
        "storm surge over the quay",
        "rusted winch cable",
        "power cut at the substation",
        "operator shift left unstaffed",
        "jammed hydraulic valve",
    ]
    for cause in causes:
        await mem.causal.add_link(ns, cause, "harbour crane stalled", 0.8)
    chain = await pages(
        memory_client,
        "get_causal_chain",
        {"node": "harbour crane stalled", "direction": "both", "max_paths": 2},
    )
    assert len(chain) == 3
    found = [p["nodes"][0] for page in chain for c in page["chains"] for p in c["paths"]]
    assert sorted(found) == sorted(causes)
    why = await pages(
        memory_client, "explain_why", {"effect": "harbour crane stalled", "max_paths": 2}
    )
    roots = [e["steps"][0]["cause"] for page in why for e in page["explanations"]]
    assert sorted(roots) == sorted(causes)
    assert sorted(why[0]["root_causes"]) == sorted(causes)


async def test_recall_keeps_its_answer_within_max_tokens_details_first(
    memory_client: Client,
) -> None:
    for i in range(20):
        note = (
            f"Orla Finch moved harbour crane {i} to quay {i % 4} after the storm of "
            f"March {i + 1}, 2026; Tamsin Reyes signed the work order."
        )
        await call(memory_client, "remember", {"content": note})
    question = {"question": "Who moved the harbour cranes, and who signed for it?"}
    default = await call(memory_client, "recall", question)
    assert real_tokens(default) <= 4_000
    assert default["truncated"] and default["omitted"][:2] == ["edges", "nodes"]
    assert default["answer"] and default["memories"]
    wide = await call(memory_client, "recall", {**question, "max_tokens": 32_000})
    assert real_tokens(wide) > real_tokens(default)
    assert len(wide["omitted"]) < len(default["omitted"]) and wide["nodes"]
    tight = await call(memory_client, "recall", {**question, "max_tokens": 800})
    assert real_tokens(tight) <= 800
    # The memories that did not fit were left out: packed best first, or cut afterwards.
    assert tight["packed"]["memories_kept"] < 20 or "memories" in tight["omitted"]


async def test_every_list_tool_takes_a_cursor_and_a_token_budget(memory_client: Client) -> None:
    tools = {t.name: t for t in (await memory_client.list_tools()).tools}
    listing = {
        "get_entity",
        "query_timeline",
        "query_facts",
        "fact_history",
        "explain_why",
        "semantic_search",
        "search_semantic",
        "list_graphs",
        "list_jobs",
        "list_nodes",
        "find_node",
        "find_edges",
        "get_neighbors",
        "all_paths",
        "pagerank",
        "betweenness",
        "degree_centrality",
        "connected_components",
        "find_cycles",
    }
    for name in listing:
        tool = tools[name]
        assert {"cursor", "max_tokens"} <= set(tool.input_schema["properties"]), name
        assert tool.output_schema is not None
        assert {"next_cursor", "truncated"} <= set(tool.output_schema["properties"]), name


WORDS = [
    "the",
    "harbour",
    "ledger",
    "Orla",
    "Finch",
    "reviewed",
    "inventory",
    "tide-gauge",
    "rope,",
    "lanterns;",
    "AUTH_SECRET",
    "payments-db-primary",
    "v2.3.1",
    "2026-03-04T08:00:00Z",
    "naïve",
    "façade",
    "Zürich",
    "Łódź",
    "привет",
    "мир",
    "中文名字",
    "東京",
    "😀",
    "👩‍💻",
    "e\u0301",
    "¸",
    "«quoted»",
    "$param",
    "x'}) //",
    "\n",
    "\t",
    "   ",
]
prose = st.lists(st.sampled_from(WORDS), max_size=40).map(" ".join)


@settings(max_examples=200)
@given(
    st.recursive(
        st.one_of(
            st.none(),
            st.booleans(),
            st.integers(),
            st.floats(allow_nan=False, allow_infinity=False),
            prose,
            st.uuids().map(str),
            st.uuids().map(lambda u: u.hex),
        ),
        lambda inner: st.one_of(
            st.lists(inner, max_size=6), st.dictionaries(prose, inner, max_size=6)
        ),
        max_leaves=30,
    )
)
def test_the_estimate_never_falls_below_the_real_count(value: Any) -> None:
    """On values made of the words, names, ids, times and numbers tools answer with."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    assert estimate_tokens(text) >= int(generator().count_tokens(text))
