"""MCP resources: the list of graphs and the statistics of one graph, as JSON."""

from __future__ import annotations

import json

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError
from polyg_core.errors import PolygError
from polyg_core.graphs.stats import graph_statistics

from polyg_server.context import ContextOpening, ServerContext, open_context
from polyg_server.errors import polyg_error_text

GRAPHS_URI = "polyg://graphs"
STATS_URI = "polyg://stats/{graph}"


def register_resources(server: MCPServer, opening: ServerContext | ContextOpening) -> None:
    """Add `polyg://graphs` and the `polyg://stats/{graph}` template to a server."""

    @server.resource(
        GRAPHS_URI,
        name="graphs",
        description="Names of every graph (namespace) on the server and the default one.",
        mime_type="application/json",
    )
    async def graphs() -> str:
        try:
            ctx = await open_context(opening)
            names = await ctx.store.list_graphs()
        except PolygError as exc:
            raise ResourceError(polyg_error_text(exc)) from exc
        return json.dumps({"graphs": names, "default_graph": ctx.default_namespace})

    @server.resource(
        STATS_URI,
        name="graph-statistics",
        description="Node/edge counts per memory graph and cross-link type of one graph.",
        mime_type="application/json",
    )
    async def stats(graph: str) -> str:
        try:
            ctx = await open_context(opening)
            result = await graph_statistics(ctx.store, ctx.namespace(graph))
        except PolygError as exc:
            raise ResourceError(polyg_error_text(exc)) from exc
        return result.model_dump_json()
