"""HTTP security beyond the middleware unit cases in test_http.py: destructive tools over
Streamable HTTP, deep JSON bodies and format bombs, and secrets that never reach logs
or error texts."""

from __future__ import annotations

import logging
import socket
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult
from polyg_core.config import Settings, StorageSettings
from polyg_core.providers.embeddings.base import Embedder as CachedEmbedder
from polyg_core.providers.llm.litellm import LiteLLMProvider
from polyg_core.storage.store import FalkorStore
from polyg_core.testing.llm_server import Reply, ScriptedLLMServer
from polyg_server.app import create_server
from polyg_server.context import ServerContext
from polyg_server.http import create_http_app
from polyg_server.testing import serving, text_of
from pydantic import SecretStr

pytestmark = pytest.mark.anyio

KEY = "polyg-key-Zx81-do-not-log-me"
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


async def http_calls(url: str, calls: list[tuple[str, dict[str, Any]]]) -> list[CallToolResult]:
    headers = {"Authorization": f"Bearer {KEY}"}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http_client:
        transport = streamable_http_client(f"{url}/mcp", http_client=http_client)
        async with Client(transport) as client:
            return [await client.call_tool(name, args) for name, args in calls]


def secured_ctx(
    store: FalkorStore, settings: Settings, embedder: CachedEmbedder, **update: Any
) -> ServerContext:
    secured = settings.model_copy(update={"api_key": SecretStr(KEY), **update})
    return ServerContext(store=store, settings=secured, embedder=embedder)


async def seed(ctx: ServerContext, ns: str) -> None:
    mem = ctx.require_memory()
    await mem.entities.add(ns, "auth-service", "Service")
    await mem.causal.add_link(ns, "missing AUTH_SECRET", "auth service crash", 0.9)


DESTRUCTIVE_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("delete_node", {"node": "auth-service"}),
    ("clear_graph", {"which": "causal"}),
    ("delete_graph", {}),
]


async def test_destructive_tools_over_http_need_confirm(
    store: FalkorStore, server_settings: Settings, cached_embedder: CachedEmbedder, namespace: str
) -> None:
    ctx = secured_ctx(store, server_settings, cached_embedder)
    await seed(ctx, namespace)
    app = create_http_app(create_server(ctx), ctx)
    async with serving(app) as url:
        with anyio.fail_after(60):
            refused = await http_calls(url, DESTRUCTIVE_CALLS)
            still = await http_calls(url, [("get_entity", {"entity": "auth-service"})])
            confirmed = await http_calls(
                url, [(name, {**args, "confirm": True}) for name, args in DESTRUCTIVE_CALLS]
            )
    for result in refused:
        assert result.is_error and "confirm: true" in text_of(result), text_of(result)
    assert not still[0].is_error
    assert [r.is_error for r in confirmed] == [False, False, False], [text_of(r) for r in confirmed]
    assert namespace not in await store.list_graphs()


async def test_allow_destructive_lets_node_and_graph_clearing_through_over_http(
    store: FalkorStore, server_settings: Settings, cached_embedder: CachedEmbedder, namespace: str
) -> None:
    ctx = secured_ctx(store, server_settings, cached_embedder, allow_destructive=True)
    await seed(ctx, namespace)
    app = create_http_app(create_server(ctx), ctx)
    async with serving(app) as url:
        with anyio.fail_after(60):
            results = await http_calls(url, DESTRUCTIVE_CALLS[:2])
    assert [r.is_error for r in results] == [False, False], [text_of(r) for r in results]
    left = await store.query(namespace, "MATCH (n:E_Entity) RETURN count(n)", read_only=True)
    assert left.scalar() == 0


async def test_deep_json_and_bombs_over_http_are_refused_and_the_server_keeps_serving(
    store: FalkorStore, server_settings: Settings, cached_embedder: CachedEmbedder
) -> None:
    ctx = secured_ctx(store, server_settings, cached_embedder, max_body_bytes=1_000_000)
    app = create_http_app(create_server(ctx), ctx)
    deep = b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": ' + b"[" * 100_000
    deep += b"]" * 100_000 + b"}"
    csv_bomb = "source,target\n" + "".join(f"n{i},n{i + 1}\n" for i in range(200_000))
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {KEY}"}
    async with serving(app) as url, httpx.AsyncClient(timeout=30) as http:
        with anyio.fail_after(60):
            deep_reply = await http.post(f"{url}/mcp", content=deep, headers=headers)
            big = await http.post(
                f"{url}/mcp",
                json={
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/call",
                    "params": {"name": "import_graph_text", "arguments": {"content": csv_bomb}},
                },
                headers=headers,
            )
            laughs = await http_calls(
                url,
                [
                    (
                        "import_graph_text",
                        {"format": "graphml", "content": BILLION_LAUGHS, "graph": "bomb_g"},
                    )
                ],
            )
            health = await http.get(f"{url}/health")
    assert deep_reply.status_code < 500
    assert big.status_code == 413
    assert laughs[0].is_error
    refusal = text_of(laughs[0]).lower()
    assert "entit" in refusal or "dtd" in refusal, refusal
    assert "bomb_g" not in await store.list_graphs()
    assert health.status_code == 200


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<graphml><graph edgedefault="directed"><node id="&lol4;"/></graph></graphml>"""


async def test_secrets_never_reach_logs_or_error_texts(
    store: FalkorStore,
    server_settings: Settings,
    cached_embedder: CachedEmbedder,
    namespace: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    llm_key = "sk-llm-secret-4242-never-print"
    db_password = "falkor-pass-7777-never-print"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed_port = s.getsockname()[1]
    caplog.set_level(logging.DEBUG)
    async with ScriptedLLMServer(responder=lambda _m: Reply.error(401)) as llm_server:
        llm = LiteLLMProvider(
            "openai/test-model", api_base=llm_server.api_base, api_key=llm_key, max_retries=0
        )
        secured = server_settings.model_copy(update={"api_key": SecretStr(KEY)})
        ctx = ServerContext(store=store, settings=secured, embedder=cached_embedder, llm=llm)
        await seed(ctx, namespace)
        app = create_http_app(create_server(ctx), ctx)
        texts: list[str] = []
        async with serving(app) as url, httpx.AsyncClient(timeout=30) as http:
            with anyio.fail_after(60):
                for key in ("nokey", KEY[:-1], KEY + "x", KEY.upper(), f"{KEY} {KEY}"):
                    r = await http.post(
                        f"{url}/mcp",
                        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                        headers={**MCP_HEADERS, "Authorization": f"Bearer {key}"},
                    )
                    assert r.status_code == 401
                    texts.append(r.text)
                results = await http_calls(
                    url,
                    [
                        ("recall", {"question": "Why did the auth service crash?"}),
                        ("remember", {"content": "The cache failed because the disk was full."}),
                        ("get_entity", {"entity": "nothing-like-this"}),
                        ("add_entity", {"name": "x", "graph": "bad name"}),
                    ],
                )
                texts += [text_of(r) for r in results]
                texts.append((await http.get(f"{url}/health")).text)
    assert results[0].structured_content is not None
    assert results[0].structured_content["degraded"] is True  # the LLM refused the key
    # A store whose password is wrong and whose server is down: the error hides the password.
    bad_store = FalkorStore(
        StorageSettings(url=f"redis://:{db_password}@127.0.0.1:{closed_port}", max_retries=0)
    )
    bad_ctx = ServerContext(
        store=bad_store, settings=Settings(storage=bad_store.settings, tools="all")
    )
    async with Client(create_server(bad_ctx)) as client:
        with anyio.fail_after(20):
            down = await client.call_tool("get_statistics", {})
    await bad_store.close()
    texts.append(text_of(down))
    assert down.is_error and text_of(down).startswith("Storage unavailable")
    texts += [repr(secured), repr(bad_store.settings), str(secured.model_dump())]
    logged = "\n".join(
        [rec.getMessage() for rec in caplog.records]
        + [str(rec.exc_info) for rec in caplog.records if rec.exc_info]
        + [caplog.text]
    )
    for secret in (KEY, llm_key, db_password):
        assert secret not in logged, f"a secret reached the logs: {secret[:6]}..."
        for text in texts:
            assert secret not in text, f"a secret reached an error text: {text[:200]}"
    assert len(caplog.records) > 0
