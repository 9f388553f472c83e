"""The explorer's JSON API and login, through httpx against the ASGI app."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest
from polyg_core.config import Settings
from polyg_core.scenarios import load_scenario
from polyg_core.storage.store import FalkorStore
from polyg_server.app import create_server
from polyg_server.context import ServerContext
from polyg_server.http import create_http_app
from polyg_server.ui import COOKIE_NAME, queries
from pydantic import SecretStr

pytestmark = pytest.mark.anyio

KEY = "ui-test-key-0123456789"


def client_for(ctx: ServerContext) -> httpx.AsyncClient:
    app = create_http_app(create_server(ctx), ctx)
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:3000"
    )


@pytest.fixture
async def scenario_ctx(memory_ctx: ServerContext) -> ServerContext:
    with anyio.fail_after(60):
        await load_scenario(
            memory_ctx.require_memory(), "deployment_failure", memory_ctx.default_namespace
        )
    return memory_ctx


@pytest.fixture
async def api(scenario_ctx: ServerContext) -> AsyncIterator[httpx.AsyncClient]:
    async with client_for(scenario_ctx) as c:
        yield c


@pytest.fixture
async def secured(
    store: FalkorStore, server_settings: Settings, cached_embedder: Any
) -> AsyncIterator[httpx.AsyncClient]:
    settings = server_settings.model_copy(update={"api_key": SecretStr(KEY)})
    ctx = ServerContext(store=store, settings=settings, embedder=cached_embedder)
    async with client_for(ctx) as c:
        yield c


async def node_named(api: httpx.AsyncClient, name: str) -> dict[str, Any]:
    page = (await api.get("/api/graph")).json()
    return next(n for n in page["nodes"] if n["name"] == name)


# -- data ---------------------------------------------------------------------------------


async def test_graph_page_has_all_four_layers_and_cross_links(api: httpx.AsyncClient) -> None:
    res = await api.get("/api/graph")
    assert res.status_code == 200
    page = res.json()
    assert {n["layer"] for n in page["nodes"]} == {"entity", "temporal", "causal"}
    assert page["counts"]["entity"] == 5
    assert page["total"] == len(page["nodes"])
    assert page["next_offset"] is None
    layers = {e["layer"] for e in page["edges"]}
    assert {"entity", "causal", "cross"} <= layers
    causal = [e for e in page["edges"] if e["type"] == "C_CAUSES"]
    assert causal and all(0 < e["confidence"] <= 1 for e in causal)
    names = {n["id"]: n["name"] for n in page["nodes"]}
    assert all(e["source"] in names and e["target"] in names for e in page["edges"])


async def test_graph_is_paged_and_filtered_by_layer(api: httpx.AsyncClient) -> None:
    first = (await api.get("/api/graph", params={"limit": 4})).json()
    assert len(first["nodes"]) == 4 and first["next_offset"] == 4
    second = (await api.get("/api/graph", params={"limit": 4, "offset": 4})).json()
    assert not {n["id"] for n in first["nodes"]} & {n["id"] for n in second["nodes"]}
    only = (await api.get("/api/graph?layer=causal&layer=entity")).json()
    assert {n["layer"] for n in only["nodes"]} == {"causal", "entity"}
    assert only["total"] == only["counts"]["causal"] + only["counts"]["entity"]
    comma = (await api.get("/api/graph", params={"layer": "temporal,entity"})).json()
    assert {n["layer"] for n in comma["nodes"]} == {"temporal", "entity"}
    capped = (await api.get("/api/graph", params={"max_edges": 2})).json()
    assert len(capped["edges"]) == 2 and capped["edges_truncated"]


async def test_node_detail_shows_properties_neighbours_and_links(
    api: httpx.AsyncClient,
) -> None:
    auth = await node_named(api, "auth-service")
    res = await api.get(f"/api/node/{auth['id']}")
    assert res.status_code == 200
    d = res.json()
    assert d["node"]["name"] == "auth-service"
    assert d["properties"]["properties"] == {"tier": "critical", "language": "python"}
    assert "embedding" not in d["properties"]
    kinds = {(n["edge"]["type"], n["direction"]) for n in d["neighbours"]}
    assert ("E_RELATES", "out") in kinds and ("E_RELATES", "in") in kinds
    assert any(n["edge"]["layer"] == "cross" for n in d["neighbours"])
    one = (await api.get(f"/api/node/{auth['id']}", params={"limit": 1})).json()
    assert len(one["neighbours"]) == 1 and one["truncated"]


async def test_unknown_node_is_404_with_a_hint(api: httpx.AsyncClient) -> None:
    res = await api.get("/api/node/no-such-uuid")
    assert res.status_code == 404
    assert "/api/search" in res.json()["message"]


async def test_search_is_fuzzy_through_the_resolver(api: httpx.AsyncClient) -> None:
    res = await api.get("/api/search", params={"q": "auth service"})
    assert res.status_code == 200
    hits = res.json()["hits"]
    assert hits[0]["name"] == "auth-service"
    assert hits[0]["how"] in ("normalized", "exact", "embedding")
    typo = (await api.get("/api/search", params={"q": "Auth-Servise"})).json()["hits"]
    assert "auth-service" in [h["name"] for h in typo[:3]]


async def test_timeline_lists_events_in_time_order_and_fact_intervals(
    api: httpx.AsyncClient,
) -> None:
    t = (await api.get("/api/timeline")).json()
    times = [e["time"] for e in t["events"]]
    assert len(times) == 10 and times == sorted(times)
    assert t["facts"] and all(f["valid_from"] is not None for f in t["facts"])
    assert any(f["valid_to"] is not None for f in t["facts"]) or t["facts"]


async def test_recall_returns_the_answer_and_the_causal_chain(api: httpx.AsyncClient) -> None:
    with anyio.fail_after(60):
        res = await api.post("/api/recall", json={"question": "Why did the auth service fail?"})
    assert res.status_code == 200
    r = res.json()
    assert r["answer"]
    chain = r["reasoning"]["causal_chain"]
    assert chain and all(0 < step["confidence"] <= 1 for step in chain)
    assert r["context"]["node_ids"]


async def test_graphs_lists_the_namespace(api: httpx.AsyncClient, namespace: str) -> None:
    res = (await api.get("/api/graphs")).json()
    assert namespace in res["graphs"] and res["default"] == namespace
    assert res["nodes"][namespace] == (await api.get("/api/graph")).json()["total"] > 0
    assert res["start"] == namespace


async def test_graphs_opens_on_the_only_namespace_with_memory_or_asks(
    memory_ctx: ServerContext, namespace: str
) -> None:
    memory = memory_ctx.require_memory()
    first, second = f"{namespace}_a", f"{namespace}_b"
    try:
        async with client_for(memory_ctx) as api:
            empty = (await api.get("/api/graphs")).json()
            assert empty["nodes"][namespace] == 0
            with anyio.fail_after(60):
                await load_scenario(memory, "deployment_failure", first)
            one = (await api.get("/api/graphs")).json()
            # Graphs other tests left in the same server count too: ours is the one to open
            # only when no other graph holds memory.
            others = {g for g, n in one["nodes"].items() if n and g != first}
            assert one["start"] == (None if others else first)
            assert one["default"] == namespace
            assert one["nodes"][first] > 0 and one["nodes"][namespace] == 0
            with anyio.fail_after(60):
                await load_scenario(memory, "incident_response", second)
            two = (await api.get("/api/graphs")).json()
            assert two["start"] is None
            assert {first, second} <= {g for g, n in two["nodes"].items() if n}
    finally:
        for name in (first, second):
            await memory_ctx.store.delete_graph(name)


def test_opening_graph_prefers_the_default_then_the_only_one_with_memory() -> None:
    assert queries.opening_graph("d", {"d": 3, "a": 5}) == "d"
    assert queries.opening_graph("d", {"d": 0, "a": 5, "s": 0}) == "a"
    assert queries.opening_graph("d", {"d": 0, "a": 5, "b": 1}) is None
    assert queries.opening_graph("d", {"d": 0, "s": 0}) == "d"
    assert queries.opening_graph("d", {"d": 0, "a": 2, "z": None}) == "a"


# -- validation and limits ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "params", "field"),
    [
        ("/api/graph", {"limit": "0"}, "limit"),
        ("/api/graph", {"limit": "10001"}, "limit"),
        ("/api/graph", {"offset": "-1"}, "offset"),
        ("/api/graph", {"layer": "social"}, "layer"),
        ("/api/graph", {"graph": "bad name!"}, "graph"),
        ("/api/graph", {"colour": "red"}, "colour"),
        ("/api/search", {}, "q"),
        ("/api/search", {"q": "x" * 201}, "q"),
        ("/api/timeline", {"limit": "5000"}, "limit"),
    ],
)
async def test_bad_query_arguments_are_422_naming_the_field(
    api: httpx.AsyncClient, path: str, params: dict[str, str], field: str
) -> None:
    res = await api.get(path, params=params)
    assert res.status_code == 422
    body = res.json()
    assert body["error"] == "invalid_arguments"
    assert f"- {field}" in body["message"]


async def test_recall_validation(api: httpx.AsyncClient) -> None:
    empty = await api.post("/api/recall", json={"question": ""})
    assert empty.status_code == 422 and "question" in empty.json()["message"]
    extra = await api.post("/api/recall", json={"question": "why?", "depth": 3})
    assert extra.status_code == 422 and "unknown argument" in extra.json()["message"]
    broken = await api.post(
        "/api/recall", content=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert broken.status_code == 400 and "not valid JSON" in broken.json()["message"]
    form = await api.post("/api/recall", data={"question": "why?"})
    assert form.status_code == 415 and "application/json" in form.json()["message"]
    listed = await api.post("/api/recall", json=["why?"])
    assert listed.status_code == 400


@pytest.mark.parametrize("depth", [100, 100_000])
async def test_recall_answers_a_deeply_nested_body_with_a_400(
    api: httpx.AsyncClient, depth: int
) -> None:
    for body in ("[" * depth + "]" * depth, '{"question": ' + "[" * depth + "]" * depth + "}"):
        with anyio.fail_after(30):
            res = await api.post(
                "/api/recall", content=body.encode(), headers={"Content-Type": "application/json"}
            )
        assert res.status_code in (400, 422), (depth, res.status_code, res.text[:200])
        assert res.json()["message"]


async def test_recall_without_an_embedder_says_how_to_fix_it(
    store: FalkorStore, server_settings: Settings
) -> None:
    async with client_for(ServerContext(store=store, settings=server_settings)) as c:
        res = await c.post("/api/recall", json={"question": "Why?"})
    assert res.status_code == 400
    assert "embedding model" in res.json()["message"]


# -- auth -----------------------------------------------------------------------------------


async def test_api_needs_the_key_when_one_is_set(secured: httpx.AsyncClient) -> None:
    for path in ("/api/graphs", "/api/graph", "/api/search?q=x", "/api/timeline"):
        res = await secured.get(path)
        assert res.status_code == 401, path
    assert (await secured.post("/api/recall", json={"question": "why?"})).status_code == 401
    ok = await secured.get("/api/graphs", headers={"Authorization": f"Bearer {KEY}"})
    assert ok.status_code == 200


async def test_the_key_is_never_accepted_in_the_query_string(
    secured: httpx.AsyncClient,
) -> None:
    for param in ("key", "api_key", "token", "access_token"):
        res = await secured.get("/api/graphs", params={param: KEY})
        assert res.status_code == 401, param
        page = await secured.get("/ui", params={param: KEY})
        assert 'action="/ui/login"' in page.text
        assert COOKIE_NAME not in page.headers.get("set-cookie", "")
    # Even an authenticated caller gets an error, not silence, for a key in a URL.
    res = await secured.get(
        "/api/graphs", params={"key": KEY}, headers={"Authorization": f"Bearer {KEY}"}
    )
    assert res.status_code == 400 and "never accepted in a URL" in res.json()["message"]
    login = await secured.get("/ui/login", params={"key": KEY})
    assert COOKIE_NAME not in login.headers.get("set-cookie", "")


async def test_cookie_login_opens_the_page_and_api_but_not_mcp(
    secured: httpx.AsyncClient,
) -> None:
    page = await secured.get("/ui")
    assert page.status_code == 200 and 'name="key"' in page.text and "app.js" not in page.text
    wrong = await secured.post("/ui/login", data={"key": "nope"})
    assert wrong.status_code == 401 and "Wrong key" in wrong.text
    assert not secured.cookies.get(COOKIE_NAME)
    res = await secured.post("/ui/login", data={"key": KEY})
    assert res.status_code == 303 and res.headers["location"] == "/ui"
    cookie = res.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie
    assert KEY not in cookie
    page = await secured.get("/ui")
    assert 'src="/ui/static/app.js' in page.text
    assert (await secured.get("/api/graphs")).status_code == 200
    mcp = await secured.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert mcp.status_code == 401
    await secured.post("/ui/logout")
    assert (await secured.get("/api/graphs")).status_code == 401


async def test_a_forged_or_expired_cookie_is_refused(secured: httpx.AsyncClient) -> None:
    from polyg_server.ui import SessionSigner

    expired = SessionSigner(KEY).issue(now=0)
    other = SessionSigner("another-key").issue()
    for value in (expired, other, "123.abc", "garbage"):
        secured.cookies.set(COOKIE_NAME, value)
        assert (await secured.get("/api/graphs")).status_code == 401
        secured.cookies.clear()


async def test_page_and_assets_are_served_with_a_strict_policy(
    api: httpx.AsyncClient,
) -> None:
    page = await api.get("/ui")
    assert page.status_code == 200
    assert "script-src 'self'" in page.headers["content-security-policy"]
    js = await api.get("/ui/static/app.js")
    assert js.status_code == 200 and js.headers["content-type"].startswith("text/javascript")
    assert (await api.get("/ui/static/nope.js")).status_code == 404
