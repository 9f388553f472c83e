"""Scratch-graph tools (profile "scratch"): named scratch graphs, fuzzy names, analysis.

Every tool takes an optional `graph`; omitted, the scratch graph `default` is
used (not the memory graph). Analysis tools also work on memory graphs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from polyg_shared.engine import (
    AddEdgeInput,
    AddEdgeOutput,
    AddEdgesInput,
    AddEdgesOutput,
    AddNodeInput,
    AddNodeOutput,
    AddNodesInput,
    AddNodesOutput,
    AllPathsInput,
    AllPathsOutput,
    ComponentsInput,
    ComponentsOutput,
    CyclesOutput,
    DegreeCentralityOutput,
    ExportGraphInput,
    ExportGraphOutput,
    FindCyclesInput,
    FindEdgesInput,
    FindEdgesOutput,
    FindNodeInput,
    FindNodeOutput,
    GetNeighborsInput,
    GetNeighborsOutput,
    GraphInfoInput,
    GraphInfoOutput,
    ImportGraphInput,
    ImportGraphOutput,
    ListNodesInput,
    ListNodesOutput,
    RankingOutput,
    RemoveEdgeInput,
    RemoveEdgeOutput,
    RemoveNodeInput,
    RemoveNodeOutput,
    ShortestPathInput,
    ShortestPathOutput,
    SubgraphInput,
    SubgraphOutput,
    TopNInput,
    TransitiveReductionInput,
    TransitiveReductionOutput,
)

from polyg_server.context import ServerContext
from polyg_server.paging import Page
from polyg_server.registry import DESTRUCTIVE, READ_ONLY, WRITE_IDEMPOTENT, ToolSpec

if TYPE_CHECKING:
    from polyg_core.scratch import GraphEngine

PROFILE = "scratch"
_KEY = "graph_engine"


def engine_of(ctx: ServerContext) -> GraphEngine:
    """The context's graph engine (built on first use, then reused)."""
    from polyg_core.scratch import GraphEngine

    engine = ctx.services.get(_KEY)
    if not isinstance(engine, GraphEngine):
        engine = GraphEngine(ctx.store, ctx.embedder, ttl_s=ctx.settings.scratch_ttl_s)
        ctx.services[_KEY] = engine
    return engine


async def add_node(ctx: ServerContext, inp: AddNodeInput) -> AddNodeOutput:
    return await engine_of(ctx).nodes.add_node(inp.label, inp.type, inp.properties, graph=inp.graph)


async def add_nodes(ctx: ServerContext, inp: AddNodesInput) -> AddNodesOutput:
    return await engine_of(ctx).nodes.add_nodes(inp.nodes, graph=inp.graph)


async def find_node(ctx: ServerContext, inp: FindNodeInput) -> FindNodeOutput:
    page = Page.open(inp, limit=inp.limit)
    found = await engine_of(ctx).nodes.find_node(inp.query, page.fetch, graph=inp.graph)
    return page.fill_field(found, "matches")


async def remove_node(ctx: ServerContext, inp: RemoveNodeInput) -> RemoveNodeOutput:
    return await engine_of(ctx).nodes.remove_node(inp.label, graph=inp.graph)


async def list_nodes(ctx: ServerContext, inp: ListNodesInput) -> ListNodesOutput:
    page = Page.open(inp, limit=inp.limit)
    found = await engine_of(ctx).nodes.list_nodes(inp.type, page.fetch, graph=inp.graph)
    return page.fill_field(found, "nodes")


async def add_edge(ctx: ServerContext, inp: AddEdgeInput) -> AddEdgeOutput:
    return await engine_of(ctx).nodes.add_edge(
        inp.source, inp.target, inp.relation, inp.properties, graph=inp.graph
    )


async def add_edges(ctx: ServerContext, inp: AddEdgesInput) -> AddEdgesOutput:
    return await engine_of(ctx).nodes.add_edges(inp.edges, graph=inp.graph)


async def find_edges(ctx: ServerContext, inp: FindEdgesInput) -> FindEdgesOutput:
    page = Page.open(inp, limit=inp.limit)
    found = await engine_of(ctx).nodes.find_edges(
        inp.source, inp.target, inp.relation, page.fetch, graph=inp.graph
    )
    return page.fill_field(found, "edges")


async def remove_edge(ctx: ServerContext, inp: RemoveEdgeInput) -> RemoveEdgeOutput:
    return await engine_of(ctx).nodes.remove_edge(
        inp.source, inp.target, inp.relation, graph=inp.graph
    )


async def get_neighbors(ctx: ServerContext, inp: GetNeighborsInput) -> GetNeighborsOutput:
    page = Page.open(inp, limit=inp.limit)
    found = await engine_of(ctx).nodes.get_neighbors(
        inp.node, inp.direction, inp.relation, graph=inp.graph
    )
    return page.fill_field(found, "neighbors")


async def describe_graph(ctx: ServerContext, inp: GraphInfoInput) -> GraphInfoOutput:
    return await engine_of(ctx).analysis.graph_info(graph=inp.graph)


async def shortest_path(ctx: ServerContext, inp: ShortestPathInput) -> ShortestPathOutput:
    return await engine_of(ctx).analysis.shortest_path(inp.source, inp.target, graph=inp.graph)


async def all_paths(ctx: ServerContext, inp: AllPathsInput) -> AllPathsOutput:
    page = Page.open(inp, limit=inp.limit)
    found = await engine_of(ctx).analysis.all_paths(
        inp.source, inp.target, inp.max_length, page.fetch, graph=inp.graph
    )
    return page.fill_field(found, "paths")


async def pagerank(ctx: ServerContext, inp: TopNInput) -> RankingOutput:
    page = Page.open(inp, limit=inp.top_n, limit_field="top_n")
    found = await engine_of(ctx).analysis.pagerank(page.fetch, graph=inp.graph)
    return page.fill_field(found, "rankings")


async def betweenness(ctx: ServerContext, inp: TopNInput) -> RankingOutput:
    page = Page.open(inp, limit=inp.top_n, limit_field="top_n")
    found = await engine_of(ctx).analysis.betweenness(page.fetch, graph=inp.graph)
    return page.fill_field(found, "rankings")


async def degree_centrality(ctx: ServerContext, inp: TopNInput) -> DegreeCentralityOutput:
    page = Page.open(inp, limit=inp.top_n, limit_field="top_n")
    found = await engine_of(ctx).analysis.degree_centrality(page.fetch, graph=inp.graph)
    return page.fill_field(found, "rankings")


async def connected_components(ctx: ServerContext, inp: ComponentsInput) -> ComponentsOutput:
    page = Page.open(inp, limit=inp.limit)
    found = await engine_of(ctx).analysis.connected_components(
        inp.strong, page.fetch, graph=inp.graph
    )
    return page.fill_field(found, "components")


async def find_cycles(ctx: ServerContext, inp: FindCyclesInput) -> CyclesOutput:
    page = Page.open(inp, limit=inp.limit)
    found = await engine_of(ctx).analysis.find_cycles(page.fetch, inp.max_length, graph=inp.graph)
    return page.fill_field(found, "cycles")


async def transitive_reduction(
    ctx: ServerContext, inp: TransitiveReductionInput
) -> TransitiveReductionOutput:
    return await engine_of(ctx).analysis.transitive_reduction(inp.in_place, graph=inp.graph)


async def subgraph(ctx: ServerContext, inp: SubgraphInput) -> SubgraphOutput:
    return await engine_of(ctx).analysis.subgraph(
        inp.nodes, inp.hops, inp.include_edges, graph=inp.graph
    )


async def import_graph_text(ctx: ServerContext, inp: ImportGraphInput) -> ImportGraphOutput:
    return await engine_of(ctx).io.import_graph(inp.format, inp.content, graph=inp.graph)


async def export_graph_text(ctx: ServerContext, inp: ExportGraphInput) -> ExportGraphOutput:
    return await engine_of(ctx).io.export_graph(inp.format, graph=inp.graph)


_NAMES = (
    " Node names are matched exactly, then ignoring case/spacing/punctuation, then by "
    "meaning; an ambiguous name answers with candidates."
)


def _spec(
    name: str, description: str, inp: type[Any], out: type[Any], handler: Any, annotations: Any
) -> ToolSpec[Any, Any]:
    return ToolSpec(
        name=name,
        description=description,
        input_model=inp,
        output_model=out,
        handler=handler,
        annotations=annotations,
        profile=PROFILE,
    )


TOOLS: tuple[ToolSpec[Any, Any], ...] = (
    _spec(
        "add_node",
        "Add a node to a scratch graph (created on first use). Idempotent: a label matching "
        "an existing node (same name, other spelling, or same meaning) returns it with "
        "created: false.",
        AddNodeInput,
        AddNodeOutput,
        add_node,
        WRITE_IDEMPOTENT,
    ),
    _spec(
        "add_nodes",
        "Add many nodes in one call; reports how many were new and how many existed.",
        AddNodesInput,
        AddNodesOutput,
        add_nodes,
        WRITE_IDEMPOTENT,
    ),
    _spec(
        "find_node",
        "Find nodes by name or meaning, best first with similarity (1.0 = same name); "
        "empty when nothing is close.",
        FindNodeInput,
        FindNodeOutput,
        find_node,
        READ_ONLY,
    ),
    _spec(
        "remove_node",
        "Remove a node and its edges. Needs the node's name (case and spacing may differ); "
        "an approximate name is refused with the candidates.",
        RemoveNodeInput,
        RemoveNodeOutput,
        remove_node,
        DESTRUCTIVE,
    ),
    _spec(
        "list_nodes",
        "List nodes in name order, optionally of one type.",
        ListNodesInput,
        ListNodesOutput,
        list_nodes,
        READ_ONLY,
    ),
    _spec(
        "add_edge",
        "Add a directed edge source -relation-> target between existing nodes; the answer "
        "shows which nodes the names matched." + _NAMES,
        AddEdgeInput,
        AddEdgeOutput,
        add_edge,
        WRITE_IDEMPOTENT,
    ),
    _spec(
        "add_edges",
        "Add many edges in one call; edges whose endpoints cannot be matched are listed in "
        "failed (with candidates) and the others are added." + _NAMES,
        AddEdgesInput,
        AddEdgesOutput,
        add_edges,
        WRITE_IDEMPOTENT,
    ),
    _spec(
        "find_edges",
        "Find edges by source, target and/or relation." + _NAMES,
        FindEdgesInput,
        FindEdgesOutput,
        find_edges,
        READ_ONLY,
    ),
    _spec(
        "remove_edge",
        "Remove the edge(s) source -> target (one relation, or all). Endpoints are named "
        "exactly (case and spacing may differ).",
        RemoveEdgeInput,
        RemoveEdgeOutput,
        remove_edge,
        DESTRUCTIVE,
    ),
    _spec(
        "get_neighbors",
        "Nodes joined to a node, by direction (in/out/both) and relation." + _NAMES,
        GetNeighborsInput,
        GetNeighborsOutput,
        get_neighbors,
        READ_ONLY,
    ),
    _spec(
        "describe_graph",
        "Structure of a graph (scratch or memory): node/edge counts, density, connected, "
        "DAG, node types, relation types.",
        GraphInfoInput,
        GraphInfoOutput,
        describe_graph,
        READ_ONLY,
    ),
    _spec(
        "shortest_path",
        "Fewest-hop directed path from source to target (names of the nodes on it)." + _NAMES,
        ShortestPathInput,
        ShortestPathOutput,
        shortest_path,
        READ_ONLY,
    ),
    _spec(
        "all_paths",
        "Simple directed paths from source to target, shortest first, up to max_length edges."
        + _NAMES,
        AllPathsInput,
        AllPathsOutput,
        all_paths,
        READ_ONLY,
    ),
    _spec(
        "pagerank",
        "Most central nodes by PageRank (works on scratch and memory graphs).",
        TopNInput,
        RankingOutput,
        pagerank,
        READ_ONLY,
    ),
    _spec(
        "betweenness",
        "Nodes that bridge others most (betweenness centrality).",
        TopNInput,
        RankingOutput,
        betweenness,
        READ_ONLY,
    ),
    _spec(
        "degree_centrality",
        "Nodes with the most edges (in, out, total).",
        TopNInput,
        DegreeCentralityOutput,
        degree_centrality,
        READ_ONLY,
    ),
    _spec(
        "connected_components",
        "Groups of nodes connected ignoring direction (or strongly connected), largest first.",
        ComponentsInput,
        ComponentsOutput,
        connected_components,
        READ_ONLY,
    ),
    _spec(
        "find_cycles",
        "Directed cycles (e.g. circular dependencies).",
        FindCyclesInput,
        CyclesOutput,
        find_cycles,
        READ_ONLY,
    ),
    _spec(
        "transitive_reduction",
        "Edges implied by longer paths; with in_place: true they are deleted from the scratch "
        "graph (destructive: the removed edges are not kept anywhere).",
        TransitiveReductionInput,
        TransitiveReductionOutput,
        transitive_reduction,
        # Annotations describe the worst case a call may do: in_place deletes edges.
        DESTRUCTIVE,
    ),
    _spec(
        "subgraph",
        "The named nodes, their neighbours up to hops away, and the edges among them." + _NAMES,
        SubgraphInput,
        SubgraphOutput,
        subgraph,
        READ_ONLY,
    ),
    _spec(
        "import_graph_text",
        "Merge a graph written as DOT, CSV/TSV, GraphML, JSON, Mermaid or Cypher into a "
        "scratch graph. Malformed input changes nothing; skipped lines are listed.",
        ImportGraphInput,
        ImportGraphOutput,
        import_graph_text,
        WRITE_IDEMPOTENT,
    ),
    _spec(
        "export_graph_text",
        "A graph (scratch or memory) written as DOT, CSV/TSV, GraphML, JSON, Mermaid or Cypher.",
        ExportGraphInput,
        ExportGraphOutput,
        export_graph_text,
        READ_ONLY,
    ),
)
