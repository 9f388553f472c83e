"""Admin tools: statistics, listing, inspecting and deleting graphs (namespaces)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Final

import anyio
from polyg_core.errors import InvalidInput, PolygError
from polyg_core.graphs.stats import graph_statistics
from polyg_core.storage.schema import META
from polyg_shared.engine import GraphInfoOutput
from polyg_shared.jobs import JobStats
from polyg_shared.pages import PageInput, PageOutput
from polyg_shared.stats import GraphCounts, GraphStatistics
from polyg_shared.timeutil import from_epoch_ms, iso
from pydantic import BaseModel, ConfigDict, Field

from polyg_server.context import ServerContext
from polyg_server.paging import Page
from polyg_server.registry import DESTRUCTIVE, READ_ONLY, ToolInput, ToolSpec
from polyg_server.tools.jobs import job_queue

if TYPE_CHECKING:
    from polyg_core.storage.store import FalkorStore

logger = logging.getLogger(__name__)

_PARALLEL_GRAPH_QUERIES = 8
_JOB_STATS_TIMEOUT_S = 5.0


class GraphArgs(ToolInput):
    """Arguments of a tool that only needs a graph."""


class ListGraphsArgs(PageInput):
    """Arguments of list_graphs: the page."""

    model_config = ConfigDict(extra="forbid")

    limit: int = Field(default=50, ge=1, le=1000, description="Most graphs listed.")


class DeleteGraphArgs(ToolInput):
    """Arguments of delete_graph."""

    confirm: bool = Field(
        default=False,
        description="Must be true to delete the default graph (the main memory).",
    )


class Statistics(GraphStatistics):
    """get_statistics: the graph's counts and its background jobs by status."""

    jobs: JobStats | None = Field(
        default=None,
        description=(
            "Background jobs of this graph (queued remember calls) kept by the queue, by "
            "status: queued, running, done, failed, cancelled; finished jobs are kept for "
            "a week. list_jobs with status failed shows the errors. null when the job "
            "queue could not be read."
        ),
    )


class GraphSummary(BaseModel):
    """One graph (namespace) on the server."""

    name: str
    kind: str = Field(description="What the graph holds: 'memory' or 'scratch'.")
    is_default: bool
    node_count: int
    edge_count: int
    created_at: str | None = Field(default=None, description="ISO 8601 UTC.")
    last_used_at: str | None = Field(default=None, description="ISO 8601 UTC.")


class GraphList(PageOutput):
    """The graphs on the server, by name."""

    graphs: list[GraphSummary]
    default_graph: str


class DeleteGraphResult(BaseModel):
    """What delete_graph did."""

    graph: str
    deleted: bool
    message: str


STRUCTURE_MAX_NODES: Final = 20_000


class GraphInfo(BaseModel):
    """Counts and metadata of one graph."""

    name: str
    exists: bool
    kind: str
    is_default: bool
    node_count: int
    edge_count: int
    graphs: dict[str, GraphCounts] = Field(
        description="Counts of the memory graphs: semantic, temporal, causal, entity."
    )
    cross_links: dict[str, int]
    scratch_nodes: int
    scratch_edges: int
    embedding_model: str | None = None
    dimension: int | None = None
    created_at: str | None = None
    last_used_at: str | None = None
    structure: GraphInfoOutput | None = Field(
        default=None,
        description=(
            "Directed, density, connected, DAG, node and relation types; computed for graphs of "
            f"up to {STRUCTURE_MAX_NODES:,} nodes (larger: call describe_graph)."
        ),
    )


def _iso_ms(value: Any) -> str | None:
    return iso(from_epoch_ms(int(value))) if isinstance(value, int | float) else None


async def _summary(store: FalkorStore, name: str, default: str) -> GraphSummary:
    meta = await store.metadata(name)
    nodes = await store.query(name, f"MATCH (n) WHERE NOT n:{META} RETURN count(n)", read_only=True)
    edges = await store.query(name, "MATCH ()-[r]->() RETURN count(r)", read_only=True)
    return GraphSummary(
        name=name,
        kind=str(meta.get("kind") or "memory"),
        is_default=name == default,
        node_count=int(nodes.scalar(0)),
        edge_count=int(edges.scalar(0)),
        created_at=_iso_ms(meta.get("created_at")),
        last_used_at=_iso_ms(meta.get("last_used_at")),
    )


async def _job_stats(ctx: ServerContext, ns: str) -> JobStats | None:
    from redis.exceptions import RedisError

    with anyio.move_on_after(_JOB_STATS_TIMEOUT_S):
        try:
            return await (await job_queue(ctx)).stats(ns)
        except (PolygError, RedisError, OSError) as exc:
            logger.warning("job counts unavailable for get_statistics: %s", exc)
            return None
    logger.warning("job counts unavailable for get_statistics: the queue did not answer")
    return None


async def get_statistics(ctx: ServerContext, inp: GraphArgs) -> Statistics:
    """Node/edge counts per graph and cross-link type of one namespace, and its jobs."""
    ns = ctx.namespace(inp.graph)
    stats = await graph_statistics(ctx.store, ns)
    return Statistics(**stats.model_dump(), jobs=await _job_stats(ctx, ns))


async def list_graphs(ctx: ServerContext, inp: ListGraphsArgs) -> GraphList:
    """The graphs on the server with their kind, counts and timestamps, by name."""
    page = Page.open(inp, limit=inp.limit)
    # Counting a graph's nodes costs a query: only the graphs this page may show.
    names = page.window(sorted(await ctx.store.list_graphs()))
    summaries: dict[str, GraphSummary] = {}
    limiter = anyio.CapacityLimiter(_PARALLEL_GRAPH_QUERIES)

    async def one(name: str) -> None:
        async with limiter:
            summaries[name] = await _summary(ctx.store, name, ctx.default_namespace)

    async with anyio.create_task_group() as tg:
        for name in names:
            tg.start_soon(one, name)
    found = [summaries[n] for n in names if n in summaries]
    return page.fill(
        found, lambda part: GraphList(graphs=part, default_graph=ctx.default_namespace)
    )


async def delete_graph(ctx: ServerContext, inp: DeleteGraphArgs) -> DeleteGraphResult:
    """Delete a graph: with `confirm: true` (or POLYG_ALLOW_DESTRUCTIVE), the default graph only with `confirm: true`."""
    name = ctx.namespace(inp.graph)
    if not (inp.confirm or ctx.settings.allow_destructive):
        raise InvalidInput(
            f"deleting graph {name!r} is irreversible: call again with confirm: true "
            "(or start the server with POLYG_ALLOW_DESTRUCTIVE=true)"
        )
    if name == ctx.default_namespace and not inp.confirm:
        raise InvalidInput(
            f"refusing to delete the default graph {name!r}: it holds the main memory. "
            "To delete it anyway call delete_graph again with confirm: true; to delete "
            "another graph pass its name as graph (list_graphs shows them)."
        )
    deleted = await ctx.store.delete_graph(name)
    message = (
        f"deleted graph {name!r} and everything in it"
        if deleted
        else f"there is no graph named {name!r}; list_graphs shows the existing graphs"
    )
    return DeleteGraphResult(graph=name, deleted=deleted, message=message)


async def get_graph_info(ctx: ServerContext, inp: GraphArgs) -> GraphInfo:
    """Counts per memory graph, cross-links and metadata of one graph."""
    name = ctx.namespace(inp.graph)
    exists = name in await ctx.store.list_graphs()
    stats = await graph_statistics(ctx.store, name)
    meta = await ctx.store.metadata(name) if exists else {}
    dim = meta.get("dimension")
    return GraphInfo(
        name=name,
        exists=exists,
        kind=str(meta.get("kind") or "memory"),
        is_default=name == ctx.default_namespace,
        node_count=stats.total_nodes,
        edge_count=stats.total_edges,
        graphs=stats.graphs,
        cross_links=stats.cross_links,
        scratch_nodes=stats.scratch_nodes,
        scratch_edges=stats.scratch_edges,
        embedding_model=str(meta["embedding_model"]) if meta.get("embedding_model") else None,
        dimension=int(dim) if isinstance(dim, int | float) else None,
        created_at=_iso_ms(meta.get("created_at")),
        last_used_at=_iso_ms(meta.get("last_used_at")),
        structure=await _structure(ctx, name)
        if exists and stats.total_nodes <= STRUCTURE_MAX_NODES
        else None,
    )


async def _structure(ctx: ServerContext, name: str) -> GraphInfoOutput:
    from polyg_server.tools.engine import engine_of

    return await engine_of(ctx).analysis.graph_info(graph=name)


TOOLS: tuple[ToolSpec[Any, Any], ...] = (
    ToolSpec(
        name="get_statistics",
        description=(
            "Node and edge counts of one graph (namespace): per memory graph (semantic, "
            "temporal, causal, entity) with counts per label and relationship type, "
            "cross-link counts (X_REPRESENTS, X_INVOLVES, X_AFFECTS, X_REFERS_TO), "
            "scratch-graph counts, memory use, and the graph's background jobs by status "
            "(queued, running, done, failed, cancelled)."
        ),
        input_model=GraphArgs,
        output_model=Statistics,
        handler=get_statistics,
        annotations=READ_ONLY,
        profile="admin",
    ),
    ToolSpec(
        name="list_graphs",
        description=(
            "List every graph (namespace) on the server with its kind (memory or scratch), "
            "node and edge counts, creation and last-use times. Use it to rediscover graph "
            "names."
        ),
        input_model=ListGraphsArgs,
        output_model=GraphList,
        handler=list_graphs,
        annotations=READ_ONLY,
        profile="admin",
    ),
    ToolSpec(
        name="get_graph_info",
        description=(
            "Counts and metadata of one graph: nodes and edges per memory graph, cross-links, "
            "scratch nodes, embedding model, creation and last-use times."
        ),
        input_model=GraphArgs,
        output_model=GraphInfo,
        handler=get_graph_info,
        annotations=READ_ONLY,
        profile="admin",
    ),
    ToolSpec(
        name="delete_graph",
        description=(
            "Delete a whole graph (namespace) and everything in it. Irreversible: needs "
            "confirm: true (or a server started with POLYG_ALLOW_DESTRUCTIVE); the default "
            "graph always needs confirm: true."
        ),
        input_model=DeleteGraphArgs,
        output_model=DeleteGraphResult,
        handler=delete_graph,
        annotations=DESTRUCTIVE,
        profile="admin",
    ),
)
