"""The async FalkorDB store: per-call graph handles, reconnects, timeouts, schema bootstrap."""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, cast

import anyio
import redis.exceptions as rexc
from falkordb import Edge as FEdge
from falkordb import Node as FNode
from falkordb import Path as FPath
from falkordb.asyncio import FalkorDB
from falkordb.asyncio.query_result import (  # pyright: ignore[reportMissingTypeStubs]
    QueryResult as FQueryResult,
)
from redis.asyncio.connection import UnixDomainSocketConnection

from polyg_core.config import StorageSettings
from polyg_core.errors import (
    EmbeddingMismatch,
    PolygError,
    QueryTimeout,
    StorageBusy,
    StorageError,
    StorageUnavailable,
)
from polyg_core.storage import cluster as clusterlib
from polyg_core.storage import index_check
from polyg_core.storage.client import FalkorClient, bounded_pool, close_dropped
from polyg_core.storage.embedded import EmbeddedFalkorDB, default_data_dir
from polyg_core.storage.namespace import validate_namespace
from polyg_core.storage.replicas import (
    CONNECTION_ERRORS,
    Endpoint,
    ReplicaRouter,
    RouteStats,
    StoreSession,
)
from polyg_core.storage.reply import NeedsSchema, Reply, cypher_params, read_reply
from polyg_core.storage.schema import (
    EMBEDDED_LABELS,
    FULLTEXT_INDEXES,
    HNSW_OPTIONS,
    META,
    RANGE_INDEXES,
    HnswOptions,
)
from polyg_core.storage.write_stamp import (
    STAMP_PARAM,
    STAMP_PROPERTY,
    StampedReads,
    new_stamp,
    stamped,
    writes_data,
)

logger = logging.getLogger(__name__)

_CONNECTION_ERRORS = CONNECTION_ERRORS


def _pool_exhausted(exc: BaseException) -> bool:
    """The bounded pool had no free connection in time (the server itself is fine)."""
    return isinstance(exc, rexc.ConnectionError) and "No connection available" in str(exc)


_CONNECT_TIMEOUT_S = 10.0
_REPLY_MARGIN_S = 30.0

META_PRESENT: Final = (
    f"OPTIONAL MATCH (meta:{META} {{key: 'meta'}}) WITH count(meta) > 0 AS meta_present"
)
"""Opens a read that also tells `ensure_schema(meta_present=...)` whether the namespace's
metadata node exists, saving the round trip of its own check."""

# How long the first vector use of a namespace waits for FalkorDB to build its indexes.
VECTOR_INDEX_WAIT_S = 60.0
INDEX_BUILDING: Final = "Invalid arguments for procedure 'db.idx.vector.queryNodes'"
"""FalkorDB's error for a k-NN query on a vector index still being built or rebuilt (after
CREATE VECTOR INDEX, the start-time check, `polyg doctor --repair`, or a restart that
reloaded the graph): a read waits for it, bounded, instead of failing the caller."""
INDEX_BUILD_WAIT_S = 10.0
"""How long a read waits out a vector index being built before it fails."""


@dataclass(frozen=True)
class QueryResult:
    """Rows of a query, with FalkorDB nodes/edges turned into plain dicts."""

    header: list[str]
    rows: list[list[Any]]
    nodes_created: int = 0
    relationships_created: int = 0
    nodes_deleted: int = 0
    relationships_deleted: int = 0
    properties_set: int = 0

    def dicts(self) -> list[dict[str, Any]]:
        """Rows as dicts keyed by column name."""
        return [dict(zip(self.header, row, strict=False)) for row in self.rows]

    def scalar(self, default: Any = None) -> Any:
        """The first column of the first row, or `default` when there is none."""
        return self.rows[0][0] if self.rows and self.rows[0] else default


_SCALARS: frozenset[type] = frozenset({str, int, float, bool, type(None)})

_F9 = "{:.9g}".format


@functools.lru_cache(maxsize=64)
def _vector_text(values: tuple[float, ...]) -> str:
    """A vector's literal, kept for the last few vectors: one recall sends its question's
    vector in four or five queries (seeding, the memories' k-NN, the people's memories,
    the concepts), and writing 384 floats as text costs ~0.17 ms each time."""
    return "[" + ",".join(map(_F9, values)) + "]"


class VectorLiteral:
    """A vector parameter as a compact Cypher list literal.

    The falkordb client sends parameters as Cypher text, stringifying a list element by
    element (`repr` of each float, ~20 characters). Nine significant digits give back
    the same float32 that `vecf32` stores, in ~13 characters and a third of the time.
    """

    __slots__ = ("text",)

    def __init__(self, values: list[float]) -> None:
        self.text = _vector_text(tuple(values))

    def __str__(self) -> str:
        return self.text


def compact_vectors(value: Any, dimension: int) -> Any:
    """`value` with every list of `dimension` floats (a vector, also inside row maps and
    lists of rows) replaced by its `VectorLiteral`."""
    kind = type(cast(object, value))
    if kind is list:
        items = cast(list[Any], value)
        if not items:
            return value
        first = type(cast(object, items[0]))
        if first is float and len(items) == dimension:
            return VectorLiteral(cast(list[float], items))
        if first is dict:
            return [compact_vectors(v, dimension) for v in items]
        return value
    if kind is dict:
        return {k: compact_vectors(v, dimension) for k, v in cast(dict[str, Any], value).items()}
    return value


def _convert(value: Any) -> Any:
    # Rows are mostly scalars and flat maps of scalars: those skip the checks below
    # (this runs for every value of every row, so it shows in profiles of large replies).
    if type(value) in _SCALARS:
        return value
    if type(value) is dict:
        return {
            k: v if type(v) in _SCALARS else _convert(v)
            for k, v in cast(dict[Any, Any], value).items()
        }
    if isinstance(value, FNode):
        props = dict(value.properties)
        props["_labels"] = list(value.labels or [])
        return props
    if isinstance(value, FEdge):
        props = dict(value.properties)
        props["_type"] = value.relation
        props["_src"] = value.src_node
        props["_dst"] = value.dest_node
        return props
    if isinstance(value, FPath):
        return {
            "nodes": [_convert(n) for n in value.nodes()],
            "edges": [_convert(e) for e in value.edges()],
        }
    if isinstance(value, list):
        return [_convert(v) for v in cast(list[Any], value)]
    if isinstance(value, dict):
        return {k: _convert(v) for k, v in cast(dict[Any, Any], value).items()}
    return value


@dataclass
class FalkorStore:
    """Async access to FalkorDB for any number of namespaces.

    Every call selects its own graph handle, so concurrent calls on different
    namespaces never share state. Connection failures are retried with backoff
    (and the embedded server restarted if it died) before `StorageUnavailable`.

    With `settings.replicas`, read-only queries are spread over the replicas
    (see `polyg_core.storage.replicas`); with `settings.cluster`, the client is
    cluster-aware and each namespace lives on the shard of its key's hash slot.

    Args:
        settings: where the server is; with no host/url/cluster the embedded server is used.
        embedded: the embedded server manager (created from settings when omitted).
    """

    settings: StorageSettings = field(default_factory=StorageSettings)
    embedded: EmbeddedFalkorDB | None = None
    _db: FalkorDB | None = field(default=None, init=False, repr=False)
    _bootstrapped: set[str] = field(default_factory=set[str], init=False, repr=False)
    _vectors: dict[str, tuple[str, int]] = field(
        default_factory=dict[str, tuple[str, int]], init=False, repr=False
    )
    _dimensions: dict[str, int] = field(default_factory=dict[str, int], init=False, repr=False)
    _lock: anyio.Lock = field(default_factory=anyio.Lock, init=False, repr=False)
    _primary: Endpoint = field(init=False, repr=False)
    _router: ReplicaRouter | None = field(default=None, init=False, repr=False)
    _shards: dict[str, Endpoint] = field(default_factory=lambda: {}, init=False, repr=False)
    _reads: dict[str, StampedReads] = field(
        default_factory=dict[str, StampedReads], init=False, repr=False
    )

    def __post_init__(self) -> None:
        self._primary = Endpoint(role="primary", address="")
        if self.settings.replicas:
            self._router = ReplicaRouter.from_settings(self.settings, self._primary)

    # -- connection ---------------------------------------------------------------------------

    async def connect(self) -> FalkorStore:
        """Connect (starting the embedded server when no external one is configured).

        Raises:
            StorageUnavailable: the server cannot be reached.
            EmbeddedServerError: the embedded server cannot be started.
        """
        await self.ping()  # opens the connection inside the retry loop
        return self

    async def _ensure_db(self) -> FalkorDB:
        if self._db is not None:
            return self._db
        async with self._lock:
            if self._db is None:
                self._db = await self._open()
        return self._db

    async def _open(self) -> FalkorDB:
        s = self.settings
        if s.cluster:
            return await anyio.to_thread.run_sync(clusterlib.open_cluster, s, _CONNECT_TIMEOUT_S)
        if s.url or s.host:
            if self._router is not None:
                # The client probes the server while it is built: with replicas, a primary
                # that does not answer must not block the reads the replicas serve meanwhile.
                return await anyio.to_thread.run_sync(self._open_external)
            return self._open_external()
        if self.embedded is None:
            self.embedded = EmbeddedFalkorDB(
                s.data_dir or default_data_dir(),
                appendfsync=s.appendfsync,
                linger_s=s.embedded_linger_s,
            )
        sock = await anyio.to_thread.run_sync(self.embedded.ensure_running)
        return self._client(
            connection_class=UnixDomainSocketConnection,
            path=sock,
            socket_connect_timeout=_CONNECT_TIMEOUT_S,
        )

    def _reply_wait_s(self) -> float | None:
        """How long a reply is awaited: the query timeout plus a margin (None: no limit)."""
        s = self.settings
        wait = (s.query_timeout_ms / 1000) if s.query_timeout_ms else None
        return wait + _REPLY_MARGIN_S if wait is not None else None

    def _client(self, url: str | None = None, **kwargs: Any) -> FalkorClient:
        """A client on a bounded pool: beyond `max_connections` concurrent queries, callers
        wait for a free connection (up to the query timeout) instead of failing.

        A reply is awaited for the query timeout plus a margin (without a query timeout,
        for as long as it takes): the server stops a query that runs too long and says
        so. redis-py's own default (5 s) cut long writes off client-side while the
        server went on to apply them; the retry then applied them twice.
        """
        s = self.settings
        wait = (s.query_timeout_ms / 1000) if s.query_timeout_ms else None
        read = self._reply_wait_s()
        return FalkorClient(
            bounded_pool(
                max_connections=s.max_connections,
                wait_s=wait,
                url=url,
                socket_timeout=read,
                **kwargs,
            )
        )

    def _open_external(self) -> FalkorDB:
        s = self.settings
        if s.url:
            return self._client(s.url, socket_connect_timeout=_CONNECT_TIMEOUT_S)
        password = s.password.get_secret_value() if s.password else None
        return self._client(
            host=s.host or "localhost",
            port=s.port,
            password=password,
            socket_connect_timeout=_CONNECT_TIMEOUT_S,
        )

    async def _reset(self, failed: FalkorDB | None = None) -> None:
        """Drop the client; with `failed`, only if it is still the current one (concurrent
        callers that failed on the same broken client must not close its replacement)."""
        if failed is not None and self._db is not failed:
            return
        db, self._db = self._db, None
        # A server that went away may come back with other data (a restart that lost its
        # last writes): nothing read before is kept.
        self._reads.clear()
        await close_dropped(db, "a broken connection")

    @property
    def where(self) -> str:
        """A human description of the server in use (never includes a password)."""
        s = self.settings
        if s.cluster:
            return "cluster " + ",".join(a.split("@")[-1] for a in s.cluster_addresses)
        if s.url:
            return s.url.split("@")[-1]
        if s.host:
            return f"{s.host}:{s.port}"
        return f"embedded ({self.embedded.socket_path if self.embedded else 'not started'})"

    async def close(self) -> None:
        """Close connections and stop the embedded server if this process started it."""
        await self._reset()
        if self._router is not None:
            await self._router.close()
        if self.embedded is not None:
            await anyio.to_thread.run_sync(self.embedded.stop)

    async def ping(self) -> bool:
        """True when the server answers.

        Raises:
            StorageUnavailable: after the retries, when it does not.
        """
        await self._with_retries(lambda db: db.connection.ping(), "PING")
        return True

    async def _with_retries(self, op: Callable[[FalkorDB], Awaitable[Any]], what: str) -> Any:
        attempts = self.settings.max_retries + 1
        delay = 0.1
        last: BaseException | None = None
        for attempt in range(attempts):
            db: FalkorDB | None = None
            try:
                db = await self._ensure_db()
                result = await op(db)
                self._primary.healthy = True
                return result
            except PolygError:
                raise
            except rexc.InvalidResponse as exc:
                # Something answers on that port, but not in the Redis protocol (an HTTP
                # server, another database): retrying cannot help, the address is wrong.
                await self._reset(db)
                self._primary.mark_down(exc)
                raise StorageUnavailable(
                    f"the server at {self.where} is not FalkorDB: it does not answer in the "
                    f"Redis protocol ({exc}). Point FALKORDB_HOST/FALKORDB_PORT (or "
                    "FALKORDB_URL) at a FalkorDB server (port 6379 by default), or unset them "
                    "to use the embedded server."
                ) from exc
            except _CONNECTION_ERRORS as exc:
                if _pool_exhausted(exc):
                    raise StorageBusy(
                        f"all {self.settings.max_connections} connections to FalkorDB stayed "
                        f"busy for {self.settings.query_timeout_ms} ms; retry later, raise "
                        "POLYG_MAX_CONNECTIONS, or send fewer requests at once"
                    ) from exc
                last = exc
                logger.warning(
                    "FalkorDB %s failed (attempt %d/%d): %s", what, attempt + 1, attempts, exc
                )
                await self._reset(db)
                if attempt + 1 < attempts:
                    await anyio.sleep(delay)
                    delay = min(delay * 2, 2.0)
        assert last is not None
        self._primary.mark_down(last)
        if self._router is not None:
            raise StorageUnavailable(
                f"the FalkorDB primary at {self.where} is unreachable ({last}); writes need "
                "the primary (reads go on from the replicas). Restart it, or promote a replica "
                "(REPLICAOF NO ONE) and point FALKORDB_HOST at it; polyg reconnects on the next call."
            ) from last
        raise StorageUnavailable(
            f"FalkorDB at {self.where} is unreachable ({last}). Check that it is running "
            "(docker compose up falkordb, or unset FALKORDB_HOST to use the embedded server); "
            "polyg reconnects on the next call."
        ) from last

    # -- queries ------------------------------------------------------------------------------

    async def query(
        self,
        namespace: str,
        cypher: str,
        params: Mapping[str, Any] | None = None,
        *,
        read_only: bool = False,
        timeout_ms: int | None = None,
    ) -> QueryResult:
        """Run one parameterized Cypher query on a namespace.

        Raises:
            InvalidNamespace: the namespace name is not valid.
            QueryTimeout: the query ran longer than the timeout.
            StorageUnavailable: the server cannot be reached.
            StorageError: FalkorDB rejected the query.
        """
        validate_namespace(namespace)
        limit = self.settings.query_timeout_ms if timeout_ms is None else timeout_ms
        args: dict[str, Any] = dict(params or {})
        # The dimension is known once the namespace's vectors were set up or its embedding
        # record read (a process that only reads, like a recall-only server, learns it there).
        dimension = self._dimensions.get(namespace)
        if dimension and args:
            args = compact_vectors(args, dimension)
        if not read_only and writes_data(cypher):
            # Every write sets a new write stamp in the same query (storage.write_stamp):
            # what readers keep between recalls holds only while the stamp does.
            cypher = stamped(cypher)
            args[STAMP_PARAM] = new_stamp()

        command: list[Any] = [
            "GRAPH.RO_QUERY" if read_only else "GRAPH.QUERY",
            namespace,
            cypher_params(args) + cypher,
            "--compact",
        ]
        if limit:
            command.extend(("timeout", limit))

        async def run(db: FalkorDB) -> Any:
            try:
                response = await db.connection.execute_command(*command)
            except rexc.TimeoutError as exc:
                if read_only:
                    raise
                # The write was sent and the server, alive, is still applying it: sending
                # it again would apply it twice (a retried 40-node write left 120 nodes).
                raise QueryTimeout(
                    f"FalkorDB did not answer a write to graph {namespace!r} within "
                    f"{self._reply_wait_s()} s (the server is busy); the write was not sent "
                    "again because it may still be applied: check for its result before "
                    "repeating it, or raise POLYG_QUERY_TIMEOUT_MS"
                ) from exc
            try:
                return read_reply(response)
            except NeedsSchema:
                # Nodes, edges and paths name their labels and properties by id: the
                # client's parser looks them up in the graph's schema.
                # The client's result is untyped: read as Any where it enters.
                result: Any = FQueryResult(db.select_graph(namespace))
                await result.parse(response)
                return result

        try:
            res = await self._past_index_builds(namespace, run, read_only=read_only)
        except rexc.ResponseError as exc:
            if "empty key" in str(exc):
                return QueryResult(header=[], rows=[])
            raise _rejected(exc, namespace, limit) from exc
        return _query_result(res)

    async def _past_index_builds(
        self, namespace: str, run: Callable[[FalkorDB], Awaitable[Any]], *, read_only: bool
    ) -> Any:
        """`_counted`; a read that meets a vector index being built (after CREATE VECTOR
        INDEX, or again after FalkorDB restarted and reloaded the graph) waits for it and
        runs again, for up to `INDEX_BUILD_WAIT_S`. A write is never sent twice."""
        delay = 0.02
        deadline = anyio.current_time() + INDEX_BUILD_WAIT_S
        while True:
            try:
                return await self._counted(namespace, run, read_only=read_only)
            except rexc.ResponseError as exc:
                if (
                    not read_only
                    or INDEX_BUILDING not in str(exc)
                    or anyio.current_time() + delay > deadline
                ):
                    raise
            await anyio.sleep(delay)
            delay = min(delay * 2, 0.5)

    async def _counted(
        self, namespace: str, run: Callable[[FalkorDB], Awaitable[Any]], *, read_only: bool
    ) -> Any:
        """Run on a replica (reads, when there are replicas) or the primary, counting it."""
        router = self._router
        if read_only and router is not None:
            return await self._routed_read(run, router)
        res = await self._with_retries(run, "query")
        ep = self._shard(namespace) if self.settings.cluster else self._primary
        if read_only:
            ep.reads += 1
        else:
            ep.writes += 1
            if router is not None:
                router.note_write()
        return res

    async def list_graphs(self) -> list[str]:
        """Names of every graph key on the server (on every shard of a cluster)."""
        return sorted(n for names in (await self.graphs_by_shard()).values() for n in names)

    async def graphs_by_shard(self) -> dict[str, list[str]]:
        """Graph names per server: one entry, or one per cluster master (`host:port`)."""

        async def run(db: FalkorDB) -> Any:
            if self.settings.cluster:
                return await clusterlib.cluster_graphs(db)
            return {self.where: await db.list_graphs()}

        found: dict[str, list[Any]] = await self._with_retries(run, "GRAPH.LIST")
        return {
            shard: sorted(n.decode() if isinstance(n, bytes) else str(n) for n in names)
            for shard, names in found.items()
        }

    async def delete_graph(self, namespace: str) -> bool:
        """Delete a namespace and everything in it; False when it did not exist."""
        validate_namespace(namespace)
        if namespace not in await self.list_graphs():
            return False

        async def run(db: FalkorDB) -> Any:
            return await db.select_graph(namespace).delete()

        await self._with_retries(run, "GRAPH.DELETE")
        self.forget(namespace)
        return True

    def forget(self, namespace: str) -> None:
        """Drop what this process remembers of a namespace's schema (bootstrap, vectors)."""
        self._bootstrapped.discard(namespace)
        self._vectors.pop(namespace, None)
        self._dimensions.pop(namespace, None)
        self._reads.pop(namespace, None)

    async def memory_usage(self, namespace: str) -> int | None:
        """Bytes FalkorDB reports for a graph (GRAPH.MEMORY USAGE, whole-MB resolution)."""

        async def run(db: FalkorDB) -> Any:
            return await db.connection.execute_command("GRAPH.MEMORY", "USAGE", namespace)

        try:
            value = await self._with_retries(run, "GRAPH.MEMORY USAGE")
        except rexc.ResponseError:
            return None
        if isinstance(value, dict):  # the cluster client decodes the reply into a map
            fields = {str(k): v for k, v in cast(dict[Any, Any], value).items()}
        elif isinstance(value, list) and len(cast(list[Any], value)) >= 2:
            pairs = cast(list[Any], value)
            fields = {str(pairs[i]): pairs[i + 1] for i in range(0, len(pairs) - 1, 2)}
        else:
            return None
        total = fields.get("total_graph_sz_mb")
        return int(float(total) * 1024 * 1024) if isinstance(total, int | float) else None

    # -- routing ------------------------------------------------------------------------------

    def session(self, key: str | None) -> StoreSession:
        """Read-your-writes session for the code inside (`with` or `async with`).

        Reads of a session that has just written stay on the primary until a replica has
        applied the write (or `read_your_writes_ms` has passed). Without a session, all
        callers share one store-wide session. Has no effect without replicas.
        """
        return StoreSession(key)

    def routing_stats(self) -> list[RouteStats]:
        """Per connection: role, address, reads and writes served, health, replica lag."""
        if self.settings.cluster:
            if self._db is not None:  # list every master, also those not used yet
                for address in clusterlib.primaries(self._db):
                    self._shards.setdefault(address, Endpoint(role="shard", address=address))
            return [ep.stats() for _, ep in sorted(self._shards.items())]
        self._primary.address = self.where
        out = [self._primary.stats()]
        if self._router is not None:
            out.extend(ep.stats() for ep in self._router.replicas)
        return out

    async def refresh_replicas(self) -> None:
        """Re-read replica health and replication offsets now (normally done every
        `replica_check_ms` by the reads themselves). No-op without replicas."""
        if self._router is not None:
            await self._router.refresh(self._primary_info)

    def _shard(self, namespace: str) -> Endpoint:
        address = clusterlib.shard_of(self._db, namespace) if self._db is not None else "?"
        ep = self._shards.get(address)
        if ep is None:
            ep = self._shards[address] = Endpoint(role="shard", address=address)
        return ep

    async def _primary_info(self) -> dict[str, Any] | None:
        now = time.monotonic()
        if not self._primary.healthy and now < self._primary.retry_at:
            return None
        try:
            db = await self._ensure_db()
            info = await db.connection.info("replication")
            self._primary.healthy = True
            return dict(info)
        except _CONNECTION_ERRORS as exc:
            self._primary.mark_down(exc)
            await self._reset()
            return None

    async def _routed_read(self, run: Any, router: ReplicaRouter) -> Any:
        await router.refresh_if_due(self._primary_info)
        order = router.plan()
        failures: list[str] = []
        for i, ep in enumerate(order):
            if ep is self._primary and i == len(order) - 1:
                try:
                    res = await self._with_retries(run, "query")
                except StorageUnavailable as exc:
                    failures.append(f"primary {self.where}: {exc.__cause__}")
                    break
                ep.reads += 1
                return res
            db: FalkorDB | None = None
            try:
                db = await self._ensure_db() if ep is self._primary else await router.connect(ep)
                res = await run(db)
                if ep is self._primary:
                    ep.healthy = True
            except _CONNECTION_ERRORS as exc:
                failures.append(f"{ep.role} {ep.address or self.where}: {exc}")
                if _pool_exhausted(exc):
                    continue  # busy, not down: try the next server
                ep.mark_down(exc)
                if ep is self._primary:
                    await self._reset(db)
                elif ep.db is db:
                    await router.drop(ep)
                continue
            ep.reads += 1
            return res
        raise StorageUnavailable(
            "no FalkorDB server could answer a read (" + "; ".join(failures) + "). Check that "
            "the primary (FALKORDB_HOST) or a replica (FALKORDB_REPLICAS) is running."
        )

    # -- schema -------------------------------------------------------------------------------

    async def ensure_schema(
        self, namespace: str, kind: str = "memory", *, meta_present: bool | None = None
    ) -> None:
        """Create the range and full-text indexes and the metadata node once per namespace.

        Idempotent: existing indexes are left alone.

        Args:
            namespace: the graph.
            kind: its kind, recorded on a new metadata node.
            meta_present: whether the metadata node exists, as a query of the caller's
                own has just read it (it opens with `META_PRESENT`); None: checked here.
        """
        validate_namespace(namespace)
        if namespace in self._bootstrapped:
            # The graph may have been deleted (and written again) through another process
            # since this one bootstrapped it; then its indexes and metadata node are gone.
            if meta_present is None:
                res = await self.query(
                    namespace,
                    f"MATCH (m:{META} {{key: 'meta'}}) RETURN count(m)",
                    read_only=True,
                )
                meta_present = bool(res.rows and res.rows[0][0])
            if meta_present:
                return
            self.forget(namespace)
        now = int(time.time() * 1000)
        await self.query(
            namespace,
            f"MERGE (m:{META} {{key: 'meta'}}) "
            "ON CREATE SET m.kind = $kind, m.created_at = $now, m.last_used_at = $now",
            {"kind": kind, "now": now},
        )
        existing = await self.existing_indexes(namespace)
        for label, props in RANGE_INDEXES.items():
            for prop in props:
                if (label, prop, "RANGE") not in existing:
                    await self._create_index(
                        namespace, f"CREATE INDEX FOR (n:{label}) ON (n.{prop})"
                    )
        for label, props in FULLTEXT_INDEXES.items():
            if not any((label, p, "FULLTEXT") in existing for p in props):
                quoted = ", ".join(f"'{p}'" for p in props)
                await self._create_index(
                    namespace, f"CALL db.idx.fulltext.createNodeIndex('{label}', {quoted})"
                )
        self._bootstrapped.add(namespace)

    async def existing_indexes(self, namespace: str) -> set[tuple[str, str, str]]:
        """The namespace's indexes as (label, property, kind), kind RANGE, FULLTEXT or VECTOR."""
        res = await self.query(
            namespace,
            "CALL db.indexes() YIELD label, properties, types RETURN label, properties, types",
            read_only=True,
        )
        found: set[tuple[str, str, str]] = set()
        for label, props, types in res.rows:
            for prop in props:
                kinds = (
                    cast(dict[str, list[Any]], types).get(prop, [])
                    if isinstance(types, dict)
                    else []
                )
                for kind in kinds:
                    found.add((str(label), str(prop), str(kind)))
        return found

    async def _create_index(self, namespace: str, cypher: str) -> None:
        try:
            await self.query(namespace, cypher)
        except StorageError as exc:
            # Another process may have created it between our check and our create.
            if (
                "already indexed" not in str(exc).lower()
                and "already exists" not in str(exc).lower()
            ):
                raise

    async def embedding_record(self, namespace: str) -> tuple[str, int] | None:
        """The embedding model and dimension a namespace recorded at its first vector, or
        None when it has none yet (or does not exist)."""
        record, _stamp = await self.embedding_record_and_stamp(namespace)
        return record

    async def embedding_record_and_stamp(
        self, namespace: str
    ) -> tuple[tuple[str, int] | None, str | None]:
        """`embedding_record` and the namespace's write stamp (`storage.write_stamp`; None
        before its first stamped write), read together from its metadata node."""
        res = await self.query(
            namespace,
            f"MATCH (m:{META} {{key: 'meta'}}) "
            f"RETURN m.embedding_model, m.dimension, m.{STAMP_PROPERTY}",
            read_only=True,
        )
        model, dim, stamp = res.rows[0] if res.rows else (None, None, None)
        stamp = str(stamp) if stamp is not None else None
        if model is None:
            self._dimensions.pop(namespace, None)
            return None, stamp
        if dim:
            self._dimensions[namespace] = int(dim)
        return (str(model), int(dim or 0)), stamp

    def stamped_reads(self, namespace: str, stamp: str | None) -> StampedReads | None:
        """The replies kept for `namespace` under `stamp`, a stamp the caller has just read
        (`embedding_record_and_stamp`) before reading anything it keeps there; a new, empty
        cache when the stamp changed. None when nothing may be kept: the namespace has no
        stamp yet, or reads are spread over replicas (a replica may lag behind the stamp
        read on another server)."""
        if stamp is None or self._router is not None:
            return None
        reads = self._reads.get(namespace)
        if reads is None or reads.stamp != stamp:
            reads = self._reads[namespace] = StampedReads(stamp)
        return reads

    async def ensure_vectors(self, namespace: str, model: str, dimension: int) -> None:
        """Record the embedding model/dimension of a namespace and create its vector indexes.

        A missing index is created with `hnsw_options`; an existing one is left as it is,
        whatever its options (a namespace created with FalkorDB's defaults keeps them).

        Raises:
            EmbeddingMismatch: the namespace was built with another model or dimension.
        """
        cached = self._vectors.get(namespace)
        if cached == (model, dimension):
            return
        await self.ensure_schema(namespace)
        record = await self.embedding_record(namespace)
        check_embedding(namespace, record, model, dimension)
        if record is None:
            await self.query(
                namespace,
                f"MATCH (m:{META} {{key: 'meta'}}) SET m.embedding_model = $model, m.dimension = $dim",
                {"model": model, "dim": dimension},
            )
        existing = await self.existing_indexes(namespace)
        created = False
        for label in EMBEDDED_LABELS:
            if (label, "embedding", "VECTOR") not in existing:
                await self._create_index(
                    namespace,
                    f"CREATE VECTOR INDEX FOR (n:{label}) ON (n.embedding) "
                    f"OPTIONS {self.hnsw_options(label).cypher(dimension)}",
                )
                created = True
        if created:
            # Index definitions replayed from the AOF's incremental part break vector
            # indexes (storage/index_check.py); rewritten into the base they load intact,
            # so a crash after this point replays only data.
            await self._compact_embedded()
        await self._vector_indexes_operational(namespace)
        self._vectors[namespace] = (model, dimension)
        self._dimensions[namespace] = dimension

    def hnsw_options(self, label: str) -> HnswOptions:
        """The HNSW options this store gives a new vector index on `label`: polyg's default
        for the label, each parameter the settings set taking its place."""
        default = HNSW_OPTIONS[label]
        s = self.settings
        return HnswOptions(
            m=s.hnsw_m or default.m,
            ef_construction=s.hnsw_ef_construction or default.ef_construction,
            ef_runtime=s.hnsw_ef_runtime or default.ef_runtime,
        )

    async def _vector_indexes_operational(
        self, namespace: str, timeout_s: float = VECTOR_INDEX_WAIT_S
    ) -> None:
        """Wait until the namespace's vector indexes answer queries.

        FalkorDB builds an index in the background after `CREATE VECTOR INDEX`; until it
        reports OPERATIONAL, `db.idx.vector.queryNodes` on it fails with "Invalid
        arguments for procedure" (even on an empty label). Waiting here, once per
        namespace and store, keeps that window away from the first k-NN query.

        Raises:
            StorageError: an index is still under construction after `timeout_s`.
        """
        deadline = time.monotonic() + timeout_s
        while True:
            res = await self.query(
                namespace,
                "CALL db.indexes() YIELD label, types, status RETURN label, types, status",
                read_only=True,
            )
            pending = [
                f"{label}: {status}"
                for label, types, status in res.rows
                if label in EMBEDDED_LABELS
                and isinstance(types, dict)
                and "VECTOR" in cast(dict[str, list[str]], types).get("embedding", [])
                and status != "OPERATIONAL"
            ]
            if not pending:
                return
            if time.monotonic() >= deadline:
                raise StorageError(
                    f"vector indexes of graph {namespace!r} still being built after "
                    f"{timeout_s:.0f} s ({'; '.join(pending)}); try again shortly"
                )
            await anyio.sleep(0.01)

    async def _compact_embedded(self) -> None:
        """Ask the embedded server to rewrite its AOF into the base (no-op when external)."""
        s = self.settings
        if self.embedded is None or s.url or s.host or s.cluster:
            return
        await anyio.to_thread.run_sync(self.embedded.compact, 0.0)

    async def check_vector_indexes(
        self, *, repair: bool = False
    ) -> list[index_check.VectorIndexCheck]:
        """Probe every node vector index on the server with a k-NN query of known size.

        Args:
            repair: rebuild the indexes that answer short (drop, re-create, populate;
                about 7 s per 10,000 384-dimension vectors on a small machine).

        Raises:
            StorageUnavailable: the server cannot be reached.
        """
        graphs = await self.list_graphs()
        timeout_s = self.embedded.load_timeout if self.embedded is not None else 3600.0

        async def run(db: FalkorDB) -> list[index_check.VectorIndexCheck]:
            return await index_check.verify(db, graphs, repair=repair, timeout_s=timeout_s)

        checks: list[index_check.VectorIndexCheck] = await self._with_retries(
            run, "vector index check"
        )
        if any(c.rebuilt_s is not None for c in checks):
            await self._compact_embedded()
        return checks

    async def metadata(self, namespace: str) -> dict[str, Any]:
        """The namespace's metadata node (kind, created/last used, embedding model), or {}."""
        res = await self.query(
            namespace, f"MATCH (m:{META} {{key: 'meta'}}) RETURN properties(m)", read_only=True
        )
        return dict(res.rows[0][0]) if res.rows else {}

    async def touch(self, namespace: str) -> None:
        """Record that a namespace was used now."""
        await self.query(
            namespace,
            f"MATCH (m:{META} {{key: 'meta'}}) SET m.last_used_at = $now",
            {"now": int(time.time() * 1000)},
        )


def check_embedding(
    namespace: str, record: tuple[str, int] | None, model: str, dimension: int | None
) -> None:
    """The one check of an embedding model against a namespace's record (writes and reads
    both call it): the same model and, when known (`dimension` not None), the same length.

    Raises:
        EmbeddingMismatch: another model or dimension, with the ways out.
    """
    if record is None:
        return
    stored_model, stored_dim = record
    if stored_model == model and dimension in (None, stored_dim):
        return
    configured = f"{model!r}" + (f" (dimension {dimension})" if dimension is not None else "")
    raise EmbeddingMismatch(
        f"graph {namespace!r} was built with embedding model {stored_model!r} "
        f"(dimension {stored_dim}), but polyg is configured with {configured}. "
        f"Set EMBEDDING_MODEL={stored_model} to use this graph, use another graph name, "
        "or re-embed it (polyg export, then import into a new graph)."
    )


async def check_readable(store: FalkorStore, namespace: str, model: str, dimension: int) -> bool:
    """Check, without writing, that vectors of `model` and `dimension` (a query vector's
    length) can be searched in a namespace: the check writes make (`check_embedding`), so
    a read under another model gets the same clear error instead of FalkorDB's or
    silently nothing.

    Returns False when the namespace has no embeddings yet (nothing to search).

    Raises:
        EmbeddingMismatch: the namespace was built with another model or dimension.
    """
    record = await store.embedding_record(namespace)
    if record is None:
        return False
    check_embedding(namespace, record, model, None)
    check_embedding(namespace, record, model, dimension)
    return True


async def open_store(settings: StorageSettings | None = None) -> FalkorStore:
    """Create a store from settings and connect it."""
    return await FalkorStore(settings or StorageSettings()).connect()


def _rejected(exc: rexc.ResponseError, namespace: str, limit: int) -> StorageError:
    """The error to raise for a query FalkorDB refused, saying what to do about it."""
    text = str(exc)
    if "timed out" in text.lower() or "timeout" in text.lower():
        return QueryTimeout(
            f"the query took longer than {limit} ms and was stopped; raise "
            "POLYG_QUERY_TIMEOUT_MS or narrow the request (smaller depth or limit)"
        )
    if "MISCONF" in text:
        return StorageError(
            f"FalkorDB refused the write to graph {namespace!r} because it cannot write "
            f"its append-only file (disk full?): nothing of this write was kept. Free "
            f"space where the data lives, then retry. ({text})"
        )
    return StorageError(f"FalkorDB rejected a query on graph {namespace!r}: {text}")


def _query_result(res: Reply | FQueryResult) -> QueryResult:
    """A reply as plain values: header names, rows of Python values, counts."""
    if isinstance(res, Reply):
        return QueryResult(
            header=res.header,
            rows=res.rows,
            nodes_created=res.count("Nodes created"),
            relationships_created=res.count("Relationships created"),
            nodes_deleted=res.count("Nodes deleted"),
            relationships_deleted=res.count("Relationships deleted"),
            properties_set=res.count("Properties set"),
        )
    client: Any = res  # the falkordb client's result is untyped
    raw_header = cast(Sequence[Any], client.header or ())
    raw_rows = cast(Sequence[Sequence[Any]], client.result_set or ())
    header = [
        str(cast(Sequence[Any], h)[1]) if isinstance(h, list | tuple) else str(h)
        for h in raw_header
    ]
    rows = [[v if type(v) in _SCALARS else _convert(v) for v in row] for row in raw_rows]
    return QueryResult(
        header=header,
        rows=rows,
        nodes_created=int(client.nodes_created or 0),
        relationships_created=int(client.relationships_created or 0),
        nodes_deleted=int(client.nodes_deleted or 0),
        relationships_deleted=int(client.relationships_deleted or 0),
        properties_set=int(client.properties_set or 0),
    )
