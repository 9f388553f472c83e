"""Tool registration: a pydantic input model, a structured output model, annotations, a profile.

A tool is declared once as a `ToolSpec` and registered with `register_tool`:

    GET_STATISTICS = ToolSpec(
        name="get_statistics",
        description="Node and edge counts per graph and cross-link type.",
        input_model=GraphArgs,
        output_model=GraphStatistics,
        handler=get_statistics,            # async (ctx, inp) -> GraphStatistics
        annotations=READ_ONLY,
        profile="core",
    )

The advertised `inputSchema` is exactly the input model's JSON schema and the
`outputSchema` the output model's; every call is validated against the input
model, the result against the output model, and every failure becomes a tool
error (`isError: true`) whose text says what to fix.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO, Final, Generic, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool, ToolManager
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from polyg_core.errors import InvalidInput
from polyg_core.storage.namespace import validate_namespace
from polyg_shared.types import GRAPH_NAME_PATTERN, reject_bool_number, reject_control_chars
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from polyg_server.context import ContextOpening, ServerContext, open_context, store_session_key
from polyg_server.errors import tool_error_text
from polyg_server.schema_cache import SchemaCache
from polyg_server.stdio import StdioLimits, limited_stdio_server

if TYPE_CHECKING:
    from mcp.server.mcpserver.context import Context

logger = logging.getLogger(__name__)

PROFILES: Final = ("memory", "magma", "engine")
"""Profiles `POLYG_TOOLS` selects from; tools of profile `core` are always registered."""
CORE: Final = "core"

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


class ToolInput(BaseModel):
    """Base of every tool input: unknown arguments are errors, `graph` picks the namespace."""

    model_config = ConfigDict(extra="forbid")

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        return reject_bool_number(cls, value, info)

    graph: str | None = Field(
        default=None,
        description=(
            "Graph (namespace) to work on; omit for the default graph. "
            "1-64 characters from letters, digits, '_', '.', '-'."
        ),
        json_schema_extra={"pattern": GRAPH_NAME_PATTERN},
    )

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
        profile: `memory`, `magma`, `engine`, or `core` (always registered).
        title: an optional human-readable title.
    """

    name: str
    description: str
    input_model: type[InT]
    output_model: type[OutT]
    handler: Callable[[ServerContext, InT], Awaitable[OutT]]
    annotations: ToolAnnotations
    profile: str = CORE
    title: str | None = None

    def __post_init__(self) -> None:
        if self.profile != CORE and self.profile not in PROFILES:
            raise ValueError(
                f"tool {self.name!r}: unknown profile {self.profile!r}; "
                f"use one of {', '.join((*PROFILES, CORE))}"
            )


def parse_profiles(value: str | Iterable[str] | None) -> frozenset[str]:
    """The profiles a `POLYG_TOOLS` value selects (always including `core`).

    Args:
        value: `all` (or empty/None), or a comma-separated list of profiles.

    Raises:
        InvalidInput: a name is not a known profile.
    """
    if value is None:
        names: list[str] = ["all"]
    elif isinstance(value, str):
        names = [p.strip().lower() for p in value.split(",") if p.strip()] or ["all"]
    else:
        names = [p.strip().lower() for p in value]
    unknown = sorted(set(names) - {*PROFILES, "all", CORE})
    if unknown:
        raise InvalidInput(
            f"POLYG_TOOLS has unknown profile(s) {', '.join(unknown)}: use 'all' or a "
            f"comma-separated list of {', '.join(PROFILES)} (for example 'memory,engine')"
        )
    if "all" in names:
        return frozenset({*PROFILES, CORE})
    return frozenset({*names, CORE})


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
    profile: str = CORE
    server_context: Any = Field(default=None, exclude=True)

    @classmethod
    def from_spec(
        cls,
        spec: ToolSpec[Any, Any],
        ctx: ServerContext | ContextOpening,
        schemas: SchemaCache | None = None,
    ) -> PolygTool:
        """Build the tool for a spec, bound to a server context (or one being opened).

        `schemas`: where the tool's JSON schemas come from (default: generated now).
        """
        schemas = schemas or SchemaCache(None)
        output_schema = _output_schema(spec.output_model, schemas)
        return cls(
            fn=spec.handler,
            name=spec.name,
            title=spec.title,
            description=spec.description,
            parameters=schemas.schema(spec.input_model, "validation"),
            fn_metadata=FuncMetadata(arg_model=ArgModelBase, output_schema=output_schema),
            is_async=True,
            context_kwarg=None,
            annotations=spec.annotations,
            input_model=spec.input_model,
            output_model=spec.output_model,
            profile=spec.profile,
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
        primary until a replica has it.
        """
        try:
            ctx = await open_context(self.server_context)
        except Exception as exc:
            return _error(tool_error_text(self.name, exc))
        if not ctx.store.settings.replicas:
            return await self.invoke(arguments)
        with ctx.store.session(_session_key(context)):
            return await self.invoke(arguments)

    async def invoke(self, arguments: dict[str, Any]) -> CallToolResult:
        """Run the tool on raw arguments and answer with a `CallToolResult`."""
        try:
            # After _pre_parse: a list sent as a JSON string ('["a\\u0000"]') is checked
            # decoded, as the model will see it.
            parsed = _pre_parse(self.input_model, arguments)
            reject_control_chars(parsed, self.name)
            inp = self.input_model.model_validate(parsed)
        except ValidationError as exc:
            return _error(tool_error_text(self.name, exc, self.input_model))
        try:
            out = await self.fn(await open_context(self.server_context), inp)
            validated = (
                out
                if isinstance(out, self.output_model)
                else self.output_model.model_validate(out, from_attributes=True)
            )
            data = validated.model_dump(mode="json", by_alias=True)
        except MCPError:
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
    """An MCPServer that also takes `ToolSpec`s, filtered by the enabled profiles.

    Args:
        ctx: the server context every tool handler receives (or the one being opened:
            calls wait for it).
        profiles: the enabled profiles (see `parse_profiles`).
        schemas: where registered tools' JSON schemas come from (default: generated).
        **kwargs: passed to `MCPServer`.
    """

    def __init__(
        self,
        ctx: ServerContext | ContextOpening,
        profiles: frozenset[str],
        schemas: SchemaCache | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.ctx = ctx
        self.profiles = profiles
        self.schemas = schemas or SchemaCache(None)

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
    """Register a tool if its profile is enabled on the server.

    Args:
        server: the server from `create_server`.
        spec: the tool.
        ctx: the context the handler receives (default: the server's).

    Returns:
        True when registered, False when the tool's profile is not enabled.

    Raises:
        ValueError: a tool of that name is already registered.
    """
    if spec.profile != CORE and spec.profile not in server.profiles:
        logger.debug("tool %s not registered: profile %s is off", spec.name, spec.profile)
        return False
    server.add_polyg_tool(PolygTool.from_spec(spec, ctx or server.ctx, server.schemas))
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
