"""The uvicorn server polyg's HTTP app runs under: its time and connection limits.

uvicorn has its own settings for two of them, used as they are: `timeout_keep_alive`
closes a connection idle between requests, and `limit_concurrency` answers 503 to a
request once too many connections are open. It has none for a client that connects and
sends its request headers slowly, or never: such a connection was held for as long as
the client liked. `HeaderDeadlineProtocol` wraps uvicorn's HTTP protocol and answers 408,
then closes the connection, when a request's headers have not all arrived within the
header timeout of its first byte (or of the connection's start). The request body has
its own deadline in `SecurityMiddleware`, at the ASGI level, where the app reads it.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any, ClassVar, cast

import uvicorn
from polyg_core.config import Settings
from starlette.types import ASGIApp
from uvicorn.protocols.http.auto import AutoHTTPProtocol

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class HttpLimits:
    """Time and connection limits of the HTTP server.

    Args:
        header_timeout_s: seconds a connection has to send a request's headers.
        keep_alive_s: seconds an idle connection stays open between requests.
        max_connections: connections served at once; a request on one more gets 503.
    """

    header_timeout_s: float = 10.0
    keep_alive_s: int = 5
    max_connections: int = 256

    @classmethod
    def from_settings(cls, settings: Settings) -> HttpLimits:
        """The limits `POLYG_HTTP_*` configure."""
        return cls(
            header_timeout_s=settings.http_header_timeout_s,
            keep_alive_s=settings.http_keep_alive_s,
            max_connections=settings.http_max_connections,
        )


def _timeout_response(timeout_s: float) -> bytes:
    body = (
        f"request headers not received within {timeout_s:g} s; send the whole request "
        "at once (the server's limit is POLYG_HTTP_HEADER_TIMEOUT)"
    ).encode()
    head = (
        "HTTP/1.1 408 Request Timeout\r\n"
        "content-type: text/plain; charset=utf-8\r\n"
        f"content-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    ).encode()
    return head + body


class HeaderDeadlineProtocol(asyncio.Protocol):
    """uvicorn's HTTP protocol, with a deadline on each request's headers.

    The deadline starts when the connection opens and again at the first byte that
    arrives while no request is being read or answered; it ends when uvicorn has parsed
    a request's headers (it then starts a request cycle). Bytes that trickle in after an
    early answer (a 401 before the body was read) start it too, so they cannot keep the
    connection open either.
    """

    inner_class: ClassVar[Any] = AutoHTTPProtocol
    timeout_s: ClassVar[float] = 10.0

    def __init__(self, **kwargs: Any) -> None:
        self._inner: asyncio.Protocol = self.inner_class(**kwargs)
        self._transport: asyncio.Transport | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._armed_cycle: object = None

    @classmethod
    def with_timeout(
        cls, timeout_s: float, inner: type[asyncio.Protocol] | None = None
    ) -> type[HeaderDeadlineProtocol]:
        """This protocol with its own header timeout (uvicorn takes a class), around
        `inner` (default: uvicorn's choice, httptools when installed, else h11)."""
        attrs: dict[str, Any] = {"timeout_s": timeout_s}
        if inner is not None:
            attrs["inner_class"] = inner
        return type("HeaderDeadlineProtocol", (cls,), attrs)

    # The inner protocol's current request cycle: None before the first request.
    def _cycle(self) -> object:
        return getattr(self._inner, "cycle", None)

    def _between_requests(self) -> bool:
        cycle = self._cycle()
        return cycle is None or bool(getattr(cycle, "response_complete", False))

    def _arm(self) -> None:
        self._disarm()
        self._armed_cycle = self._cycle()
        self._timer = asyncio.get_running_loop().call_later(self.timeout_s, self._expired)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expired(self) -> None:
        self._timer = None
        transport = self._transport
        if transport is None or transport.is_closing() or self._cycle() is not self._armed_cycle:
            return
        peer = transport.get_extra_info("peername")
        logger.info("closed a connection from %s: no request headers in %g s", peer, self.timeout_s)
        transport.write(_timeout_response(self.timeout_s))
        transport.close()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's TCP transport is not an asyncio.Transport subclass, but has its methods.
        self._transport = cast(asyncio.Transport, transport)
        self._inner.connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._timer is None and self._between_requests():
            self._arm()
        self._inner.data_received(data)
        if self._timer is not None and self._cycle() is not self._armed_cycle:
            self._disarm()  # the headers arrived: uvicorn started a request cycle

    def eof_received(self) -> bool | None:
        return self._inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()


def server_config(
    app: ASGIApp,
    *,
    host: str,
    port: int,
    limits: HttpLimits | None = None,
    log_level: str | None = None,
    graceful_shutdown_s: int = 5,
) -> uvicorn.Config:
    """uvicorn's configuration for the app, with polyg's time and connection limits."""
    lim = limits or HttpLimits()
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=HeaderDeadlineProtocol.with_timeout(lim.header_timeout_s),
        log_config=None,
        # SecurityMiddleware writes the access log, without query strings.
        access_log=False,
        log_level=log_level,
        timeout_keep_alive=lim.keep_alive_s,
        # uvicorn counts the connection asking among the open ones, so N + 1 serves N.
        limit_concurrency=lim.max_connections + 1,
        timeout_graceful_shutdown=graceful_shutdown_s,
    )
