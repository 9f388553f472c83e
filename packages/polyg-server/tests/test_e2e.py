"""Seed 000's E2E table through the real SDK client: handshake, error handling (invalid
params, FalkorDB down, LLM timeout) with the server still serving, concurrent clients
over Streamable HTTP, and remember + recall over stdio against the real process."""

from __future__ import annotations

import socket
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from polyg_core.config import Settings, StorageSettings
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.storage.embedded import EmbeddedFalkorDB
from polyg_core.storage.store import FalkorStore
from polyg_core.testing.llm_server import Reply, ScriptedLLMServer
from polyg_server.app import create_server
from polyg_server.context import ServerContext
from polyg_server.http import create_http_app
from polyg_server.testing import serving, stdio_server, text_of

pytestmark = pytest.mark.anyio


async def seed(ctx: ServerContext, ns: str) -> None:
    mem = ctx.require_memory()
    await mem.entities.add(ns, "auth-service", "Service")
    await mem.entities.add(ns, "deploy-v2.3.1", "Deployment")
    await mem.entities.link(ns, "deploy-v2.3.1", "auth-service", "deployed_to")
    await mem.temporal.add_event(
        ns, "Auth service crashed", "2026-01-07T14:05:00Z", entities=["auth-service"]
    )
    await mem.causal.add_link(
        ns, "deploy-v2.3.1", "missing AUTH_SECRET", 0.88, entities=["deploy-v2.3.1"]
    )
    await mem.causal.add_link(
        ns, "missing AUTH_SECRET", "auth service crash", 0.95, entities=["auth-service"]
    )


async def test_handshake_lists_tools_by_profile_and_resources(memory_client: Client) -> None:
    with anyio.fail_after(20):
        assert memory_client.server_info is not None
        tools = {t.name: t for t in (await memory_client.list_tools()).tools}
        resources = await memory_client.list_resources()
        templates = await memory_client.list_resource_templates()
    memory = {"recall", "remember", "add_entity", "update_entity", "link_entities", "add_event"}
    memory |= {"add_fact", "invalidate_fact", "add_concept", "add_causal_link", "delete_node"}
    reads = {"get_entity", "query_timeline", "get_causal_chain", "explain_why"}
    magma = {"semantic_search", "entity_lookup", "temporal_expand", "causal_expand"}
    magma |= {"subgraph_merge", "linearize_context"}
    admin = {"get_statistics", "clear_graph", "export_graph", "import_graph", "list_graphs"}
    admin |= {"delete_graph", "get_graph_info"}
    assert memory | reads | magma | admin <= set(tools)
    for name in memory | reads | magma | admin:
        tool = tools[name]
        assert tool.description and len(tool.description) > 60, name
        assert tool.output_schema is not None, name
        assert name == "list_graphs" or "graph" in tool.input_schema["properties"], name
        assert tool.annotations is not None, name
    assert tools["delete_node"].annotations.destructive_hint is True  # type: ignore[union-attr]
    assert tools["clear_graph"].annotations.destructive_hint is True  # type: ignore[union-attr]
    assert tools["get_entity"].annotations.read_only_hint is True  # type: ignore[union-attr]
    assert "polyg://graphs" in {str(r.uri) for r in resources.resources}
    assert "polyg://stats/{graph}" in {t.uri_template for t in templates.resource_templates}


async def test_profiles_select_the_tool_groups(memory_ctx: ServerContext) -> None:
    async with Client(create_server(memory_ctx, profiles="magma")) as client:
        with anyio.fail_after(20):
            names = {t.name for t in (await client.list_tools()).tools}
    assert {"semantic_search", "linearize_context"} <= names
    assert not names & {"recall", "remember", "add_node", "get_entity", "get_statistics"}


async def test_invalid_params_are_tool_errors_naming_the_fields_and_serving_goes_on(
    memory_client: Client, memory_ctx: ServerContext, namespace: str
) -> None:
    await seed(memory_ctx, namespace)
    with anyio.fail_after(30):
        missing = await memory_client.call_tool("recall", {})
        bad = await memory_client.call_tool(
            "add_causal_link", {"cause": "a", "effect": "b", "confidence": 2}
        )
        wrong_enum = await memory_client.call_tool("clear_graph", {"which": "everything"})
        unknown = await memory_client.call_tool("get_entity", {"entity": "zzz-nothing-like-it"})
        concept_id = await memory_client.call_tool("causal_expand", {"nodes": ["   "]})
        good = await memory_client.call_tool("get_entity", {"entity": "auth-service"})
    assert missing.is_error and "- question: Field required" in text_of(missing)
    assert bad.is_error and "- confidence:" in text_of(bad) and "<= 1" in text_of(bad)
    assert wrong_enum.is_error and "'entity'" in text_of(wrong_enum)
    assert unknown.is_error and text_of(unknown).startswith("Not found:")
    assert concept_id.is_error
    assert not good.is_error
    assert good.structured_content["relationships"][0]["relationship_type"] == "deployed_to"


async def test_destructive_tools_need_confirm(
    memory_client: Client, memory_ctx: ServerContext, namespace: str
) -> None:
    await seed(memory_ctx, namespace)
    with anyio.fail_after(30):
        refused = await memory_client.call_tool("delete_node", {"node": "auth-service"})
        still = await memory_client.call_tool("get_entity", {"entity": "auth-service"})
        cleared = await memory_client.call_tool("clear_graph", {"which": "causal"})
        done = await memory_client.call_tool(
            "delete_node", {"node": "auth-service", "confirm": True}
        )
        gone = await memory_client.call_tool("get_entity", {"entity": "auth-service"})
    assert refused.is_error and "confirm: true" in text_of(refused)
    assert not still.is_error
    assert cleared.is_error and "POLYG_ALLOW_DESTRUCTIVE" in text_of(cleared)
    assert done.structured_content["deleted"] is True
    assert done.structured_content["label"] == "E_Entity"
    assert gone.is_error


async def test_explain_why_answers_with_the_chain_and_path_confidence(
    memory_client: Client, memory_ctx: ServerContext, namespace: str
) -> None:
    await seed(memory_ctx, namespace)
    with anyio.fail_after(30):
        by_effect = await memory_client.call_tool("explain_why", {"effect": "auth service crash"})
        by_entity = await memory_client.call_tool("explain_why", {"effect": "auth-service"})
    data = by_effect.structured_content
    assert data["root_causes"] == ["deploy-v2.3.1"]
    best = data["explanations"][0]
    assert [s["confidence"] for s in best["steps"]] == [0.88, 0.95]
    assert best["confidence"] == pytest.approx(0.88 * 0.95)
    assert "missing AUTH_SECRET" in data["answer"] and "0.84" in data["answer"]
    assert by_entity.structured_content["root_causes"] == ["deploy-v2.3.1"]


async def test_semantic_search_puts_seed_entity_ids_first_with_the_next_tools(
    memory_client: Client, memory_ctx: ServerContext, namespace: str
) -> None:
    await seed(memory_ctx, namespace)
    await memory_ctx.require_memory().semantic.add_concept(
        namespace, "secrets", "configuration secrets of services", entities=["auth-service"]
    )
    with anyio.fail_after(30):
        found = await memory_client.call_tool(
            "semantic_search", {"query": "configuration secrets", "min_score": 0.3}
        )
    assert text_of(found).startswith('{"seed_entity_ids":')
    data = found.structured_content
    auth = (await memory_ctx.require_memory().entities.get(namespace, "auth-service")).uuid
    assert auth in data["seed_entity_ids"]
    assert "causal_expand" in data["instruction"]
    concept = next(h for h in data["hits"] if h["label"] == "S_Concept")
    assert concept["linked_entity_ids"] == [auth]


async def test_memory_tools_without_an_embedder_say_how_to_get_one(client: Client) -> None:
    with anyio.fail_after(10):
        result = await client.call_tool("get_entity", {"entity": "x"})
    assert result.is_error and "EMBEDDING_MODEL" in text_of(result)


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_falkordb_unavailable_is_a_tool_error_and_the_server_keeps_serving(
    closed_port: int, cached_embedder: Embedder
) -> None:
    storage = StorageSettings(host="127.0.0.1", port=closed_port, max_retries=0)
    dead = FalkorStore(storage)
    ctx = ServerContext(
        store=dead, settings=Settings(storage=storage, tools="all"), embedder=cached_embedder
    )
    try:
        async with Client(create_server(ctx)) as client:
            with anyio.fail_after(30):
                recall = await client.call_tool("recall", {"question": "Why did it fail?"})
                entity = await client.call_tool("get_entity", {"entity": "auth-service"})
                listed = await client.list_tools()
                again = await client.call_tool("list_graphs", {})
    finally:
        await dead.close()
    for result in (recall, entity, again):
        assert result.is_error
        assert text_of(result).startswith("Storage unavailable:")
        assert "Retry the call once FalkorDB is reachable" in text_of(result)
    assert listed.tools


async def test_llm_timeout_degrades_recall_and_the_server_keeps_serving(
    store: FalkorStore, server_settings: Settings, cached_embedder: Embedder, namespace: str
) -> None:
    async with ScriptedLLMServer(responder=lambda _messages: Reply.slow(2.0)) as llm_server:
        llm = llm_server.provider(timeout_s=0.5, max_retries=0)
        memory = Memory(
            store=store,
            embedder=cached_embedder,
            llm=llm,
            settings=server_settings,
            namespace=namespace,
        )
        ctx = ServerContext(
            store=store, settings=server_settings, embedder=cached_embedder, memory=memory
        )
        await seed(ctx, namespace)
        async with Client(create_server(ctx)) as client:
            with anyio.fail_after(40):
                result = await client.call_tool(
                    "recall", {"question": "Why did the auth service crash?"}
                )
                after = await client.call_tool("get_entity", {"entity": "auth-service"})
    assert not result.is_error, text_of(result)
    data = result.structured_content
    assert data["degraded"] is True
    assert any(r.startswith("classifier:") for r in data["degraded_reasons"])
    assert data["answer"]
    assert "AUTH_SECRET" in data["answer"]
    assert not after.is_error


async def test_ten_concurrent_http_clients_issue_mixed_calls_without_errors(
    memory_ctx: ServerContext, namespace: str
) -> None:
    await seed(memory_ctx, namespace)
    app = create_http_app(create_server(memory_ctx), memory_ctx)
    failures: list[str] = []
    answered: list[int] = []

    async def one_client(url: str, i: int) -> None:
        calls: list[tuple[str, dict[str, Any]]] = [
            ("get_entity", {"entity": "auth-service"}),
            (
                "add_event",
                {
                    "description": f"probe {i}",
                    "occurred_at": "2026-01-08T00:00:00Z",
                    "entities": ["auth-service"],
                },
            ),
            ("query_timeline", {"entity": "auth-service"}),
            ("get_causal_chain", {"node": "auth service crash"}),
            ("explain_why", {"effect": "auth service crash"}),
            ("get_statistics", {}),
        ]
        async with httpx2.AsyncClient(timeout=30) as http_client:
            transport = streamable_http_client(f"{url}/mcp", http_client=http_client)
            async with Client(transport) as client:
                for name, args in calls:
                    result = await client.call_tool(name, args)
                    if result.is_error:
                        failures.append(f"{name}: {text_of(result)}")
                answered.append(i)

    async with serving(app) as url:
        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                for i in range(10):
                    tg.start_soon(one_client, url, i)
    assert failures == []
    assert sorted(answered) == list(range(10))
    events = await memory_ctx.require_memory().temporal.timeline(namespace, entity="auth-service")
    assert {f"probe {i}" for i in range(10)} <= {e.description for e in events}


async def test_stdio_process_remembers_and_recalls(
    falkordb_server: EmbeddedFalkorDB, namespace: str
) -> None:
    params = stdio_server(falkordb_server.data_dir, namespace)
    with anyio.fail_after(90):
        async with Client(params) as client:
            stored = await client.call_tool(
                "remember",
                {
                    "content": "The deploy of billing-service failed because DATABASE_URL was "
                    "missing.",
                    "reference_time": "2026-01-10T12:00:00Z",
                },
            )
            answer = await client.call_tool(
                "recall", {"question": "Why did the deploy of billing-service fail?"}
            )
    assert not stored.is_error, text_of(stored)
    assert stored.structured_content["created"] is True
    assert not answer.is_error, text_of(answer)
    data = answer.structured_content
    assert data["degraded"] is True  # no LLM_MODEL in the process's environment
    assert "DATABASE_URL" in data["answer"]
