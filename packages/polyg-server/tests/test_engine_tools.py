"""Thinking-tool tools through a real MCP client (in-memory session)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from mcp import Client
from polyg_core.config import Settings
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.storage.store import FalkorStore
from polyg_server.app import create_server
from polyg_server.context import ServerContext
from polyg_server.testing import text_of
from polyg_shared.types import GRAPH_NAME_PATTERN

pytestmark = pytest.mark.anyio


@pytest.fixture
async def engine_client(
    store: FalkorStore, server_settings: Settings, embedder: Embedder
) -> AsyncIterator[Client]:
    ctx = ServerContext(store=store, settings=server_settings, embedder=embedder)
    async with Client(create_server(ctx, profiles="engine")) as c:
        yield c


async def call(client: Client, name: str, **args: Any) -> dict[str, Any]:
    with anyio.fail_after(60):
        result = await client.call_tool(name, args)
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    return result.structured_content


async def test_engine_tools_are_listed_with_schemas(engine_client: Client) -> None:
    tools = {t.name: t for t in (await engine_client.list_tools()).tools}
    expected = {
        "add_node",
        "add_nodes",
        "find_node",
        "remove_node",
        "list_nodes",
        "add_edge",
        "add_edges",
        "find_edges",
        "remove_edge",
        "get_neighbors",
        "shortest_path",
        "all_paths",
        "pagerank",
        "connected_components",
        "find_cycles",
        "transitive_reduction",
        "degree_centrality",
        "betweenness",
        "subgraph",
        "describe_graph",
        "import_graph_text",
        "export_graph_text",
    }
    assert expected <= set(tools)
    add = tools["add_node"]
    assert add.input_schema["properties"]["graph"]["pattern"] == GRAPH_NAME_PATTERN
    assert add.output_schema is not None and "created" in add.output_schema["properties"]
    assert tools["remove_node"].annotations is not None
    assert tools["remove_node"].annotations.destructive_hint is True
    assert tools["pagerank"].annotations is not None
    assert tools["pagerank"].annotations.read_only_hint is True


async def test_example_1_and_3_through_mcp(engine_client: Client, namespace: str) -> None:
    g = namespace
    out = await call(
        engine_client,
        "add_nodes",
        graph=g,
        nodes=[
            {"label": "LoginController", "type": "controller"},
            {"label": "AuthService", "type": "service"},
            {"label": "UserRepository", "type": "repository"},
            {"label": "PostgresDB", "type": "database"},
        ],
    )
    assert (out["added"], out["existing"]) == (4, 0)
    out = await call(
        engine_client,
        "add_edges",
        graph=g,
        edges=[
            {"source": "LoginController", "target": "AuthService", "relation": "calls"},
            {"source": "AuthService", "target": "UserRepository", "relation": "queries"},
            {"source": "UserRepository", "target": "PostgresDB", "relation": "connects"},
        ],
    )
    assert (out["added"], out["failed"]) == (3, [])
    path = await call(
        engine_client, "shortest_path", graph=g, source="LoginController", target="PostgresDB"
    )
    assert path["path"] == ["LoginController", "AuthService", "UserRepository", "PostgresDB"]
    assert path["length"] == 3
    edge = await call(
        engine_client,
        "add_edge",
        graph=g,
        source="auth service",
        target="user repo",
        relation="validates_with",
    )
    assert edge["edge"] == {
        "source": "AuthService",
        "target": "UserRepository",
        "relation": "validates_with",
        "properties": {},
    }
    assert edge["created"] is True
    assert (edge["source_matched"], edge["target_matched"]) == ("AuthService", "UserRepository")


async def test_ambiguous_and_missing_names_are_tool_errors(
    engine_client: Client, namespace: str
) -> None:
    await call(
        engine_client,
        "add_nodes",
        graph=namespace,
        nodes=[{"label": n} for n in ("AuthService", "PaymentService", "EmailService", "Database")],
    )
    with anyio.fail_after(30):
        result = await engine_client.call_tool(
            "add_edge",
            {
                "graph": namespace,
                "source": "Service",
                "target": "Database",
                "relation": "connects_to",
            },
        )
    assert result.is_error
    text = text_of(result)
    assert text.startswith("Ambiguous name")
    assert all(n in text for n in ("AuthService", "PaymentService", "EmailService"))
    with anyio.fail_after(30):
        result = await engine_client.call_tool(
            "remove_node", {"graph": namespace, "label": "Kafka"}
        )
    assert result.is_error and text_of(result).startswith("Not found")


async def test_example_5_dot_import_then_pagerank(engine_client: Client, namespace: str) -> None:
    dot = (
        "digraph {\n  api -> auth;\n  api -> users;\n  auth -> database;\n  users -> database;\n}\n"
    )
    out = await call(engine_client, "import_graph_text", graph=namespace, format="dot", content=dot)
    assert (out["nodes_added"], out["edges_added"]) == (4, 4)
    ranks = await call(engine_client, "pagerank", graph=namespace, top_n=3)
    assert ranks["rankings"][0]["label"] == "database"
    assert len(ranks["rankings"]) == 3
    exported = await call(engine_client, "export_graph_text", graph=namespace, format="json")
    assert (exported["node_count"], exported["edge_count"]) == (4, 4)
    assert "database" in json.dumps(json.loads(exported["content"]))


async def test_default_graph_is_the_scratch_graph_default(
    engine_client: Client, store: FalkorStore
) -> None:
    try:
        out = await call(engine_client, "add_node", label="LonelyNode")
        assert out["created"] is True
        meta = await store.metadata("default")
        assert meta["kind"] == "scratch"
    finally:
        await store.delete_graph("default")


async def test_bad_arguments_say_what_to_fix(engine_client: Client) -> None:
    with anyio.fail_after(10):
        result = await engine_client.call_tool("add_node", {"label": "X", "graph": "bad name!"})
    assert result.is_error and "graph" in text_of(result)
    with anyio.fail_after(10):
        result = await engine_client.call_tool("get_neighbors", {"node": "X", "direction": "up"})
    assert result.is_error and "direction" in text_of(result)


async def test_transitive_reduction_is_annotated_destructive(engine_client: Client) -> None:
    tools = {t.name: t for t in (await engine_client.list_tools()).tools}
    hints = tools["transitive_reduction"].annotations
    assert hints is not None
    assert hints.destructive_hint is True and hints.read_only_hint is False


async def test_add_nodes_over_the_batch_cap_names_the_limit(engine_client: Client) -> None:
    from polyg_shared.engine import MAX_ADD_BATCH

    nodes = [{"label": f"n{i}"} for i in range(MAX_ADD_BATCH + 1)]
    with anyio.fail_after(30):
        result = await engine_client.call_tool("add_nodes", {"nodes": nodes})
    assert result.is_error
    assert f"at most {MAX_ADD_BATCH} items" in text_of(result)
    assert "- nodes:" in text_of(result)


async def test_the_scratch_ttl_setting_reaches_the_engine(
    store: FalkorStore, server_settings: Settings, embedder: Embedder, namespace: str
) -> None:
    settings = server_settings.model_copy(update={"scratch_ttl_s": 1.0})
    ctx = ServerContext(store=store, settings=settings, embedder=embedder)
    idle, busy = f"{namespace}_idle", f"{namespace}_busy"
    try:
        async with Client(create_server(ctx, profiles="engine")) as client:
            await call(client, "add_node", label="left alone", graph=idle)
            # Each call uses `busy`, which runs the expiry; `idle` goes once it has been
            # unused for longer than the TTL (bounded wait).
            with anyio.fail_after(30):
                while idle in await store.list_graphs():
                    await call(client, "add_node", label="still here", graph=busy)
                    await anyio.sleep(0.2)
            assert busy in await store.list_graphs()
    finally:
        for ns in (idle, busy):
            await store.delete_graph(ns)
