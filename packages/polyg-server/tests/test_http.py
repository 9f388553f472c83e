from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from polyg_core.config import Settings, StorageSettings
from polyg_core.storage.store import FalkorStore
from polyg_server.app import create_server
from polyg_server.context import ServerContext
from polyg_server.http import HttpOptions, create_http_app, origin_allowed
from polyg_server.testing import INITIALIZE, MCP_HEADERS, serving
from pydantic import SecretStr
from starlette.types import ASGIApp

pytestmark = pytest.mark.anyio

KEY = "test-key-0123456789"


def make_app(store: FalkorStore, settings: Settings, options: HttpOptions | None = None) -> ASGIApp:
    ctx = ServerContext(store=store, settings=settings)
    return create_http_app(create_server(ctx), ctx, options)


@pytest.fixture
def secured(server_settings: Settings) -> Settings:
    return server_settings.model_copy(
        update={
            "api_key": SecretStr(KEY),
            "max_body_bytes": 2000,
            "allowed_origins": "https://app.example",
        }
    )


def bearer(key: str = KEY) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def test_bearer_token_is_required_when_an_api_key_is_set(
    store: FalkorStore, secured: Settings
) -> None:
    async with serving(make_app(store, secured)) as url, httpx.AsyncClient() as http:
        with anyio.fail_after(20):
            missing = await http.post(f"{url}/mcp", json=INITIALIZE, headers=MCP_HEADERS)
            wrong = await http.post(
                f"{url}/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **bearer("nope")}
            )
            right = await http.post(
                f"{url}/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **bearer()}
            )
    assert missing.status_code == 401
    assert missing.headers["www-authenticate"].startswith("Bearer")
    assert "Authorization: Bearer" in missing.json()["message"]
    assert wrong.status_code == 401
    assert right.status_code == 200
    assert right.headers.get("mcp-session-id")


async def test_foreign_origin_is_refused_and_configured_origins_pass(
    store: FalkorStore, secured: Settings
) -> None:
    async with serving(make_app(store, secured)) as url, httpx.AsyncClient() as http:
        with anyio.fail_after(20):
            foreign = await http.post(
                f"{url}/mcp",
                json=INITIALIZE,
                headers={**MCP_HEADERS, **bearer(), "Origin": "https://evil.example"},
            )
            allowed = await http.post(
                f"{url}/mcp",
                json=INITIALIZE,
                headers={**MCP_HEADERS, **bearer(), "Origin": "https://app.example"},
            )
            preflight = await http.options(
                f"{url}/mcp",
                headers={
                    "Origin": "https://app.example",
                    "Access-Control-Request-Method": "POST",
                    "Access-Control-Request-Headers": "authorization, content-type",
                },
            )
    assert foreign.status_code == 403
    assert "POLYG_ALLOWED_ORIGINS" in foreign.json()["message"]
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == "https://app.example"
    assert preflight.status_code == 200


async def test_oversized_bodies_are_refused_with_413(store: FalkorStore, secured: Settings) -> None:
    big = b'{"jsonrpc": "2.0", "pad": "' + b"x" * 5000 + b'"}'

    async def chunks() -> AsyncIterator[bytes]:
        for i in range(0, len(big), 500):
            yield big[i : i + 500]

    async with serving(make_app(store, secured)) as url, httpx.AsyncClient() as http:
        with anyio.fail_after(20):
            declared = await http.post(
                f"{url}/mcp", content=big, headers={**MCP_HEADERS, **bearer()}
            )
            streamed = await http.post(
                f"{url}/mcp", content=chunks(), headers={**MCP_HEADERS, **bearer()}
            )
            fine = await http.post(
                f"{url}/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **bearer()}
            )
    assert declared.status_code == 413
    assert "2000 bytes" in declared.json()["message"]
    assert "content-length" not in {k.lower() for k in streamed.request.headers}
    assert streamed.status_code == 413
    assert fine.status_code == 200


async def test_health_reports_details_only_to_authenticated_callers(
    store: FalkorStore, secured: Settings, namespace: str
) -> None:
    await store.ensure_schema(namespace)
    async with serving(make_app(store, secured)) as url, httpx.AsyncClient() as http:
        with anyio.fail_after(20):
            anonymous = await http.get(f"{url}/health")
            authed = await http.get(f"{url}/health", headers=bearer())
    assert anonymous.status_code == 200
    assert anonymous.json() == {"status": "ok"}
    body = authed.json()
    assert body["status"] == "ok" and body["falkordb"] == "ok"
    assert namespace in body["namespaces"]
    assert body["graphs"] == len(body["namespaces"])
    assert body["uptime"] >= 0


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return port


async def test_health_is_503_when_falkordb_is_unreachable(closed_port: int) -> None:
    storage = StorageSettings(host="127.0.0.1", port=closed_port, max_retries=0)
    dead = FalkorStore(storage)
    settings = Settings(storage=storage, tools="all")
    try:
        async with serving(make_app(dead, settings)) as url, httpx.AsyncClient() as http:
            with anyio.fail_after(20):
                health = await http.get(f"{url}/health")
                tool_call = await _sdk_call(url, {}, "get_statistics", {})
    finally:
        await dead.close()
    assert health.status_code == 503
    assert health.json()["status"] == "unavailable"
    assert health.json()["falkordb"] == "unreachable"
    assert tool_call.is_error
    assert tool_call.content[0].text.startswith("Storage unavailable:")  # type: ignore[union-attr]


async def _sdk_call(url: str, headers: dict[str, str], name: str, args: dict[str, Any]) -> Any:
    async with httpx2.AsyncClient(headers=headers, timeout=20) as http_client:
        transport = streamable_http_client(f"{url}/mcp", http_client=http_client)
        async with Client(transport) as client:
            return await client.call_tool(name, args)


async def test_sdk_streamable_http_client_initializes_and_calls_tools(
    store: FalkorStore, secured: Settings, namespace: str
) -> None:
    await store.ensure_schema(namespace)
    await store.query(namespace, "CREATE (:C_Node {uuid: 'c1', description: 'x'})")
    async with serving(make_app(store, secured)) as url:
        with anyio.fail_after(30):
            async with httpx2.AsyncClient(headers=bearer(), timeout=20) as http_client:
                transport = streamable_http_client(f"{url}/mcp", http_client=http_client)
                async with Client(transport) as client:
                    tools = {t.name for t in (await client.list_tools()).tools}
                    stats = await client.call_tool("get_statistics", {})
                    bad = await client.call_tool("delete_graph", {"confirm": "yes please"})
                    graphs = await client.call_tool("list_graphs", {})
    assert "get_graph_info" in tools
    assert stats.structured_content["graphs"]["causal"]["nodes"] == 1
    assert bad.is_error
    assert namespace in {g["name"] for g in graphs.structured_content["graphs"]}


async def test_session_cap_answers_503_with_retry_after(
    store: FalkorStore, server_settings: Settings
) -> None:
    options = HttpOptions(max_sessions=1, retry_after_s=7)
    async with (
        serving(make_app(store, server_settings, options)) as url,
        httpx.AsyncClient() as http,
    ):
        with anyio.fail_after(20):
            first = await http.post(f"{url}/mcp", json=INITIALIZE, headers=MCP_HEADERS)
            second = await http.post(f"{url}/mcp", json=INITIALIZE, headers=MCP_HEADERS)
            closed = await http.delete(
                f"{url}/mcp",
                headers={**MCP_HEADERS, "Mcp-Session-Id": first.headers["mcp-session-id"]},
            )
            third = await http.post(f"{url}/mcp", json=INITIALIZE, headers=MCP_HEADERS)
    assert first.status_code == 200
    assert second.status_code == 503
    assert second.headers["retry-after"] == "7"
    assert closed.status_code == 200
    assert third.status_code == 200


@pytest.mark.parametrize(
    ("origin", "allowed", "expected"),
    [
        ("http://localhost:5173", [], False),
        ("http://localhost:5173", ["http://localhost:*"], True),
        ("http://localhost.evil.example:80", ["http://localhost:*"], False),
        ("https://app.example", ["https://app.example"], True),
        ("https://app.example/", ["https://app.example"], True),
        ("https://other.example", ["https://app.example"], False),
        ("https://any.example", ["*"], True),
    ],
)
def test_origin_matching(origin: str, allowed: list[str], expected: bool) -> None:
    assert origin_allowed(origin, allowed) is expected


async def test_idle_sessions_are_closed(store: FalkorStore, server_settings: Settings) -> None:
    options = HttpOptions(session_idle_timeout_s=0.3)
    async with (
        serving(make_app(store, server_settings, options)) as url,
        httpx.AsyncClient() as http,
    ):
        with anyio.fail_after(20):
            opened = await http.post(f"{url}/mcp", json=INITIALIZE, headers=MCP_HEADERS)
            session = {"Mcp-Session-Id": opened.headers["mcp-session-id"]}
            # A timing test by nature: wait past the idle timeout, then use the session.
            await anyio.sleep(1.0)
            listed = await http.post(
                f"{url}/mcp",
                json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                headers={**MCP_HEADERS, **session, "Mcp-Protocol-Version": "2025-06-18"},
            )
    assert opened.status_code == 200
    assert listed.status_code == 404


@pytest.mark.parametrize(
    ("options", "media"),
    [(None, "application/json"), (HttpOptions(json_response=False), "text/event-stream")],
)
async def test_calls_are_answered_as_json_by_default_and_as_sse_on_request(
    store: FalkorStore, server_settings: Settings, options: HttpOptions | None, media: str
) -> None:
    app = make_app(store, server_settings, options)
    async with serving(app) as url, httpx.AsyncClient() as http:
        with anyio.fail_after(20):
            init = await http.post(f"{url}/mcp", json=INITIALIZE, headers=MCP_HEADERS)
    assert init.status_code == 200
    assert init.headers["content-type"].startswith(media)
    body = init.json() if media == "application/json" else None
    if body is not None:
        assert body["result"]["serverInfo"]["name"]
    else:
        assert '"serverInfo"' in init.text
