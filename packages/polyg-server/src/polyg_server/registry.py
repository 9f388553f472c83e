"""Tool registration: a pydantic input model, a structured output model, annotations, a profile.

A tool is declared once as a `ToolSpec` and registered with `register_tool`:

    GET_STATISTICS = ToolSpec(
        name="get_statistics",
        description="Node and edge counts per graph and cross-link type.",
        input_model=GraphArgs,
        output_model=GraphStatistics,
        handler=get_statistics,            # async (ctx, inp) -> GraphStatistics
        annotations=READ_ONLY,
        profile="admin",
    )

The advertised `inputSchema` is the input model's JSON schema made compact for the
model that reads it (`polyg_server.tool_schema`); the `outputSchema`, the output
model's, is advertised only when `POLYG_OUTPUT_SCHEMAS` is on (MCP makes it
optional, and it is most of a tool list's size: docs/api-reference.md). Every call
is validated against the input model, the result against the output model, and
every failure becomes a tool error (`isError: true`) whose text says what to fix.
"""

from __future__ import annotations

import difflib
import json
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO, Final, Generic, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool, ToolManager
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from polyg_core.errors import InvalidInput
from polyg_core.storage.namespace import validate_namespace
from polyg_shared.types import StrictInput, graph_argument, reject_control_chars
from pydantic import (
    BaseModel,
    Field,
    ValidationError,
    field_validator,
)

from polyg_server.context import ContextOpening, ServerContext, open_context, store_session_key
from polyg_server.errors import tool_error_text
from polyg_server.sampling import InputNeeded, client_model
from polyg_server.schema_cache import SchemaCache
from polyg_server.stdio import StdioLimits, limited_stdio_server
from polyg_server.tool_schema import compact_schema

if TYPE_CHECKING:
    from mcp.server.mcpserver.context import Context

logger = logging.getLogger(__name__)

PROFILES: Final[Mapping[str, str]] = {
    "memory": "the memory job: recall, remember, the entity, fact, timeline and why reads, "
    "update and forget",
    "graph": "direct reads and writes of the memory graphs: entities, relations, events, "
    "facts, concepts, causal links, merges",
    "retrieval": "the recall pipeline one step at a time, for agents that drive retrieval "
    "themselves",
    "admin": "graphs (namespaces), statistics, export and import, clearing, background jobs",
    "scratch": "scratch graphs for thinking: nodes, edges, paths, centrality, cycles, formats",
}
"""The tool profiles `POLYG_TOOLS` selects from (every tool belongs to exactly one)."""
PROFILE_ALIASES: Final[Mapping[str, str]] = {"magma": "retrieval", "engine": "scratch"}
"""Earlier names of profiles, still accepted."""
DEFAULT_TOOLS: Final = "memory"
"""What a server offers when `POLYG_TOOLS` is not set."""
ALL: Final = "all"

READ_ONLY: Final = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True
)
WRITE: Final = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False)
WRITE_IDEMPOTENT: Final = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True
)
DESTRUCTIVE: Final = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True
)


class ToolInput(StrictInput):
    """Base of every tool input: unknown arguments are errors, `graph` picks the namespace."""

    graph: str | None = graph_argument("Namespace to use; omit for the default.")

    @field_validator("graph")
    @classmethod
    def _valid_graph(cls, value: str | None) -> str | None:
        return None if value is None else validate_namespace(value)


InT = TypeVar("InT", bound=BaseModel)
OutT = TypeVar("OutT", bound=BaseModel)


@dataclass(frozen=True)
class ToolSpec(Generic[InT, OutT]):
    """Everything the server needs to expose one tool.

    Args:
        name: the tool name clients call.
        description: what the tool does and when to use it (shown to the model).
        input_model: validates the arguments; its JSON schema is the `inputSchema`.
        output_model: validates the result; its JSON schema is the `outputSchema`.
        handler: `async (ctx, validated_input) -> output_model instance`.
        annotations: read-only / destructive / idempotent hints.
        profile: the profile the tool belongs to (a key of `PROFILES`).
        title: an optional human-readable title.
        uses_llm: the handler classifies, extracts or synthesizes; without `LLM_MODEL`
            the calling client's model answers it through sampling (`polyg_server.sampling`).
    """

    name: str
    description: str
    input_model: type[InT]
    output_model: type[OutT]
    handler: Callable[[ServerContext, InT], Awaitable[OutT]]
    annotations: ToolAnnotations
    profile: str
    title: str | None = None
    uses_llm: bool = False

    def __post_init__(self) -> None:
        if self.profile not in PROFILES:
            raise ValueError(
                f"tool {self.name!r}: unknown profile {self.profile!r}; "
                f"use one of {', '.join(PROFILES)}"
            )


@dataclass(frozen=True)
class ToolSelection:
    """What `POLYG_TOOLS` selected: whole profiles and single tools by name."""

    profiles: frozenset[str]
    names: frozenset[str] = frozenset()

    def includes(self, spec: ToolSpec[Any, Any]) -> bool:
        """Whether the tool is selected, by its profile or by its name."""
        return spec.profile in self.profiles or spec.name in self.names


def select_tools(
    value: str | Iterable[str] | None, specs: Sequence[ToolSpec[Any, Any]]
) -> ToolSelection:
    """What a `POLYG_TOOLS` value selects.

    Args:
        value: comma-separated profile names (`memory`, `graph`, `retrieval`, `admin`,
            `scratch`, `all`) and tool names, in any mix; None or empty: the default
            profile (`memory`).
        specs: the tools a name may name.

    Raises:
        InvalidInput: a name is neither a profile nor one of the tools.
    """
    if value is None:
        names: list[str] = []
    elif isinstance(value, str):
        names = [p.strip() for p in value.split(",") if p.strip()]
    else:
        names = [p.strip() for p in value if p.strip()]
    known = {spec.name for spec in specs}
    profiles: set[str] = set()
    tools: set[str] = set()
    unknown: list[str] = []
    for raw in names or [DEFAULT_TOOLS]:
        name = PROFILE_ALIASES.get(raw.lower(), raw.lower())
        if name == ALL:
            profiles.update(PROFILES)
        elif name in PROFILES:
            profiles.add(name)
        elif raw in known:
            tools.add(raw)
        else:
            unknown.append(raw)
    if unknown:
        raise InvalidInput(_unknown_tools_message(unknown, sorted(known)))
    return ToolSelection(frozenset(profiles), frozenset(tools))


def _unknown_tools_message(unknown: list[str], tools: list[str]) -> str:
    hints = [
        f"{name!r} (did you mean {', '.join(close)}?)" if close else repr(name)
        for name in unknown
        for close in [difflib.get_close_matches(name, [*PROFILES, ALL, *tools], n=2)]
    ]
    return (
        f"POLYG_TOOLS has unknown name(s) {', '.join(hints)}: give comma-separated profiles "
        f"({', '.join((*PROFILES, ALL))}) and tool names, e.g. 'memory,add_fact'. "
        f"Tools: {', '.join(tools)}."
    )


def _output_schema(model: type[BaseModel], schemas: SchemaCache) -> dict[str, Any]:
    schema = schemas.schema(model, "serialization")
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        # A self-referencing model's root is a bare $ref; MCP needs an object root.
        definition = schema["$defs"][ref.removeprefix("#/$defs/")]
        schema = {**definition, **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema


def _pre_parse(model: type[BaseModel], arguments: dict[str, Any]) -> dict[str, Any]:
    """Decode JSON-encoded lists/objects some clients send as strings for non-string fields."""
    out = dict(arguments)
    for key, value in arguments.items():
        field = model.model_fields.get(key)
        if field is None or field.annotation is str or not isinstance(value, str):
            continue
        text = value.strip()
        if text[:1] in ("[", "{"):
            try:
                out[key] = json.loads(text)
            except (ValueError, RecursionError):
                continue
    return out


class PolygTool(Tool):
    """An MCPServer tool whose schemas come from pydantic models and whose errors are mapped."""

    input_model: type[BaseModel]
    output_model: type[BaseModel]
    profile: str
    uses_llm: bool = False
    server_context: Any = Field(default=None, exclude=True)

    @classmethod
    def from_spec(
        cls,
        spec: ToolSpec[Any, Any],
        ctx: ServerContext | ContextOpening,
        schemas: SchemaCache | None = None,
        *,
        output_schema: bool = False,
    ) -> PolygTool:
        """Build the tool for a spec, bound to a server context (or one being opened).

        `schemas`: where the tool's JSON schemas come from (default: generated now).
        `output_schema`: advertise the output model's schema (structured results are
        sent either way).
        """
        schemas = schemas or SchemaCache(None)
        out = _output_schema(spec.output_model, schemas) if output_schema else None
        return cls(
            fn=spec.handler,
            name=spec.name,
            title=spec.title,
            description=spec.description,
            parameters=compact_schema(schemas.schema(spec.input_model, "validation")),
            fn_metadata=FuncMetadata(arg_model=ArgModelBase, output_schema=out),
            is_async=True,
            context_kwarg=None,
            annotations=spec.annotations,
            input_model=spec.input_model,
            output_model=spec.output_model,
            profile=spec.profile,
            uses_llm=spec.uses_llm,
            server_context=ctx,
        )

    async def run(
        self,
        arguments: dict[str, Any],
        context: Context[Any, Any],
        convert_result: bool = False,
    ) -> Any:
        """Validate, call the handler, validate the result; never raises for a bad call.

        With read replicas, the call runs in the caller's read-your-writes session
        (`store_session_key`): reads that follow the caller's own write go to the
        primary until a replica has it. A tool that uses an LLM gets the model the
        calling client lends (`client_model`) when polyg has none of its own.
        """
        try:
            ctx = await open_context(self.server_context)
        except Exception as exc:
            return _error(tool_error_text(self.name, exc))
        lent = client_model(ctx, context, self.name, arguments) if self.uses_llm else None
        call_ctx = (
            ctx.with_client_model(lent, reaches_client=lent.reaches_client)
            if lent is not None
            else None
        )
        try:
            if not ctx.store.settings.replicas:
                return await self.invoke(arguments, call_ctx)
            with ctx.store.session(_session_key(context)):
                return await self.invoke(arguments, call_ctx)
        except InputNeeded as needed:
            # A 2026-07-28 client lends its model: the call answers with the request and
            # runs again when the client calls with the reply.
            return needed.result

    async def invoke(
        self, arguments: dict[str, Any], ctx: ServerContext | None = None
    ) -> CallToolResult:
        """Run the tool on raw arguments and answer with a `CallToolResult`.

        `ctx`: the context of this call (default: the tool's).

        Raises:
            InputNeeded: the call waits for a reply from the client's model.
        """
        try:
            # After _pre_parse: a list sent as a JSON string ('["a\\u0000"]') is checked
            # decoded, as the model will see it.
            parsed = _pre_parse(self.input_model, arguments)
            reject_control_chars(parsed, self.name)
            inp = self.input_model.model_validate(parsed)
        except ValidationError as exc:
            return _error(tool_error_text(self.name, exc, self.input_model))
        try:
            out = await self.fn(ctx or await open_context(self.server_context), inp)
            validated = (
                out
                if isinstance(out, self.output_model)
                else self.output_model.model_validate(out, from_attributes=True)
            )
            data = validated.model_dump(mode="json", by_alias=True)
        except (InputNeeded, MCPError):
            raise
        except ValidationError as exc:
            # The handler's result does not match its own output model: a server bug.
            return _error(tool_error_text(self.name, RuntimeError(str(exc))))
        except Exception as exc:
            return _error(tool_error_text(self.name, exc))
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        return CallToolResult(
            content=[TextContent(type="text", text=text)], structured_content=data
        )


def _session_key(context: Context[Any, Any]) -> str | None:
    try:
        request = context.request_context.request
    except ValueError:  # no request: a call made outside of a client session
        return None
    headers: Mapping[str, str] | None = getattr(request, "headers", None)
    client = getattr(request, "client", None)
    host = getattr(client, "host", None)
    return store_session_key(headers, host if isinstance(host, str) else None)


def _error(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


class PolygServer(MCPServer[Any]):
    """An MCPServer that also takes `ToolSpec`s, filtered by the selected tool names.

    Args:
        ctx: the server context every tool handler receives (or the one being opened:
            calls wait for it).
        selected: the tools to register (see `select_tools`).
        schemas: where registered tools' JSON schemas come from (default: generated).
        output_schemas: advertise each tool's `outputSchema`.
        **kwargs: passed to `MCPServer`.
    """

    def __init__(
        self,
        ctx: ServerContext | ContextOpening,
        selected: ToolSelection,
        schemas: SchemaCache | None = None,
        *,
        output_schemas: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.ctx = ctx
        self.selected = selected
        self.schemas = schemas or SchemaCache(None)
        self.output_schemas = output_schemas

    async def run_limited_stdio(
        self, limits: StdioLimits | None = None, stdout: BinaryIO | None = None
    ) -> None:
        """Serve over stdio like `run_stdio_async`, with message size and shape limits.

        `stdout`: the protocol's stream set aside by `polyg_server.stdio.reserve_stdout`
        (default: the process's stdout).
        """
        async with limited_stdio_server(limits, stdout) as (read_stream, write_stream):
            await self._lowlevel_server.run(
                read_stream, write_stream, self._lowlevel_server.create_initialization_options()
            )

    def polyg_tools(self) -> list[PolygTool]:
        """The registered tools that were built from a `ToolSpec`."""
        return [t for t in self._tool_manager.list_tools() if isinstance(t, PolygTool)]

    def add_polyg_tool(self, tool: PolygTool) -> None:
        """Add a built tool.

        Raises:
            ValueError: a tool of that name is already registered.
        """
        existing = self._tool_manager.list_tools()
        if any(t.name == tool.name for t in existing):
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        # ToolManager only builds tools from functions; a new manager takes prebuilt ones.
        self._tool_manager = ToolManager(
            warn_on_duplicate_tools=self.settings.warn_on_duplicate_tools, tools=[*existing, tool]
        )


def register_tool(
    server: PolygServer,
    spec: ToolSpec[Any, Any],
    ctx: ServerContext | ContextOpening | None = None,
) -> bool:
    """Register a tool if `POLYG_TOOLS` selected it, or its profile is selected.

    Args:
        server: the server from `create_server`.
        spec: the tool.
        ctx: the context the handler receives (default: the server's).

    Returns:
        True when registered, False when the tool is not selected.

    Raises:
        ValueError: a tool of that name is already registered.
    """
    if not server.selected.includes(spec):
        logger.debug("tool %s not registered: not selected", spec.name)
        return False
    tool = PolygTool.from_spec(
        spec, ctx or server.ctx, server.schemas, output_schema=server.output_schemas
    )
    server.add_polyg_tool(tool)
    return True


async def list_tool_specs(server: MCPServer[Any]) -> list[dict[str, Any]]:
    """The registered tools as plain dicts, for generating documentation.

    Each dict has `name`, `title`, `description`, `inputSchema`, `outputSchema`,
    `annotations` (camelCase MCP hints) and `profile` (None for non-polyg tools).
    """
    profiles: dict[str, str] = {}
    if isinstance(server, PolygServer):
        profiles = {t.name: t.profile for t in server.polyg_tools()}
    out: list[dict[str, Any]] = []
    for tool in await server.list_tools():
        annotations = (
            tool.annotations.model_dump(by_alias=True, exclude_none=True, mode="json")
            if tool.annotations
            else {}
        )
        out.append(
            {
                "name": tool.name,
                "title": tool.title,
                "description": tool.description,
                "inputSchema": tool.input_schema,
                "outputSchema": tool.output_schema,
                "annotations": annotations,
                "profile": profiles.get(tool.name),
            }
        )
    return out
