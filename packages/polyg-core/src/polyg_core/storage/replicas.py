"""Read routing over FalkorDB (Redis) replicas: round-robin, lag bound, read-your-writes.

Writes always go to the primary. A read-only query goes to a replica chosen
round-robin among those that answer, are linked to the primary and are at most
`replica_max_lag_bytes` behind its replication offset; otherwise to the primary.
Replica state comes from `INFO replication`, re-read at most every
`replica_check_ms` by whichever read finds it stale, so queries pay no extra
round trip.

Read-your-writes: a write records, for the calling session, when it finished.
That session's reads stay on the primary until a replica's offset has reached
the primary's offset as read by the first check after the write (so the
replica has applied the write), and for at most `read_your_writes_ms`. The
session is a context variable (`session(key)`); code that sets none shares
one store-wide session, i.e. any write pins every session-less read.

When the primary cannot be reached, reads go on from the replicas, even
lagging ones and even for pinned sessions (stale data rather than no data);
writes fail with `StorageUnavailable` naming the primary.
"""

from __future__ import annotations

import contextvars
import logging
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal

import anyio
import redis.exceptions as rexc
from falkordb.asyncio import FalkorDB

from polyg_core.config import StorageSettings
from polyg_core.storage.client import FalkorClient, bounded_pool, close_dropped
from polyg_core.storage.cluster import parse_address

__all__ = [
    "Endpoint",
    "ReplicaRouter",
    "RouteStats",
    "StoreSession",
    "current_session",
]

logger = logging.getLogger(__name__)

Role = Literal["primary", "replica", "shard"]
PrimaryProbe = Callable[[], Awaitable[dict[str, Any] | None]]
"""Returns the primary's `INFO replication`, or None when it cannot be reached."""

current_session: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "polyg_store_session", default=None
)
"""The read-your-writes session of the running task (None: the store-wide session)."""

CONNECTION_ERRORS = (
    rexc.ConnectionError,
    rexc.TimeoutError,
    rexc.BusyLoadingError,
    rexc.ClusterDownError,
    OSError,
)
_DOWN_BACKOFF_S = 1.0
_PROBE_TIMEOUT_S = 2.0
_MAX_PINS = 4096


class StoreSession:
    """Sets the read-your-writes session for the code inside `with` / `async with`."""

    def __init__(self, key: str | None) -> None:
        self._key = key
        self._token: contextvars.Token[str | None] | None = None

    def __enter__(self) -> StoreSession:
        self._token = current_session.set(self._key)
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._token is not None:
            current_session.reset(self._token)
            self._token = None

    async def __aenter__(self) -> StoreSession:
        return self.__enter__()

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.__exit__(et, ev, tb)


@dataclass(frozen=True)
class RouteStats:
    """What one store connection has served (for tests, benchmarks and /health).

    Attributes:
        role: `primary`, `replica` or `shard` (a cluster master).
        address: `host:port` (or the embedded socket); never a password.
        reads: read-only queries it answered.
        writes: other queries it answered.
        healthy: False after a connection error, until it answers again.
        lag_bytes: a replica's distance behind the primary at the last check (None: unknown).
    """

    role: Role
    address: str
    reads: int
    writes: int
    healthy: bool
    lag_bytes: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "role": self.role,
            "address": self.address,
            "reads": self.reads,
            "writes": self.writes,
            "healthy": self.healthy,
            "lag_bytes": self.lag_bytes,
        }


@dataclass(eq=False)
class Endpoint:
    """One server the store talks to, with its counters and last known state."""

    role: Role
    address: str
    host: str = ""
    port: int = 0
    password: str | None = field(default=None, repr=False)
    reads: int = 0
    writes: int = 0
    healthy: bool = True
    retry_at: float = 0.0
    linked: bool = True
    offset: int | None = None
    lag_bytes: int | None = None
    db: FalkorDB | None = field(default=None, repr=False)

    def stats(self) -> RouteStats:
        """A snapshot of the counters."""
        return RouteStats(
            role=self.role,
            address=self.address,
            reads=self.reads,
            writes=self.writes,
            healthy=self.healthy,
            lag_bytes=self.lag_bytes,
        )

    def mark_down(self, exc: BaseException) -> None:
        """Skip this endpoint for a moment after a connection error."""
        if self.healthy:
            logger.warning("FalkorDB %s %s is unreachable: %s", self.role, self.address, exc)
        self.healthy = False
        self.retry_at = time.monotonic() + _DOWN_BACKOFF_S


@dataclass
class _Pin:
    written_at: float
    needed_offset: int | None = None


@dataclass
class ReplicaRouter:
    """Chooses the server for each read; owns the replica connections.

    Args:
        settings: replica addresses, lag bound, read-your-writes window, check interval.
        primary: the primary's endpoint (its connection is the store's).
    """

    settings: StorageSettings
    primary: Endpoint
    replicas: list[Endpoint] = field(default_factory=lambda: [])
    _rr: int = field(default=0, init=False, repr=False)
    _pins: dict[str | None, _Pin] = field(default_factory=lambda: {}, init=False, repr=False)
    _checked_at: float = field(default=-math.inf, init=False, repr=False)
    _primary_offset: int | None = field(default=None, init=False, repr=False)
    _primary_up: bool = field(default=True, init=False, repr=False)
    _check_lock: anyio.Lock = field(default_factory=anyio.Lock, init=False, repr=False)

    @classmethod
    def from_settings(cls, settings: StorageSettings, primary: Endpoint) -> ReplicaRouter:
        """A router for the replicas listed in `settings.replicas`.

        Raises:
            ValueError: an address is malformed.
        """
        default_password = settings.password.get_secret_value() if settings.password else None
        replicas: list[Endpoint] = []
        for value in settings.replica_addresses:
            host, port, password = parse_address(value)
            replicas.append(
                Endpoint(
                    role="replica",
                    address=f"{host}:{port}",
                    host=host,
                    port=port,
                    password=password or default_password,
                )
            )
        return cls(settings=settings, primary=primary, replicas=replicas)

    # -- sessions -----------------------------------------------------------------------------

    def note_write(self) -> None:
        """Pin the calling session's reads to the primary until replicas catch up."""
        if self.settings.read_your_writes_ms <= 0:
            return
        now = time.monotonic()
        if len(self._pins) >= _MAX_PINS:
            self._prune(now)
        self._pins[current_session.get()] = _Pin(written_at=now)

    def _prune(self, now: float) -> None:
        window = self.settings.read_your_writes_ms / 1000
        for key in [k for k, p in self._pins.items() if now - p.written_at > window]:
            del self._pins[key]

    def _pin(self, now: float) -> _Pin | None:
        key = current_session.get()
        pin = self._pins.get(key)
        if pin is None:
            return None
        if now - pin.written_at > self.settings.read_your_writes_ms / 1000:
            del self._pins[key]
            return None
        if pin.needed_offset is None and self._checked_at > pin.written_at:
            # The first check that started after the write read an offset that includes it.
            pin.needed_offset = self._primary_offset
        return pin

    # -- state --------------------------------------------------------------------------------

    async def refresh_if_due(self, primary_info: PrimaryProbe) -> None:
        """Re-read replica state when the last check is older than `replica_check_ms`.

        The first check is awaited; later ones run in whichever read finds the state stale
        while the others use the state they have.
        """
        if time.monotonic() - self._checked_at < self.settings.replica_check_ms / 1000:
            return
        if self._check_lock.locked() and self._checked_at > -math.inf:
            return
        async with self._check_lock:
            if time.monotonic() - self._checked_at >= self.settings.replica_check_ms / 1000:
                await self.refresh(primary_info)

    async def refresh(self, primary_info: PrimaryProbe) -> None:
        """Read `INFO replication` on every replica and on the primary, now."""
        started = time.monotonic()
        infos: dict[int, dict[str, Any] | None] = {}
        primary: list[dict[str, Any] | None] = [None]

        async def one(i: int, ep: Endpoint) -> None:
            try:
                with anyio.fail_after(_PROBE_TIMEOUT_S):
                    db = await self.connect(ep)
                    infos[i] = dict(await db.connection.info("replication"))
            except (TimeoutError, rexc.RedisError, OSError) as exc:
                infos[i] = None
                ep.mark_down(exc)
                await self.drop(ep)

        async def prim() -> None:
            with anyio.move_on_after(_PROBE_TIMEOUT_S):
                primary[0] = await primary_info()

        async with anyio.create_task_group() as tg:
            tg.start_soon(prim)
            for i, ep in enumerate(self.replicas):
                tg.start_soon(one, i, ep)

        info0 = primary[0]
        self._primary_up = info0 is not None
        self._primary_offset = int(info0.get("master_repl_offset") or 0) if info0 else None
        replid = info0.get("master_replid") if info0 else None
        for i, ep in enumerate(self.replicas):
            info = infos.get(i)
            if info is None:
                ep.offset = ep.lag_bytes = None
                continue
            ep.healthy = True
            ep.retry_at = 0.0
            # A replica of another primary (after a failover, or misconfigured) has
            # offsets that mean nothing here.
            ep.linked = (
                info.get("role") == "slave"
                and info.get("master_link_status") == "up"
                and (replid is None or info.get("master_replid") == replid)
            )
            ep.offset = int(info.get("slave_repl_offset") or 0) if ep.linked else None
            if ep.offset is not None and self._primary_offset is not None:
                ep.lag_bytes = max(0, self._primary_offset - ep.offset)
            else:
                ep.lag_bytes = None
        self._checked_at = started

    def _fresh(self, ep: Endpoint, now: float) -> bool:
        if not ep.healthy and now < ep.retry_at:
            return False
        if not self._primary_up:
            return True  # no primary to be behind: serve what the replica has
        return (
            ep.linked
            and ep.lag_bytes is not None
            and ep.lag_bytes <= self.settings.replica_max_lag_bytes
        )

    def plan(self) -> list[Endpoint]:
        """Where to try the next read, in order (the primary included)."""
        now = time.monotonic()
        pin = self._pin(now)
        chosen: list[Endpoint] = []
        rest: list[Endpoint] = []
        for ep in self.replicas:
            if self._fresh(ep, now) and (
                pin is None
                or (
                    pin.needed_offset is not None
                    and ep.offset is not None
                    and ep.offset >= pin.needed_offset
                )
            ):
                chosen.append(ep)
            elif ep.healthy or now >= ep.retry_at:
                rest.append(ep)
        if len(chosen) > 1:
            self._rr = (self._rr + 1) % len(chosen)
            chosen = chosen[self._rr :] + chosen[: self._rr]
        primary = self.primary
        if primary.healthy or now >= primary.retry_at:
            return [*chosen, primary, *rest]
        return [*chosen, *rest, primary]

    # -- connections --------------------------------------------------------------------------

    async def connect(self, ep: Endpoint) -> FalkorDB:
        """The replica's client, opened on first use (in a thread: the client probes the server)."""
        if ep.db is not None:
            return ep.db
        timeout = (
            self.settings.query_timeout_ms / 1000 + 5 if self.settings.query_timeout_ms else None
        )

        def open_client() -> FalkorDB:
            # Bounded like the primary's pool: more concurrent reads wait for a connection.
            pool = bounded_pool(
                max_connections=self.settings.max_connections,
                wait_s=self.settings.query_timeout_ms / 1000 or None,
                host=ep.host,
                port=ep.port,
                password=ep.password,
                socket_connect_timeout=_PROBE_TIMEOUT_S,
                socket_timeout=timeout,
            )
            return FalkorClient(pool)

        ep.db = await anyio.to_thread.run_sync(open_client)
        return ep.db

    async def drop(self, ep: Endpoint) -> None:
        """Close a replica's client (after an error; reopened on next use)."""
        db, ep.db = ep.db, None
        await close_dropped(db, "a replica connection")

    async def close(self) -> None:
        """Close every replica client."""
        for ep in self.replicas:
            await self.drop(ep)
