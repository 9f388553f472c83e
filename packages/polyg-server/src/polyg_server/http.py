"""Streamable HTTP: the MCP endpoint at /mcp, GET /health, and the security middleware.

One middleware guards every route (/mcp, /api/*, /ui, /health). Checks, outermost
first: the Host header (421 for a name that is not this server's, so a DNS-rebinding
page cannot reach the server, whatever address it is bound to), the Origin header (403
for an origin not allowed), the wait after repeated failed authentications (429 with
Retry-After, `AuthThrottle`), the bearer token when an API key is set (401; read only
from the Authorization header), the request body size (413) and the time its body
takes to arrive (408). The same middleware writes the access log, without query strings
(uvicorn's own access log is turned off). The SDK's session manager caps concurrent
sessions (503, to which a Retry-After header is added here) and closes sessions idle
for longer than the idle timeout. The server's own limits (header timeout, keep-alive,
connection cap) are in `polyg_server.http_server`.

In stateless mode (`HttpOptions(stateless=True)`, `polyg-mcp --http --stateless`)
every request is served on its own, with no MCP session kept in the process, so
several server processes behind a load balancer can answer one client in turn:
everything a tool call needs lives in FalkorDB (graphs, scratch graphs, the job
queue) and the explorer's cookie is signed with the API key, not a process secret.
"""

from __future__ import annotations

import hmac
import json
import logging
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from polyg_core.errors import PolygError
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from polyg_server.auth_throttle import AuthThrottle, retry_after_header
from polyg_server.context import ServerContext
from polyg_server.http_names import (
    LOOPBACK_ORIGINS,
    allowed_hosts_for,
    host_allowed,
    is_loopback,
    origin_allowed,
    parse_hosts,
    parse_origins,
)

logger = logging.getLogger(__name__)
__all__ = [
    "AUTH_SCOPE_KEY",
    "HttpOptions",
    "SecurityMiddleware",
    "allowed_hosts_for",
    "create_http_app",
    "health_body",
    "host_allowed",
    "is_loopback",
    "origin_allowed",
    "parse_hosts",
    "parse_origins",
]

AUTH_SCOPE_KEY = "polyg.authenticated"
LOGIN_PATH = "/ui/login"
access_logger = logging.getLogger("polyg_server.access")


@dataclass(frozen=True)
class HttpOptions:
    """Limits of the HTTP transport.

    Args:
        path: where the MCP endpoint is mounted.
        max_sessions: concurrent MCP sessions; one more gets 503 with Retry-After.
        session_idle_timeout_s: a session with no request in flight for this long is closed.
        retry_after_s: the Retry-After value sent with 503.
        health_timeout_s: how long /health waits for FalkorDB to answer.
        open_paths: paths that do not need the bearer token.
        stateless: serve each request without an MCP session (no `Mcp-Session-Id`), so
            consecutive requests of one client may land on different server processes;
            `max_sessions` and `session_idle_timeout_s` then do not apply.
        json_response: answer each POST with one JSON body instead of an SSE stream
            (~25% more single-client calls per second, docs/benchmarks.md section 2).
            No tool sends progress or log notifications or asks the client anything
            mid-call, so nothing is lost; `POLYG_HTTP_SSE=1` turns SSE streams back on.
    """

    path: str = "/mcp"
    max_sessions: int = 100
    session_idle_timeout_s: float = 1800.0
    retry_after_s: int = 5
    health_timeout_s: float = 2.0
    open_paths: frozenset[str] = frozenset({"/health"})
    stateless: bool = False
    json_response: bool = True


def _json(status: int, error: str, message: str, headers: dict[str, str] | None = None) -> Response:
    return JSONResponse({"error": error, "message": message}, status_code=status, headers=headers)


class SecurityMiddleware:
    """Host and Origin checks, bearer-token auth and its throttle, body limits, Retry-After.

    Args:
        app: the wrapped ASGI app.
        api_key: the bearer token required on every path but `open_paths` (None: no auth).
        allowed_origins: origins allowed besides loopback ones; `*` allows any.
        max_body_bytes: the largest request body accepted.
        open_paths: paths served without a token (they must not leak data).
        retry_after_s: the Retry-After value added to 503 answers.
        session: also accepts a request this returns True for (the explorer's cookie).
        allowed_hosts: Host header values accepted (see `host_allowed`); None: no check.
        throttle: the wait after repeated failed authentications (None: no wait).
        body_timeout_s: seconds a request has to send its whole body (408 after that).
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        api_key: str | None,
        allowed_origins: Sequence[str],
        max_body_bytes: int,
        open_paths: frozenset[str] = frozenset({"/health"}),
        retry_after_s: int = 5,
        session: Callable[[Scope], bool] | None = None,
        allowed_hosts: Sequence[str] | None = None,
        throttle: AuthThrottle | None = None,
        body_timeout_s: float = 30.0,
    ) -> None:
        self.app = app
        self.throttle = throttle if api_key and throttle is not None and throttle.enabled else None
        self.body_timeout_s = body_timeout_s
        self.allowed_hosts = list(allowed_hosts) if allowed_hosts is not None else None
        self.session = session
        self._key = api_key.encode() if api_key else None
        self.allowed_origins = [*LOOPBACK_ORIGINS, *allowed_origins]
        self.max_body_bytes = max_body_bytes
        self.open_paths = open_paths
        self.retry_after = str(retry_after_s)

    def _authenticated(self, headers: Headers) -> bool:
        if self._key is None:
            return True
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token:
            return False
        return hmac.compare_digest(token.strip().encode(), self._key)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status: list[int] = [0]

        async def send_logged(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            await self._guard(scope, receive, send_logged)
        finally:
            # The path only: a query string may carry search text or a misplaced key.
            access_logger.info(
                "%s %s %s %d",
                _client(scope),
                scope.get("method", "?"),
                scope.get("path", "?"),
                status[0],
            )

    async def _guard(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope=scope)
        refusal = self._misdirected(headers)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        client = _client_address(scope)
        # A request tries a key when it carries an Authorization header or logs in.
        login = scope["path"] == LOGIN_PATH and scope["method"] == "POST"
        refusal = self._unauthorized(scope, headers, client, login)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        declared = headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body_bytes:
            await self._too_large(scope, receive, send)
            return
        replay = await self._buffer_body(receive)
        if replay == "too_large":
            await self._too_large(scope, receive, send)
            return
        if replay == "timeout":
            await self._body_timeout(scope, receive, send)
            return
        answer = self._with_retry_after(send)
        if login and self.throttle is not None:
            answer = self._watch_login(client, answer)
        await self.app(scope, replay, answer)

    def _unauthorized(
        self, scope: Scope, headers: Headers, client: str, login: bool
    ) -> Response | None:
        """The 429 for a client locked out by failed keys, or the 401 for a request
        without a valid key or session to a path that needs one; None when it may go
        on (its scope then says whether it is authenticated)."""
        tries_key = bool(headers.get("authorization")) or login
        if self.throttle is not None and tries_key:
            wait = self.throttle.wait_s(client)
            if wait > 0:
                return self._locked_out(wait)
        by_key = self._authenticated(headers)
        delay = self._account(client, bool(headers.get("authorization")), by_key)
        authenticated = by_key or (self.session is not None and self.session(scope))
        scope[AUTH_SCOPE_KEY] = authenticated
        if authenticated or scope["method"] == "OPTIONS" or scope["path"] in self.open_paths:
            return None
        logger.info("refused an unauthenticated request to %s", scope["path"])
        challenge = {"WWW-Authenticate": 'Bearer realm="polyg"'}
        if delay > 0:
            challenge["Retry-After"] = retry_after_header(delay)
        return _json(
            401,
            "unauthorized",
            "missing or wrong bearer token: send the header "
            "'Authorization: Bearer <POLYG_API_KEY>'",
            challenge,
        )

    def _misdirected(self, headers: Headers) -> Response | None:
        """The 421 or 403 answer for a foreign Host or Origin; None when both pass."""
        host = headers.get("host", "")
        if self.allowed_hosts is not None and not host_allowed(host, self.allowed_hosts):
            logger.warning("refused a request for host %r", host[:200])
            return _json(
                421,
                "misdirected_request",
                f"host {host[:200]!r} is not a name of this server; call it by one of "
                f"{', '.join(self.allowed_hosts)} or add the name to POLYG_ALLOWED_HOSTS",
            )
        origin = headers.get("origin")
        if origin and not origin_allowed(origin, self.allowed_origins):
            logger.warning("refused a request from origin %r", origin[:200])
            return _json(
                403,
                "forbidden_origin",
                f"origin {origin[:200]!r} is not allowed; add it to POLYG_ALLOWED_ORIGINS "
                "(comma-separated) to let that site call this server",
            )
        return None

    def _account(self, client: str, presented: bool, right: bool) -> float:
        """Count a presented bearer token as a success or a failure; return the wait."""
        if self.throttle is None or not presented:
            return 0.0
        if right:
            self.throttle.succeeded(client)
            return 0.0
        return self._failed(client)

    def _failed(self, client: str) -> float:
        assert self.throttle is not None
        delay = self.throttle.failed(client)
        if delay > 0:
            logger.warning(
                "failed authentication from %s: its keys are not checked for %g s", client, delay
            )
        return delay

    def _locked_out(self, wait_s: float) -> Response:
        retry = retry_after_header(wait_s)
        return _json(
            429,
            "too_many_failed_authentications",
            f"too many failed authentications from this address: wait {retry} s before "
            "trying a key again (past POLYG_AUTH_FREE_FAILURES failures each one doubles the "
            "wait, up to POLYG_AUTH_MAX_DELAY seconds)",
            {"Retry-After": retry},
        )

    def _watch_login(self, client: str, send: Send) -> Send:
        """Count the explorer's login answers: 401 a failure, a redirect a success."""
        throttle = self.throttle
        assert throttle is not None

        async def watched(message: Message) -> None:
            if message["type"] == "http.response.start":
                if message["status"] == 401:
                    delay = self._failed(client)
                    if delay > 0:
                        raw: list[tuple[bytes, bytes]] = list(message.get("headers", []))
                        raw.append((b"retry-after", retry_after_header(delay).encode()))
                        message = {**message, "headers": raw}
                elif message["status"] < 400:
                    throttle.succeeded(client)
            await send(message)

        return watched

    def _with_retry_after(self, send: Send) -> Send:
        """Add Retry-After to a 503 (the SDK's session cap) that has none."""

        async def send_with_retry_after(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 503:
                raw: list[tuple[bytes, bytes]] = list(message.get("headers", []))
                if not any(k.lower() == b"retry-after" for k, _ in raw):
                    raw.append((b"retry-after", self.retry_after.encode()))
                    message = {**message, "headers": raw}
            await send(message)

        return send_with_retry_after

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        await _json(
            413,
            "payload_too_large",
            f"the request body is larger than {self.max_body_bytes} bytes; send less data per "
            "call (or raise POLYG_MAX_BODY_BYTES on the server)",
        )(scope, receive, send)

    async def _body_timeout(self, scope: Scope, receive: Receive, send: Send) -> None:
        logger.info("closed a request from %s: body not received in time", _client(scope))
        await _json(
            408,
            "request_timeout",
            f"the request body did not arrive within {self.body_timeout_s:g} s; send it at "
            "once (or raise POLYG_HTTP_BODY_TIMEOUT on the server)",
            {"Connection": "close"},
        )(scope, receive, send)

    async def _buffer_body(self, receive: Receive) -> Receive | Literal["too_large", "timeout"]:
        """Read the whole body (counting streamed bytes) within the body timeout."""
        body = bytearray()
        pending: deque[Message] = deque()
        with anyio.move_on_after(self.body_timeout_s) as deadline:
            while True:
                message = await receive()
                if message["type"] != "http.request":
                    pending.append(message)
                    break
                body.extend(message.get("body", b""))
                if len(body) > self.max_body_bytes:
                    return "too_large"
                if not message.get("more_body", False):
                    break
        if deadline.cancelled_caught:
            return "timeout"
        pending.appendleft({"type": "http.request", "body": bytes(body), "more_body": False})

        async def replay() -> Message:
            return pending.popleft() if pending else await receive()

        return replay


def _client_address(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "-"


def _client(scope: Scope) -> str:
    client = scope.get("client")
    return f"{client[0]}:{client[1]}" if client else "-"


async def health_body(
    ctx: ServerContext, *, detailed: bool, timeout_s: float
) -> tuple[int, dict[str, Any]]:
    """The /health status code and body: 200 when FalkorDB answers, else 503.

    Only `status` is given unless `detailed` (an authenticated caller or no API key).
    """
    reachable = False
    names: list[str] | None = None
    with anyio.move_on_after(timeout_s):
        try:
            await ctx.store.ping()
            reachable = True
            if detailed:
                names = await ctx.store.list_graphs()
        except PolygError as exc:
            logger.warning("health check: FalkorDB unreachable: %s", exc)
    body: dict[str, Any] = {"status": "ok" if reachable else "unavailable"}
    if detailed:
        body.update(
            falkordb="ok" if reachable else "unreachable",
            graphs=len(names) if names is not None else None,
            namespaces=names,
            default_graph=ctx.default_namespace,
            uptime=round(ctx.uptime_s, 3),
            # Role (primary/replica/shard), address, reads/writes served, health, lag.
            connections=[s.as_dict() for s in ctx.store.routing_stats()],
        )
    return (200 if reachable else 503), body


def create_http_app(
    server: MCPServer[Any], ctx: ServerContext, options: HttpOptions | None = None
) -> ASGIApp:
    """The ASGI app serving MCP over Streamable HTTP, `/health`, and the security checks.

    Args:
        server: the server from `create_server` (one HTTP app per server).
        ctx: its context (settings give host, API key, allowed origins, body limit).
        options: limits; the defaults suit a single-user deployment.
    """
    opts = options or HttpOptions()
    settings = ctx.settings
    origins = parse_origins(settings.allowed_origins)
    hosts = allowed_hosts_for(settings.host, parse_hosts(settings.allowed_hosts))
    # SecurityMiddleware checks Host and Origin for every route; the SDK's own check
    # (on /mcp only) is off so that one rule, with one error text, covers the whole app.
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)

    @server.custom_route("/health", methods=["GET"], include_in_schema=False)
    async def health(request: Request) -> Response:  # pyright: ignore[reportUnusedFunction]
        detailed = bool(request.scope.get(AUTH_SCOPE_KEY, False))
        status, body = await health_body(ctx, detailed=detailed, timeout_s=opts.health_timeout_s)
        return Response(json.dumps(body), status_code=status, media_type="application/json")

    app: Starlette = server.streamable_http_app(
        streamable_http_path=opts.path,
        stateless_http=opts.stateless,
        json_response=opts.json_response,
        max_request_body_size=settings.max_body_bytes,
        session_idle_timeout=opts.session_idle_timeout_s,
        max_sessions=opts.max_sessions,
        transport_security=security,
        host=settings.host,
    )
    from polyg_server.ui import Explorer

    api_key = settings.api_key.get_secret_value() if settings.api_key else None
    explorer = Explorer(ctx, api_key, version=server.version or "0")
    app.router.routes.extend(explorer.routes())
    wrapped: ASGIApp = app
    if origins:
        wrapped = CORSMiddleware(
            wrapped,
            allow_origins=origins,
            allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
            allow_headers=[
                "Authorization",
                "Content-Type",
                "Accept",
                "Mcp-Session-Id",
                "Mcp-Protocol-Version",
                "Last-Event-ID",
            ],
            expose_headers=["Mcp-Session-Id"],
        )
    return SecurityMiddleware(
        wrapped,
        api_key=api_key,
        allowed_origins=origins,
        max_body_bytes=settings.max_body_bytes,
        open_paths=opts.open_paths | explorer.open_paths,
        retry_after_s=opts.retry_after_s,
        session=explorer.authenticates,
        allowed_hosts=hosts,
        throttle=AuthThrottle(
            free_failures=settings.auth_free_failures, max_delay_s=settings.auth_max_delay_s
        ),
        body_timeout_s=settings.http_body_timeout_s,
    )
