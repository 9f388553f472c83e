"""Limits on time and on connections over HTTP: slow request headers and bodies are cut
off with 408, connections beyond the cap get 503, and repeated failed authentications
from one address are made to wait (429 with Retry-After).

Before these limits, a connection that sent its headers or body a byte at a time was
held for as long as the client liked (one held 60 s), any number of connections were
served, and 50 wrong API keys in a row were answered as fast as the first.
"""

from __future__ import annotations

import asyncio
import json
from contextlib import AsyncExitStack
from typing import Any

import anyio
import httpx
import pytest
import uvicorn
from anyio.abc import SocketStream
from polyg_core.config import Settings
from polyg_core.storage.store import FalkorStore
from polyg_server.app import create_server
from polyg_server.context import ServerContext
from polyg_server.http import create_http_app
from polyg_server.http_server import HeaderDeadlineProtocol, HttpLimits
from polyg_server.testing import INITIALIZE, serving
from pydantic import SecretStr
from starlette.types import ASGIApp
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

pytestmark = pytest.mark.anyio

KEY = "limits-key-4815162342-secret"
INITIALIZE_BODY = json.dumps(INITIALIZE).encode()


def make_app(store: FalkorStore, settings: Settings) -> ASGIApp:
    ctx = ServerContext(store=store, settings=settings)
    return create_http_app(create_server(ctx), ctx)


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def post_head(length: int) -> bytes:
    return (
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nContent-Length: {length}\r\n\r\n"
    ).encode()


async def read_until_closed(stream: SocketStream) -> bytes:
    """Everything the server sends until it closes the connection."""
    chunks: list[bytes] = []
    try:
        while True:
            chunks.append(await stream.receive())
    except (anyio.EndOfStream, anyio.BrokenResourceError):
        pass
    return b"".join(chunks)


async def trickle(port: int, head: bytes, slow: bytes, interval_s: float) -> bytes:
    """Send `head`, then `slow` one byte per interval; return what the server answers
    until it closes the connection (the sending stops there)."""
    async with await anyio.connect_tcp("127.0.0.1", port) as stream:
        reply = b""
        async with anyio.create_task_group() as tg:

            async def send_slowly() -> None:
                try:
                    await stream.send(head)
                    for i in range(len(slow)):
                        await anyio.sleep(interval_s)
                        await stream.send(slow[i : i + 1])
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                    pass  # the server closed the connection

            tg.start_soon(send_slowly)
            reply = await read_until_closed(stream)
            tg.cancel_scope.cancel()
        return reply


def status_of(reply: bytes) -> int:
    return int(reply.split(b" ", 2)[1])


def body_of(reply: bytes) -> dict[str, Any]:
    return json.loads(reply.split(b"\r\n\r\n", 1)[1])


async def test_request_headers_that_trickle_in_get_408_and_the_connection_is_closed(
    store: FalkorStore, server_settings: Settings
) -> None:
    app = make_app(store, server_settings)
    async with serving(app, HttpLimits(header_timeout_s=0.5)) as url:
        port = port_of(url)
        with anyio.fail_after(30):
            # 400 header bytes at one per 50 ms would take 20 s: the connection is cut first.
            trickled = await trickle(
                port, b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n", b"X-Slow: " + b"a" * 400, 0.05
            )
            async with await anyio.connect_tcp("127.0.0.1", port) as silent:
                nothing_sent = await read_until_closed(silent)
            async with httpx.AsyncClient() as http:
                normal = await http.get(f"{url}/health")
    assert status_of(trickled) == 408, trickled[:300]
    assert b"connection: close" in trickled.lower()
    assert b"POLYG_HTTP_HEADER_TIMEOUT" in trickled
    assert status_of(nothing_sent) == 408
    assert normal.status_code == 200


@pytest.mark.parametrize("inner", [H11Protocol, HttpToolsProtocol], ids=["h11", "httptools"])
async def test_the_header_deadline_works_around_both_of_uvicorns_parsers(
    store: FalkorStore, server_settings: Settings, inner: type[asyncio.Protocol]
) -> None:
    config = uvicorn.Config(
        make_app(store, server_settings),
        host="127.0.0.1",
        port=0,
        http=HeaderDeadlineProtocol.with_timeout(0.5, inner=inner),
        log_config=None,
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)
    trickled = b""
    served: list[httpx.Response] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve)
        try:
            with anyio.fail_after(30):
                while not server.started:
                    await anyio.sleep(0.01)
                port = server.servers[0].sockets[0].getsockname()[1]
                head = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                trickled = await trickle(port, head, b"X-Slow: " + b"a" * 400, 0.05)
                async with httpx.AsyncClient() as http:
                    # Two requests on one kept-alive connection: the deadline ends each time.
                    served = [await http.get(f"http://127.0.0.1:{port}/health") for _ in range(2)]
        finally:
            server.should_exit = True
    assert status_of(trickled) == 408, trickled[:300]
    assert [r.status_code for r in served] == [200, 200]


async def test_a_request_body_that_trickles_in_gets_408_and_the_connection_is_closed(
    store: FalkorStore, server_settings: Settings
) -> None:
    settings = server_settings.model_copy(update={"http_body_timeout_s": 0.5})
    async with serving(make_app(store, settings), HttpLimits(header_timeout_s=30)) as url:
        with anyio.fail_after(30):
            # The whole body at one byte per 50 ms would take over 10 s.
            reply = await trickle(
                port_of(url), post_head(len(INITIALIZE_BODY)), INITIALIZE_BODY, 0.05
            )
    assert status_of(reply) == 408, reply[:300]
    assert b"connection: close" in reply.lower()
    error = body_of(reply)
    assert error["error"] == "request_timeout"
    assert "POLYG_HTTP_BODY_TIMEOUT" in error["message"]


async def test_a_body_sent_in_pieces_within_the_body_timeout_is_served(
    store: FalkorStore, server_settings: Settings
) -> None:
    # The header deadline (0.3 s) ends with the headers: a body taking longer is fine.
    settings = server_settings.model_copy(update={"http_body_timeout_s": 30.0})
    async with serving(make_app(store, settings), HttpLimits(header_timeout_s=0.3)) as url:
        with anyio.fail_after(30):
            async with await anyio.connect_tcp("127.0.0.1", port_of(url)) as stream:
                await stream.send(post_head(len(INITIALIZE_BODY)))
                step = len(INITIALIZE_BODY) // 4 + 1
                for start in range(0, len(INITIALIZE_BODY), step):
                    await anyio.sleep(0.2)
                    await stream.send(INITIALIZE_BODY[start : start + step])
                reply = await stream.receive()
    assert status_of(reply) == 200, reply[:300]


async def test_a_connection_beyond_the_cap_gets_503_and_is_served_once_one_closes(
    store: FalkorStore, server_settings: Settings
) -> None:
    limits = HttpLimits(max_connections=3, keep_alive_s=60, header_timeout_s=30)
    one_connection = httpx.Limits(max_connections=1, keepalive_expiry=60)
    async with serving(make_app(store, server_settings), limits) as url, AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(httpx.AsyncClient(limits=one_connection))
            for _ in range(5)
        ]
        with anyio.fail_after(30):
            held = [await c.get(f"{url}/health") for c in clients[:3]]  # kept alive, open
            over = await clients[3].get(f"{url}/health")
            await clients[0].aclose()
            # The server sees the close when its loop gets to it: try a bounded few times.
            after = over
            for _ in range(50):
                after = await clients[4].get(f"{url}/health")
                if after.status_code == 200:
                    break
                await anyio.sleep(0.1)
    assert [r.status_code for r in held] == [200, 200, 200]
    assert over.status_code == 503
    assert after.status_code == 200


async def test_repeated_wrong_keys_make_the_address_wait_and_a_right_key_clears_it(
    store: FalkorStore, server_settings: Settings
) -> None:
    settings = server_settings.model_copy(
        update={"api_key": SecretStr(KEY), "auth_free_failures": 3, "auth_max_delay_s": 30.0}
    )
    wrong = {"Authorization": "Bearer not-the-key"}
    right = {"Authorization": f"Bearer {KEY}"}
    async with serving(make_app(store, settings)) as url, httpx.AsyncClient() as http:
        with anyio.fail_after(60):
            free = [await http.get(f"{url}/api/graphs", headers=wrong) for _ in range(3)]
            fourth = await http.get(f"{url}/api/graphs", headers=wrong)
            locked = await http.get(f"{url}/api/graphs", headers=right)
            # /health with a key would tell a right key from a wrong one: locked out too.
            health_with_key = await http.get(f"{url}/health", headers=right)
            health_plain = await http.get(f"{url}/health")
            # The wait is over after its 1 s: poll, bounded, until the right key is served.
            cleared = locked
            for _ in range(100):
                cleared = await http.get(f"{url}/api/graphs", headers=right)
                if cleared.status_code != 429:
                    break
                await anyio.sleep(0.1)
            fresh = await http.get(f"{url}/api/graphs", headers=wrong)
    assert [r.status_code for r in free] == [401, 401, 401]
    assert all("retry-after" not in r.headers for r in free)
    assert fourth.status_code == 401 and fourth.headers["retry-after"] == "1"
    assert locked.status_code == 429
    assert int(locked.headers["retry-after"]) >= 1
    assert locked.json()["error"] == "too_many_failed_authentications"
    assert "POLYG_AUTH_MAX_DELAY" in locked.json()["message"]
    assert health_with_key.status_code == 429
    assert health_plain.status_code == 200 and health_plain.json() == {"status": "ok"}
    assert cleared.status_code == 200
    # The right key cleared the address: a wrong one is again answered without a wait.
    assert fresh.status_code == 401 and "retry-after" not in fresh.headers


async def test_wrong_keys_in_the_explorer_login_form_are_throttled_too(
    store: FalkorStore, server_settings: Settings
) -> None:
    settings = server_settings.model_copy(
        update={"api_key": SecretStr(KEY), "auth_free_failures": 2, "auth_max_delay_s": 30.0}
    )
    async with serving(make_app(store, settings)) as url, httpx.AsyncClient() as http:
        with anyio.fail_after(30):
            tries = [
                await http.post(f"{url}/ui/login", data={"key": f"guess-{i}"}) for i in range(4)
            ]
            bearer = await http.get(f"{url}/api/graphs", headers={"Authorization": f"Bearer {KEY}"})
    assert [r.status_code for r in tries] == [401, 401, 401, 429]
    assert tries[2].headers["retry-after"] == "1"
    assert "retry-after" in tries[3].headers
    # One address, one wait: the bearer path is locked out as well.
    assert bearer.status_code == 429


async def test_the_throttle_is_off_with_a_zero_max_delay(
    store: FalkorStore, server_settings: Settings
) -> None:
    settings = server_settings.model_copy(
        update={"api_key": SecretStr(KEY), "auth_free_failures": 0, "auth_max_delay_s": 0.0}
    )
    async with serving(make_app(store, settings)) as url, httpx.AsyncClient() as http:
        with anyio.fail_after(30):
            wrong = [
                await http.get(f"{url}/api/graphs", headers={"Authorization": "Bearer nope"})
                for _ in range(8)
            ]
            right = await http.get(f"{url}/api/graphs", headers={"Authorization": f"Bearer {KEY}"})
    assert {r.status_code for r in wrong} == {401}
    assert right.status_code == 200
