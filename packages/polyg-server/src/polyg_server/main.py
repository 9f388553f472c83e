"""`polyg-mcp`: the MCP server over stdio (default) or Streamable HTTP (`--http`)."""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, BinaryIO

import anyio
from anyio.abc import TaskGroup
from polyg_core.config import Settings, settings_from_env
from polyg_core.errors import InvalidInput, PolygError
from polyg_shared.types import MAX_CONTENT

from polyg_server.app import create_server
from polyg_server.context import ContextOpening, JobOptions, ServerContext
from polyg_server.http import HttpOptions, create_http_app, is_loopback
from polyg_server.http_server import HttpLimits, server_config
from polyg_server.registry import select_tools
from polyg_server.stdio import StdioLimits, reserve_stdout
from polyg_server.tools import builtin_tool_specs

if TYPE_CHECKING:
    from polyg_core.providers.embeddings.base import Embedder

logger = logging.getLogger("polyg_server")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line of `polyg-mcp`."""
    parser = argparse.ArgumentParser(
        prog="polyg-mcp",
        description=(
            "polyg MCP server: multi-graph memory for AI agents. Serves stdio by default; "
            "configuration comes from environment variables (FALKORDB_*, POLYG_*, LLM_MODEL, ...)."
        ),
    )
    parser.add_argument(
        "--http", action="store_true", help="serve Streamable HTTP at /mcp instead of stdio"
    )
    parser.add_argument("--host", help="HTTP bind address (default: POLYG_HOST or 127.0.0.1)")
    parser.add_argument("--port", type=int, help="HTTP port (default: POLYG_PORT or 3000)")
    parser.add_argument(
        "--stateless",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=(
            "with --http: serve every request without an MCP session, so several polyg-mcp "
            "processes behind a load balancer can answer one client (default: "
            "POLYG_HTTP_STATELESS or off)"
        ),
    )
    parser.add_argument(
        "--sse",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=(
            "with --http: answer tool calls as SSE streams instead of one JSON body each "
            "(default: POLYG_HTTP_SSE or off; no tool streams anything)"
        ),
    )
    parser.add_argument(
        "--allow-unauthenticated",
        action="store_true",
        default=None,
        help=(
            "with --http: serve on a non-loopback address without POLYG_API_KEY, so anyone "
            "who can reach the port can read and delete memory (default: "
            "POLYG_ALLOW_UNAUTHENTICATED or off: such a server refuses to start)"
        ),
    )
    return parser.parse_args(argv)


_TRUE = ("1", "true", "yes", "on")
_FALSE = ("", "0", "false", "no", "off")


def stateless_from(flag: bool | None, environ: Mapping[str, str]) -> bool:
    """Stateless HTTP: the `--stateless`/`--no-stateless` flag, else `POLYG_HTTP_STATELESS`.

    Raises:
        InvalidInput: `POLYG_HTTP_STATELESS` is not a boolean.
    """
    return _switch(flag, environ, "POLYG_HTTP_STATELESS")


def sse_from(flag: bool | None, environ: Mapping[str, str]) -> bool:
    """SSE responses on HTTP: the `--sse`/`--no-sse` flag, else `POLYG_HTTP_SSE` (off).

    Raises:
        InvalidInput: `POLYG_HTTP_SSE` is not a boolean.
    """
    return _switch(flag, environ, "POLYG_HTTP_SSE")


def _switch(flag: bool | None, environ: Mapping[str, str], name: str) -> bool:
    if flag is not None:
        return flag
    value = environ.get(name, "").strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise InvalidInput(f"{name}={value!r} is not a boolean: set it to true or false")


def unauthenticated_on_network(settings: Settings) -> bool:
    """True when HTTP would be served on a non-loopback address without an API key, as
    `--allow-unauthenticated` (POLYG_ALLOW_UNAUTHENTICATED) allows.

    Raises:
        InvalidInput: the bind address is not loopback, POLYG_API_KEY is unset and
            serving without it is not allowed.
    """
    if settings.api_key is not None or is_loopback(settings.host):
        return False
    if settings.allow_unauthenticated:
        return True
    raise InvalidInput(
        f"refusing to serve HTTP on {settings.host} without an API key: anyone who can reach "
        "this port could read and delete memory. Set POLYG_API_KEY (clients then send "
        "'Authorization: Bearer <key>'), or bind 127.0.0.1 (POLYG_HOST / --host), or pass "
        "--allow-unauthenticated (POLYG_ALLOW_UNAUTHENTICATED=true) to serve anyway"
    )


def without_queue_on_cluster(settings: Settings) -> None:
    """With `FALKORDB_CLUSTER`, run no job worker and let remember always write at once.

    The job queue needs one Redis server, not a cluster (see
    `polyg_core.jobs.open_redis`); only `remember` with `wait: false` then fails,
    with a message that says so.
    """
    if not settings.storage.cluster:
        return
    if settings.job_workers or settings.remember_wait_max_chars < MAX_CONTENT:
        logger.warning(
            "FALKORDB_CLUSTER is set: the job queue needs one Redis server, so no job worker "
            "runs and remember writes before it answers, whatever the length of the text"
        )
    settings.job_workers = 0
    settings.remember_wait_max_chars = MAX_CONTENT


def configure_logging(level: str) -> None:
    """Log to stderr only: stdout carries the stdio protocol."""
    logging.basicConfig(
        level=level,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        force=True,
    )


def _embedder(settings: Settings) -> Embedder | None:
    try:
        from polyg_core.providers.embeddings import make_embedder

        return make_embedder(settings.embedding_model, api_base=settings.llm_base_url)
    except ImportError as exc:
        logger.warning("no embedder (%s); semantic search is unavailable", exc)
        return None


_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _ignore_signal(signum: int, frame: FrameType | None) -> None:
    logger.debug("signal %d after shutdown ignored", signum)


async def _until_signal(run: Callable[[], Awaitable[None]]) -> None:
    """Run until `run` returns or SIGINT/SIGTERM arrives, so cleanup code still runs."""
    async with anyio.create_task_group() as tg:

        async def watch() -> None:
            with anyio.open_signal_receiver(*_SIGNALS) as signals:
                async for signum in signals:
                    logger.info("signal %d: shutting down", signum)
                    tg.cancel_scope.cancel()
                    return

        if sys.platform != "win32":
            tg.start_soon(watch)
        await run()
        tg.cancel_scope.cancel()


def schema_cache_file(environ: Mapping[str, str]) -> Path:
    """Where `polyg-mcp` keeps its tools' JSON schemas between starts
    (`$XDG_CACHE_HOME/polyg/tool-schemas.json`, by default under `~/.cache`)."""
    base = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "polyg" / "tool-schemas.json"


def _import_store_and_memory(job_queue: bool) -> None:
    """Import what opening the context and the first call need (Redis client, graphs,
    numpy; the job queue's saq): a few hundred ms, run in a worker thread while the
    client handshakes."""
    import polyg_core.memory  # pyright: ignore[reportUnusedImport]
    import polyg_core.storage.store  # pyright: ignore[reportUnusedImport]

    if job_queue:
        import polyg_core.jobs  # noqa: F401  # pyright: ignore[reportUnusedImport]


async def open_server_context(
    settings: Settings, *, load_model_in: TaskGroup | None = None
) -> ServerContext:
    """Connect the store (starting the embedded FalkorDB) and build the server context.

    Args:
        settings: the configuration.
        load_model_in: load the embedding model, then recall's lazily imported parts
            (`warm_recall`), in a task of this group while the store connects (default:
            on the first call that needs them).

    Raises:
        StorageUnavailable: FalkorDB cannot be reached.
        EmbeddedServerError: the embedded FalkorDB cannot be started.
    """
    await anyio.to_thread.run_sync(_import_store_and_memory, settings.job_workers > 0)
    from polyg_core.providers.llm import make_llm
    from polyg_core.storage.store import FalkorStore

    embedder, llm = await anyio.to_thread.run_sync(
        lambda: (_embedder(settings), make_llm(settings))
    )
    if load_model_in is not None:
        load_model_in.start_soon(_warm_up, embedder)
    store = FalkorStore(settings.storage)
    try:
        await store.connect()
        logger.info("FalkorDB: %s", store.where)
        return ServerContext(
            store=store,
            settings=settings,
            embedder=embedder,
            llm=llm,
            jobs=JobOptions.from_settings(settings),
        )
    except BaseException:
        with anyio.CancelScope(shield=True):
            await store.close()
        raise


async def _warm_up(embedder: Embedder | None) -> None:
    """Load an embedder's model (the local one has `load`), then what recall imports on
    first use, before a call needs them."""
    load: Callable[[], object] | None = getattr(embedder, "load", None)
    if load is not None:
        try:
            await anyio.to_thread.run_sync(load)
        except Exception as exc:  # the first call that embeds reports it
            logger.warning("embedding model not loaded at start: %s", exc)
    from polyg_core.recall.warm import freeze_heap, warm_recall

    try:
        await anyio.to_thread.run_sync(warm_recall)
    except Exception as exc:  # the first recall imports them and reports what fails
        logger.warning("recall's parts not loaded at start: %s", exc)
    # What the process loaded for its life leaves the garbage collector's full passes.
    freeze_heap()


async def serve_stdio(
    settings: Settings, limits: StdioLimits, stdout: BinaryIO | None = None
) -> None:
    """Serve MCP over stdio, answering the handshake while the context opens.

    The client's `initialize` and `tools/list` are answered at once (tool schemas need no
    database); the store connects, the embedded FalkorDB starts and the embedding model
    loads meanwhile, and tool calls wait for that. If the context cannot be opened, the
    server logs the reason and stays up: each tool call answers with that reason (and
    how to fix it) after trying to connect again, so a FalkorDB started later is used.

    Raises:
        PolygError: the store was never connected; the reason (after stdin closed).
    """
    opening = ContextOpening(settings, reopen=lambda: open_server_context(settings))
    server = create_server(opening, schema_cache=schema_cache_file(os.environ))

    async def open_in_background(tg: TaskGroup) -> None:
        try:
            ctx = await open_server_context(settings, load_model_in=tg)
        except Exception as exc:
            logger.error("%s (tool calls answer with this and try to connect again)", exc)
            opening.failed(exc)
            return
        opening.opened(ctx)
        ctx.memory_or_none()

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(open_in_background, tg)
            logger.info("serving MCP over stdio")
            await _until_signal(lambda: server.run_limited_stdio(limits, stdout))
            tg.cancel_scope.cancel()
    finally:
        if opening.ctx is not None:
            with anyio.CancelScope(shield=True):
                await opening.ctx.store.close()
    if opening.ctx is None and opening.error is not None:
        raise opening.error


async def serve(
    settings: Settings,
    *,
    http: bool,
    stateless: bool = False,
    sse: bool = False,
    stdout: BinaryIO | None = None,
) -> None:
    """Connect the store, build the server and serve until the client or a signal ends it.

    Args:
        settings: the configuration.
        http: serve Streamable HTTP (else stdio).
        stateless: with `http`, keep no MCP session between requests (for replicas
            behind a load balancer).
        sse: with `http`, answer calls as SSE streams instead of one JSON body each.
        stdout: without `http`, the stream MCP messages go to (`reserve_stdout`); default:
            the process's stdout.
    """
    if not http:
        limits = StdioLimits(max_message_bytes=settings.stdio_max_message_bytes)
        await serve_stdio(settings, limits, stdout)
        return
    if unauthenticated_on_network(settings):
        logger.warning(
            "serving HTTP on %s without POLYG_API_KEY (allowed by --allow-unauthenticated): "
            "anyone who can reach this port can read and delete memory",
            settings.host,
        )
    ctx = await open_server_context(settings)
    store = ctx.store
    try:
        server = create_server(ctx, schema_cache=schema_cache_file(os.environ))
        import uvicorn

        app = create_http_app(server, ctx, HttpOptions(stateless=stateless, json_response=not sse))
        config = server_config(
            app,
            host=settings.host,
            port=settings.port,
            limits=HttpLimits.from_settings(settings),
            log_level=settings.log_level.lower(),
        )
        logger.info(
            "serving MCP over HTTP at http://%s:%d/mcp%s",
            settings.host,
            settings.port,
            " (stateless)" if stateless else "",
        )
        # uvicorn shuts down gracefully on SIGINT/SIGTERM and then re-raises the signal to
        # the handler it found; a no-op one lets this function close the store afterwards.
        previous = {sig: signal.signal(sig, _ignore_signal) for sig in _SIGNALS}
        try:
            await uvicorn.Server(config).serve()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
    finally:
        with anyio.CancelScope(shield=True):
            await store.close()


def event_loop_options() -> dict[str, bool]:
    """anyio's asyncio options: uvloop's event loop when it is installed (not on Windows).

    uvloop (libuv) runs the server's sockets, timers and callbacks in C, and uvicorn parses
    HTTP with httptools when it is installed; together they raised `get_entity` calls
    over HTTP from ~464 to ~512 per second at 10 clients (docs/benchmarks.md, section 2).
    """
    return {"use_uvloop": True} if importlib.util.find_spec("uvloop") is not None else {}


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of `polyg-mcp`."""
    args = parse_args(argv)
    # stdio: from here on, only MCP messages reach stdout, whatever prints or logs.
    stdout = None if args.http else reserve_stdout()
    try:
        settings = settings_from_env(os.environ)
    except InvalidInput as exc:
        sys.stderr.write(f"polyg-mcp: {exc}\n")
        raise SystemExit(2) from None
    if args.host:
        settings.host = args.host
    if args.port is not None:
        settings.port = args.port
    if args.allow_unauthenticated:
        settings.allow_unauthenticated = True
    try:
        stateless = stateless_from(args.stateless, os.environ)
        sse = sse_from(args.sse, os.environ)
    except InvalidInput as exc:
        sys.stderr.write(f"polyg-mcp: invalid configuration: {exc}\n")
        raise SystemExit(2) from None
    configure_logging(settings.log_level)
    if args.http:
        try:
            unauthenticated_on_network(settings)
        except InvalidInput as exc:
            logger.error("%s", exc)
            raise SystemExit(2) from None
    without_queue_on_cluster(settings)
    try:
        select_tools(settings.tools, builtin_tool_specs())
    except PolygError as exc:
        logger.error("%s", exc)
        raise SystemExit(2) from None
    try:
        anyio.run(
            lambda: serve(settings, http=args.http, stateless=stateless, sse=sse, stdout=stdout),
            backend_options=event_loop_options(),
        )
    except KeyboardInterrupt:
        pass
    except PolygError as exc:
        logger.error("%s", exc)
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
