"""Building the MCP server: tools filtered by profile, resources, no global state."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Iterable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer

from polyg_server.access import record_access
from polyg_server.context import ContextOpening, ServerContext
from polyg_server.registry import PolygServer, ToolSpec, register_tool, select_tools
from polyg_server.resources import register_resources
from polyg_server.schema_cache import SchemaCache
from polyg_server.tools import builtin_tool_specs
from polyg_server.tools.jobs import background_jobs

INSTRUCTIONS = (
    "polyg is long-term memory: remember stores what you learn (notes, decisions, "
    "incidents), recall answers questions from it. Tools take an optional `graph` "
    "(namespace); omit it for the default memory. Errors say what to fix."
)


def _version() -> str:
    try:
        return version("polyg-server")
    except PackageNotFoundError:  # running from a source tree without metadata
        return "0.0.0"


def _lifespan(
    ctx: ServerContext | ContextOpening,
) -> Callable[[MCPServer[Any]], AbstractAsyncContextManager[dict[str, Any]]]:
    """What runs while the server serves: the in-process job worker (`ctx.jobs.workers`),
    from when the context is open, and the writer of memory accesses (`access.py`)."""

    @asynccontextmanager
    async def lifespan(_server: MCPServer[Any]) -> AsyncGenerator[dict[str, Any]]:
        async with anyio.create_task_group() as tg:
            tg.start_soon(record_access, ctx)
            try:
                if isinstance(ctx, ServerContext):
                    async with background_jobs(ctx):
                        yield {}
                else:
                    tg.start_soon(_jobs_once_open, ctx)
                    yield {}
            finally:
                tg.cancel_scope.cancel()

    return lifespan


async def _jobs_once_open(opening: ContextOpening) -> None:
    ctx = await opening.wait_opened()  # after a failed start, once a call reconnects
    async with background_jobs(ctx):
        await anyio.sleep_forever()


def create_server(
    ctx: ServerContext | ContextOpening,
    *,
    profiles: str | Iterable[str] | None = None,
    tools: Iterable[ToolSpec[Any, Any]] | None = None,
    schema_cache: Path | None = None,
    output_schemas: bool | None = None,
) -> PolygServer:
    """Create the MCP server for a context.

    While it serves (stdio, Streamable HTTP or an in-memory client session), the
    context's in-process job worker runs when `ctx.jobs.workers` > 0.

    Args:
        ctx: the core objects the tools use, or a context being opened (tool calls
            and resource reads wait for it; the job worker starts once it is open).
        profiles: the profiles and tool names to offer, as `POLYG_TOOLS` takes them
            (`memory`, `graph`, `retrieval`, `admin`, `scratch`, `all`, tool names);
            default: `ctx.settings.tools` (the `POLYG_TOOLS` value).
        tools: the tool specs to register (default: every built-in tool).
        schema_cache: a file that keeps the tools' JSON schemas between starts
            (`polyg_server.schema_cache`; default: generated at every start).
        output_schemas: advertise each tool's `outputSchema` (default:
            `ctx.settings.output_schemas`, the `POLYG_OUTPUT_SCHEMAS` value).

    Raises:
        InvalidInput: a name that is neither a profile nor a tool.
    """
    specs = builtin_tool_specs() if tools is None else list(tools)
    selected = select_tools(ctx.settings.tools if profiles is None else profiles, specs)
    schemas = SchemaCache(schema_cache)
    server = PolygServer(
        ctx,
        selected,
        schemas,
        output_schemas=(ctx.settings.output_schemas if output_schemas is None else output_schemas),
        name="polyg",
        title="polyg",
        version=_version(),
        instructions=INSTRUCTIONS,
        log_level=ctx.settings.log_level,
        lifespan=_lifespan(ctx),
    )
    for spec in specs:
        register_tool(server, spec)
    schemas.save()
    register_resources(server, ctx)
    return server
