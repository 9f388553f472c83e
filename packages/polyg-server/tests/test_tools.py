from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client
from polyg_core.errors import Candidate, NodeNotFound
from polyg_core.storage.store import FalkorStore
from polyg_server.app import create_server
from polyg_server.context import ServerContext
from polyg_server.registry import (
    READ_ONLY,
    WRITE,
    PolygServer,
    ToolInput,
    ToolSpec,
    list_tool_specs,
    register_tool,
)
from polyg_server.testing import text_of
from polyg_shared.types import GRAPH_NAME_PATTERN
from pydantic import BaseModel

pytestmark = pytest.mark.anyio


async def seed(store: FalkorStore, ns: str) -> None:
    await store.ensure_schema(ns)
    await store.query(
        ns,
        "CREATE (a:E_Entity {uuid: 'e1', name: 'auth-service'}), "
        "(b:E_Entity {uuid: 'e2', name: 'api-gateway'}), "
        "(a)-[:E_RELATES {relationship_type: 'calls'}]->(b), "
        "(ev:T_Event {uuid: 't1', description: 'deploy'})-[:X_INVOLVES]->(a)",
    )


async def test_tools_list_shows_input_and_output_schemas_and_annotations(client: Client) -> None:
    with anyio.fail_after(10):
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert {"get_statistics", "list_graphs", "delete_graph", "get_graph_info"} <= set(tools)
    stats = tools["get_statistics"]
    assert stats.input_schema["type"] == "object"
    assert stats.input_schema["additionalProperties"] is False
    assert stats.input_schema["properties"]["graph"]["pattern"] == GRAPH_NAME_PATTERN
    assert stats.output_schema is not None
    assert {"graphs", "cross_links", "total_nodes"} <= set(stats.output_schema["properties"])
    assert stats.annotations is not None and stats.annotations.read_only_hint is True
    delete = tools["delete_graph"]
    assert delete.annotations is not None
    assert delete.annotations.destructive_hint is True
    assert delete.annotations.read_only_hint is False
    assert "confirm" in delete.input_schema["properties"]


async def test_get_statistics_counts_nodes_edges_and_cross_links(
    client: Client, store: FalkorStore, namespace: str
) -> None:
    await seed(store, namespace)
    with anyio.fail_after(10):
        result = await client.call_tool("get_statistics", {})
    assert not result.is_error, text_of(result)
    data = result.structured_content
    assert data["namespace"] == namespace
    assert data["graphs"]["entity"]["nodes"] == 2
    assert data["graphs"]["entity"]["edges"] == 1
    assert data["graphs"]["temporal"]["nodes"] == 1
    assert data["cross_links"]["X_INVOLVES"] == 1
    assert data["total_nodes"] == 3


async def test_list_graphs_shows_kind_counts_and_times(
    client: Client, store: FalkorStore, namespace: str
) -> None:
    await seed(store, namespace)
    with anyio.fail_after(10):
        result = await client.call_tool("list_graphs", {})
    assert not result.is_error, text_of(result)
    graphs = {g["name"]: g for g in result.structured_content["graphs"]}
    mine = graphs[namespace]
    assert mine["kind"] == "memory"
    assert mine["is_default"] is True
    assert (mine["node_count"], mine["edge_count"]) == (3, 2)
    assert mine["created_at"].endswith("Z")


async def test_get_graph_info_reports_counts_of_a_named_graph(
    client: Client, store: FalkorStore, namespace: str
) -> None:
    other = namespace + "_info"
    try:
        await seed(store, other)
        with anyio.fail_after(10):
            result = await client.call_tool("get_graph_info", {"graph": other})
            missing = await client.call_tool("get_graph_info", {"graph": other + "_none"})
    finally:
        await store.delete_graph(other)
    assert not result.is_error, text_of(result)
    info = result.structured_content
    assert (info["exists"], info["is_default"], info["node_count"]) == (True, False, 3)
    assert info["graphs"]["entity"]["edges"] == 1
    assert missing.structured_content["exists"] is False


async def test_delete_graph_deletes_a_named_graph(
    client: Client, store: FalkorStore, namespace: str
) -> None:
    other = namespace + "_del"
    await seed(store, other)
    with anyio.fail_after(10):
        result = await client.call_tool("delete_graph", {"graph": other, "confirm": True})
        again = await client.call_tool("delete_graph", {"graph": other, "confirm": True})
    assert result.structured_content["deleted"] is True
    assert other not in await store.list_graphs()
    assert again.structured_content["deleted"] is False
    assert "list_graphs" in again.structured_content["message"]


async def test_delete_graph_refuses_the_default_graph_without_confirm(
    client: Client, store: FalkorStore, namespace: str
) -> None:
    await seed(store, namespace)
    with anyio.fail_after(10):
        refused = await client.call_tool("delete_graph", {})
    assert refused.is_error
    assert "confirm: true" in text_of(refused)
    assert namespace in await store.list_graphs()
    with anyio.fail_after(10):
        done = await client.call_tool("delete_graph", {"confirm": True})
    assert done.structured_content == {
        "graph": namespace,
        "deleted": True,
        "message": f"deleted graph {namespace!r} and everything in it",
    }
    assert namespace not in await store.list_graphs()


async def test_invalid_arguments_name_each_field_and_the_server_keeps_serving(
    client: Client,
) -> None:
    with anyio.fail_after(10):
        bad = await client.call_tool(
            "delete_graph", {"graph": "no spaces allowed", "confirm": "maybe", "force": 1}
        )
        good = await client.call_tool("get_statistics", {})
    assert bad.is_error
    text = text_of(bad)
    assert "- graph: invalid graph name 'no spaces allowed'" in text
    assert "- confirm:" in text and "boolean" in text
    assert "- force: unknown argument" in text
    assert not good.is_error


async def test_graph_argument_passed_as_number_is_a_tool_error(client: Client) -> None:
    with anyio.fail_after(10):
        result = await client.call_tool("get_statistics", {"graph": 42})
    assert result.is_error
    assert "graph" in text_of(result)


class EchoIn(ToolInput):
    name: str


class EchoOut(BaseModel):
    echoed: str
    namespace: str


async def _boom(ctx: ServerContext, inp: EchoIn) -> EchoOut:
    raise RuntimeError("secret internal detail")


async def _not_found(ctx: ServerContext, inp: EchoIn) -> EchoOut:
    raise NodeNotFound("entity", inp.name, [Candidate("u1", "auth-service", "E_Entity", 0.81)])


async def _echo(ctx: ServerContext, inp: EchoIn) -> EchoOut:
    return EchoOut(echoed=inp.name, namespace=ctx.namespace(inp.graph))


async def _wrong_shape(ctx: ServerContext, inp: EchoIn) -> Any:
    return {"echoed": 3}


def _spec(name: str, handler: Any, profile: str = "memory") -> ToolSpec[Any, Any]:
    return ToolSpec(
        name=name,
        description=f"test tool {name}",
        input_model=EchoIn,
        output_model=EchoOut,
        handler=handler,
        annotations=WRITE,
        profile=profile,
    )


async def test_handler_exception_is_an_internal_error_and_the_server_survives(
    mcp_server: PolygServer, caplog: pytest.LogCaptureFixture
) -> None:
    register_tool(mcp_server, _spec("boom", _boom))
    register_tool(mcp_server, _spec("wrong_shape", _wrong_shape))
    async with Client(mcp_server) as c:
        with anyio.fail_after(10):
            boom = await c.call_tool("boom", {"name": "x"})
            shape = await c.call_tool("wrong_shape", {"name": "x"})
            after = await c.call_tool("get_statistics", {})
    assert boom.is_error and "internal error (logged" in text_of(boom)
    assert "secret internal detail" not in text_of(boom)
    assert "secret internal detail" in caplog.text  # the traceback went to the log
    assert shape.is_error and "internal error (logged" in text_of(shape)
    assert not after.is_error


async def test_polyg_errors_become_tool_errors_with_candidates(mcp_server: PolygServer) -> None:
    register_tool(mcp_server, _spec("find", _not_found))
    async with Client(mcp_server) as c:
        with anyio.fail_after(10):
            result = await c.call_tool("find", {"name": "auth svc"})
    assert result.is_error
    text = text_of(result)
    assert text.startswith("Not found: No entity named 'auth svc'.")
    assert "'auth-service' (0.81)" in text


async def test_a_registered_tool_returns_structured_content(
    mcp_server: PolygServer, namespace: str
) -> None:
    assert register_tool(mcp_server, _spec("echo", _echo))
    async with Client(mcp_server) as c:
        with anyio.fail_after(10):
            result = await c.call_tool("echo", {"name": "hi", "graph": "g.1"})
            default = await c.call_tool("echo", {"name": "hi"})
    assert result.structured_content == {"echoed": "hi", "namespace": "g.1"}
    assert default.structured_content == {"echoed": "hi", "namespace": namespace}
    assert '"echoed":"hi"' in text_of(result)


async def test_registering_a_duplicate_name_is_refused(mcp_server: PolygServer) -> None:
    register_tool(mcp_server, _spec("echo", _echo))
    with pytest.raises(ValueError, match="already registered"):
        register_tool(mcp_server, _spec("echo", _echo))


async def test_profiles_filter_tools(server_ctx: ServerContext) -> None:
    specs = [
        _spec("m", _echo, "memory"),
        _spec("g", _echo, "retrieval"),
        _spec("e", _echo, "scratch"),
    ]
    only_memory = create_server(server_ctx, profiles={"memory"}, tools=specs)
    names = {t.name for t in await only_memory.list_tools()}
    assert names == {"m"}
    two = create_server(server_ctx, profiles="magma,engine", tools=specs)
    assert {t.name for t in await two.list_tools()} == {"g", "e"}
    mixed = create_server(server_ctx, profiles="scratch,m", tools=specs)
    assert {t.name for t in await mixed.list_tools()} == {"m", "e"}
    everything = create_server(server_ctx, profiles="all")
    admin = {t.name for t in await everything.list_tools()}
    assert {"get_statistics", "list_graphs"} <= admin
    scratch_only = create_server(server_ctx, profiles={"scratch"})
    assert "get_statistics" not in {t.name for t in await scratch_only.list_tools()}


async def test_list_tool_specs_gives_schemas_for_docs(mcp_server: PolygServer) -> None:
    register_tool(mcp_server, _spec("echo", _echo, "scratch"))
    specs = {s["name"]: s for s in await list_tool_specs(mcp_server)}
    echo = specs["echo"]
    assert echo["inputSchema"]["required"] == ["name"]
    assert echo["outputSchema"]["required"] == ["echoed", "namespace"]
    assert echo["annotations"] == {
        "readOnlyHint": False,
        "destructiveHint": False,
        "idempotentHint": False,
    }
    assert echo["profile"] == "scratch"
    assert specs["get_statistics"]["annotations"] == READ_ONLY.model_dump(
        by_alias=True, exclude_none=True
    )


async def test_resources_list_graphs_and_statistics(
    client: Client, store: FalkorStore, namespace: str
) -> None:
    await seed(store, namespace)
    with anyio.fail_after(10):
        graphs = await client.read_resource("polyg://graphs")
        stats = await client.read_resource(f"polyg://stats/{namespace}")
        templates = await client.list_resource_templates()
    import json

    listed = json.loads(graphs.contents[0].text)  # type: ignore[union-attr]
    assert namespace in listed["graphs"]
    counted = json.loads(stats.contents[0].text)  # type: ignore[union-attr]
    assert counted["graphs"]["entity"]["nodes"] == 2
    assert [t.uri_template for t in templates.resource_templates] == ["polyg://stats/{graph}"]
