"""One guard for the whole HTTP app: every route checks Host, Origin and the API key.

A DNS-rebinding page reaches a loopback server under a foreign Host name; before
the guard covered every route, `/api/search` answered it with memory content.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx
import pytest
from polyg_core.config import Settings
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.storage.store import FalkorStore
from polyg_server.context import ServerContext
from polyg_server.http import host_allowed
from polyg_server.testing import INITIALIZE, MCP_HEADERS, serving
from pydantic import SecretStr
from starlette.types import ASGIApp

pytestmark = pytest.mark.anyio

KEY = "guard-key-0123456789-secret"

# Every route of the app: (method, path, JSON body).
ROUTES: list[tuple[str, str, Any]] = [
    ("POST", "/mcp", INITIALIZE),
    ("GET", "/mcp", None),
    ("GET", "/health", None),
    ("GET", "/ui", None),
    ("GET", "/ui/login", None),
    ("POST", "/ui/login", {"key": "x"}),
    ("POST", "/ui/logout", None),
    ("GET", "/ui/static/app.js", None),
    ("GET", "/api/graphs", None),
    ("GET", "/api/graph", None),
    ("GET", "/api/node/auth-service", None),
    ("GET", "/api/search?q=password", None),
    ("GET", "/api/timeline", None),
    ("POST", "/api/recall", {"question": "what is the password?"}),
]
# Routes that carry memory data (or run tools): they need the key.
DATA_ROUTES = [r for r in ROUTES if r[1].startswith(("/mcp", "/api/"))]


@pytest.fixture
def seed(store: FalkorStore, cached_embedder: Embedder) -> Callable[[Settings], Awaitable[None]]:
    async def add(settings: Settings) -> None:
        ctx = ServerContext(store=store, settings=settings, embedder=cached_embedder)
        await ctx.require_memory().entities.add(settings.namespace, "password-vault", "Service")

    return add


async def call(
    http: httpx.AsyncClient, url: str, route: tuple[str, str, Any], headers: dict[str, str]
) -> httpx.Response:
    method, path, body = route
    return await http.request(method, f"{url}{path}", json=body, headers={**MCP_HEADERS, **headers})


async def test_a_foreign_host_is_refused_on_every_route_without_an_api_key(
    make_app: Callable[[Settings], ASGIApp],
    seed: Callable[[Settings], Awaitable[None]],
    server_settings: Settings,
) -> None:
    await seed(server_settings)
    async with serving(make_app(server_settings)) as url, httpx.AsyncClient() as http:
        port = url.rsplit(":", 1)[1]
        with anyio.fail_after(60):
            foreign = [await call(http, url, r, {"Host": f"evil.example:{port}"}) for r in ROUTES]
            bare = [await call(http, url, r, {"Host": "evil.example"}) for r in ROUTES]
            own = await http.get(f"{url}/api/search?q=password", headers={"Host": "localhost"})
    for route, answer in zip(ROUTES * 2, foreign + bare, strict=True):
        assert answer.status_code == 421, (route, answer.status_code, answer.text[:200])
        assert "password-vault" not in answer.text
        assert "POLYG_ALLOWED_HOSTS" in answer.json()["message"]
    assert own.status_code == 200 and "password-vault" in own.text


async def test_allowed_hosts_setting_adds_a_name(
    make_app: Callable[[Settings], ASGIApp],
    seed: Callable[[Settings], Awaitable[None]],
    server_settings: Settings,
) -> None:
    settings = server_settings.model_copy(update={"allowed_hosts": "polyg.internal"})
    async with serving(make_app(settings)) as url, httpx.AsyncClient() as http:
        with anyio.fail_after(20):
            named = await http.get(f"{url}/api/graphs", headers={"Host": "polyg.internal:80"})
            other = await http.get(f"{url}/api/graphs", headers={"Host": "other.internal"})
    assert named.status_code == 200
    assert other.status_code == 421


async def test_a_foreign_origin_is_refused_on_every_route(
    make_app: Callable[[Settings], ASGIApp],
    seed: Callable[[Settings], Awaitable[None]],
    server_settings: Settings,
) -> None:
    await seed(server_settings)
    async with serving(make_app(server_settings)) as url, httpx.AsyncClient() as http:
        with anyio.fail_after(60):
            answers = [await call(http, url, r, {"Origin": "https://evil.example"}) for r in ROUTES]
    for route, answer in zip(ROUTES, answers, strict=True):
        assert answer.status_code == 403, (route, answer.status_code, answer.text[:200])
        assert "password-vault" not in answer.text


@pytest.mark.parametrize("key", [None, "wrong-key"], ids=["no-key", "wrong-key"])
async def test_every_data_route_needs_the_key_and_open_routes_carry_no_data(
    make_app: Callable[[Settings], ASGIApp],
    seed: Callable[[Settings], Awaitable[None]],
    server_settings: Settings,
    key: str | None,
) -> None:
    # 15 wrong keys in a row (the login form tries two): the wait they earn is tested apart.
    settings = server_settings.model_copy(
        update={"api_key": SecretStr(KEY), "auth_free_failures": 100}
    )
    await seed(settings)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with serving(make_app(settings)) as url, httpx.AsyncClient() as http:
        with anyio.fail_after(60):
            answers = [await call(http, url, r, headers) for r in ROUTES]
            authed = await http.get(
                f"{url}/api/search?q=password", headers={"Authorization": f"Bearer {KEY}"}
            )
    for route, answer in zip(ROUTES, answers, strict=True):
        assert "password-vault" not in answer.text, route
        if route in DATA_ROUTES:
            assert answer.status_code == 401, (route, answer.status_code)
    by_path = {r[1]: a for r, a in zip(ROUTES, answers, strict=True)}
    assert by_path["/health"].json() == {"status": "ok"}
    assert 'name="key"' in by_path["/ui"].text  # the login form, not the explorer
    assert authed.status_code == 200 and "password-vault" in authed.text


async def test_a_key_in_the_query_string_is_refused_and_never_logged(
    make_app: Callable[[Settings], ASGIApp],
    seed: Callable[[Settings], Awaitable[None]],
    server_settings: Settings,
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings = server_settings.model_copy(update={"api_key": SecretStr(KEY)})
    caplog.set_level(logging.DEBUG)
    async with serving(make_app(settings)) as url, httpx.AsyncClient() as http:
        with anyio.fail_after(30):
            in_url = [
                await http.get(f"{url}/api/search?q=secret-words&key={KEY}"),
                await http.post(f"{url}/mcp?api_key={KEY}", json=INITIALIZE, headers=MCP_HEADERS),
                await http.get(f"{url}/health?token={KEY}"),
            ]
            authed = await http.get(
                f"{url}/api/search?q=secret-words", headers={"Authorization": f"Bearer {KEY}"}
            )
    assert [r.status_code for r in in_url[:2]] == [401, 401]
    assert in_url[2].json() == {"status": "ok"}
    assert authed.status_code == 200
    access = [r.getMessage() for r in caplog.records if r.name == "polyg_server.access"]
    assert any("/api/search 200" in line for line in access), access
    assert any("/mcp 401" in line for line in access), access
    # The server's records (the test's own HTTP client logs the URLs it requests).
    logged = "\n".join(
        r.getMessage() for r in caplog.records if not r.name.startswith(("httpx", "httpcore"))
    )
    assert KEY not in logged
    assert "secret-words" not in logged


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("127.0.0.1:3000", True),
        ("localhost", True),
        ("LOCALHOST:8080", True),
        ("[::1]:3000", True),
        ("evil.example:3000", False),
        ("127.0.0.1.evil.example", False),
        ("localhost:abc", False),
        ("[::1]x", False),
        ("", False),
    ],
)
def test_host_matching(host: str, expected: bool) -> None:
    assert host_allowed(host, ["127.0.0.1", "localhost", "[::1]"]) is expected
