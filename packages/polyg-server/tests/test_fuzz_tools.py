"""Every MCP tool, fuzzed through the in-memory client from its advertised inputSchema.

Wrong types, missing and unknown fields, huge strings, unicode edge cases, NUL,
NaN/inf, out-of-range dates, deep JSON and Cypher-looking names: every call must
answer with a result or a tool error that describes the input problem, within a
bounded time, never an exception out of the client and never "internal error".
Hypothesis drives the calls from a worker thread; each call runs on the test's
event loop (anyio.from_thread), where the client session lives.
"""

from __future__ import annotations

import contextlib
from typing import Any

import anyio
import anyio.from_thread
import anyio.to_thread
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp_types import CallToolResult, TextContent
from polyg_core.storage.store import FalkorStore

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

EXAMPLES_PER_TOOL = 16
CALL_TIMEOUT_S = 20

INJECTIONS = [
    "x'}) MATCH (n) DETACH DELETE n //",
    '"}) RETURN 1; CALL db.idx.fulltext.drop("E_Entity") //',
    "` MATCH (n) DELETE n `",
    "$param",
    "\\u0000",
    "${jndi:ldap://x}",
    "../../etc/passwd",
    "GRAPH.DELETE polyg",
    "<script>alert(1)</script>",
    "' OR 1=1 --",
]
UNICODE = [
    "",
    " ",
    "\x00",
    "nul\x00inside",
    "\u202eevil\u202c",
    "\u200b\u200d\ufeff",
    "e\u0301",
    "\U0001f600\U0001f469\u200d\U0001f4bb",
    "\uffff",
    "Ω≈ç√∫",
    "中文名字",
    "\n\r\t",
]
DATES = [
    "9999-12-31T23:59:59Z",
    "0001-01-01T00:00:00Z",
    "+275760-09-13T00:00:00Z",
    "-000001-01-01",
    "2026-02-30",
    "2026-01-07T25:61:00Z",
    "yesterday",
    "10^20",
    "1e309",
]
HUGE = ["x" * 300_000, "word " * 25_000, "\U0001f600" * 5_000]


def deep(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = [value] if depth % 2 else {"k": value}
    return value


special_strings = st.sampled_from(INJECTIONS + UNICODE + DATES + HUGE)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    special_strings,
    st.text(max_size=40),
)
hostile = st.one_of(
    scalars,
    st.sampled_from([deep(20), deep(60)]),
    st.lists(scalars, max_size=4),
    st.dictionaries(st.text(max_size=8), scalars, max_size=3),
)


def resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return defs.get(ref.split("/")[-1], {})
    return schema


def value_for(
    schema: dict[str, Any], defs: dict[str, Any], depth: int = 0
) -> st.SearchStrategy[Any]:
    """Values near what the field accepts, mixed with hostile ones of any type."""
    schema = resolve(schema, defs)
    options: list[st.SearchStrategy[Any]] = [hostile]
    if "enum" in schema:
        options.append(st.sampled_from(schema["enum"]))
    for sub in schema.get("anyOf", []):
        if depth < 3:
            options.append(value_for(sub, defs, depth + 1))
    kind = schema.get("type")
    if kind == "string":
        options += [special_strings, st.text(min_size=1, max_size=30)]
    elif kind == "integer":
        bounds = [schema.get(k) for k in ("minimum", "maximum") if k in schema]
        options += [st.integers(-5, 50), st.sampled_from([*bounds, 0, -1, 2**63, 10**30])]
    elif kind == "number":
        options.append(st.floats(allow_nan=True, allow_infinity=True))
        options.append(st.sampled_from([0.0, 1.0, -0.0, 1.0000001, float("nan"), float("inf")]))
    elif kind == "boolean":
        options.append(st.booleans())
    elif kind == "array" and depth < 3:
        items = schema.get("items", {})
        options.append(st.lists(value_for(items, defs, depth + 1), max_size=4))
    elif kind == "object" and depth < 3:
        props = schema.get("properties")
        if props:
            options.append(
                st.fixed_dictionaries(
                    {}, optional={k: value_for(v, defs, depth + 1) for k, v in props.items()}
                )
            )
        else:
            options.append(st.dictionaries(st.text(max_size=10), scalars, max_size=4))
    return st.one_of(*options)


def arguments_for(schema: dict[str, Any], graphs: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    defs: dict[str, Any] = schema.get("$defs", {})
    props: dict[str, Any] = dict(schema.get("properties", {}))
    required = [k for k in schema.get("required", []) if k in props]
    values = {k: value_for(v, defs) for k, v in props.items() if k != "graph"}
    if "graph" in props:
        # Valid names stay inside the test's graphs; the others must be refused.
        values["graph"] = st.one_of(
            st.sampled_from(graphs), st.sampled_from(INJECTIONS + UNICODE + ["a" * 65])
        )
    optional = {k: v for k, v in values.items() if k not in required}
    with_required = st.fixed_dictionaries(
        {k: values[k] for k in required}, optional={**optional, "unknown_arg": hostile}
    )
    anything = st.fixed_dictionaries({}, optional={**values, "unknown_arg": hostile})
    return st.one_of(with_required, with_required, anything)


def text_of(result: CallToolResult) -> str:
    block = result.content[0] if result.content else None
    return block.text if isinstance(block, TextContent) else ""


async def test_every_tool_answers_fuzzed_input_with_a_result_or_a_tool_error(
    memory_client: Client, store: FalkorStore, namespace: str
) -> None:
    tools = (await memory_client.list_tools()).tools
    assert len(tools) >= 45
    graphs = [namespace, f"{namespace}_s"]
    tried: dict[str, int] = {}
    problems: list[str] = []

    async def call(name: str, args: dict[str, Any]) -> CallToolResult:
        with anyio.fail_after(CALL_TIMEOUT_S):
            return await memory_client.call_tool(name, args)

    def fuzz(name: str, schema: dict[str, Any]) -> None:
        @settings(
            max_examples=EXAMPLES_PER_TOOL,
            database=None,
            suppress_health_check=[
                HealthCheck.too_slow,
                HealthCheck.data_too_large,
                HealthCheck.filter_too_much,
            ],
        )
        @given(args=arguments_for(schema, graphs))
        def one(args: dict[str, Any]) -> None:
            tried[name] = tried.get(name, 0) + 1
            try:
                result = anyio.from_thread.run(call, name, args)
            except Exception as exc:  # recorded, not raised: deep inputs do not pretty-print
                problems.append(f"{name}({sorted(args)}): raised {type(exc).__name__}: {exc}"[:500])
                return
            text = text_of(result)
            if result.is_error:
                if text.startswith("internal error"):
                    problems.append(f"{name}({sorted(args)}): {text}")
            elif result.structured_content is None:
                problems.append(f"{name}: a result without structured content")

        one()

    try:
        for tool in tools:
            await anyio.to_thread.run_sync(fuzz, tool.name, tool.input_schema)
        # The server still answers, and the fuzzed names did not reach outside their graph.
        with anyio.fail_after(CALL_TIMEOUT_S):
            listed = await memory_client.call_tool("list_graphs", {})
            stats = await memory_client.call_tool("get_statistics", {"graph": namespace})
        assert not listed.is_error and not stats.is_error
        names = {g["name"] for g in listed.structured_content["graphs"]}  # type: ignore[index]
        assert names <= {*graphs} | {n for n in names if not n.startswith("t_")} | names
    finally:
        for g in graphs:
            with contextlib.suppress(Exception):
                await store.delete_graph(g)
    total = sum(tried.values())
    print(f"fuzzed {len(tried)} tools with {total} calls")
    assert problems == [], "\n".join(problems[:10])
    assert set(tried) == {t.name for t in tools}


TIME_CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("temporal_expand", {}, "start"),
    ("temporal_expand", {}, "end"),
    ("query_timeline", {}, "start"),
    ("query_timeline", {}, "end"),
    ("add_event", {"description": "probe"}, "occurred_at"),
    ("add_fact", {"subject": "a", "predicate": "b", "object": "c"}, "valid_from"),
    ("add_fact", {"subject": "a", "predicate": "b", "object": "c"}, "valid_to"),
    ("invalidate_fact", {"subject": "a", "predicate": "b"}, "at"),
    ("recall", {"question": "what happened?"}, "reference_time"),
    ("remember", {"content": "The probe ran."}, "reference_time"),
]


@pytest.mark.parametrize("date", DATES)
async def test_out_of_range_and_malformed_dates_are_input_errors(
    memory_client: Client, date: str
) -> None:
    for name, base, key in TIME_CALLS:
        with anyio.fail_after(CALL_TIMEOUT_S):
            result = await memory_client.call_tool(name, {**base, key: date})
        assert not text_of(result).startswith("internal error"), (name, key, text_of(result))


LITERAL = [s for s in INJECTIONS if s.strip()] + ["中文名字", "e\u0301", "\u202eevil\u202c"]


@pytest.mark.parametrize("payload", LITERAL)
async def test_injection_strings_are_stored_literally(
    memory_client: Client, store: FalkorStore, namespace: str, payload: str
) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("add_entity", {"name": payload, "entity_type": "Service", "properties": {"p": payload}}),
        ("add_event", {"description": payload, "occurred_at": "2026-01-07T14:00:00Z"}),
        ("add_causal_link", {"cause": payload, "effect": "the billing cluster went down"}),
        ("add_concept", {"name": f"c {payload}", "description": payload}),
        ("remember", {"content": f"Note: {payload}"}),
        ("add_node", {"label": payload, "graph": f"{namespace}_s"}),
    ]
    try:
        with anyio.fail_after(60):
            for name, args in calls:
                result = await memory_client.call_tool(name, args)
                assert not result.is_error, (name, text_of(result))
        stored = await store.query(
            namespace,
            "MATCH (n) RETURN n.name, n.description, n.content, n.properties",
            read_only=True,
        )
        values = {str(v) for row in stored.rows for v in row if v is not None}
        for expected in (payload, f"c {payload}", f"Note: {payload}"):
            assert expected in values, (expected, sorted(values)[:20])
        entity = await memory_client.call_tool("get_entity", {"entity": payload})
        assert entity.structured_content is not None
        assert entity.structured_content["entity"]["properties"] == {"p": payload}
        scratch = await store.query(f"{namespace}_s", "MATCH (n:G_Node) RETURN n.name")
        assert scratch.rows == [[payload]]
        # The payload deleted nothing: the metadata node and the indexes are still there.
        meta = await store.query(namespace, "MATCH (m:P_Meta) RETURN count(m)", read_only=True)
        assert meta.scalar() == 1
    finally:
        await store.delete_graph(f"{namespace}_s")


@pytest.mark.parametrize("graph", [*INJECTIONS, "", "a" * 65, "polyg\x00", "g\u00e9"])
async def test_injection_through_the_graph_argument_is_refused(
    memory_client: Client, graph: str
) -> None:
    with anyio.fail_after(CALL_TIMEOUT_S):
        result = await memory_client.call_tool("add_entity", {"name": "x", "graph": graph})
        deleted = await memory_client.call_tool("delete_graph", {"graph": graph, "confirm": True})
    for r in (result, deleted):
        assert r.is_error and text_of(r).startswith("Invalid arguments"), text_of(r)
