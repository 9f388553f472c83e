"""Analysis tools on scratch graphs and memory namespaces alike.

The graph is fetched into `GraphData` and the functions of
`polyg_core.algorithms` run on it, except the shortest path of a scratch graph,
which FalkorDB's `shortestPath()` finds without fetching (same length as the
Python BFS; about 0.01 s on 100,000 edges). FalkorDB's procedures were
measured and not used: `algo.SPpaths` is correct but slow on large graphs
(0.8 s on 100,000 edges, unbounded without maxLen); `algo.WCC` split a
connected 10,000-edge graph into two components (wrong); `algo.pageRank`
drops dangling rank (scores do not sum to 1); `algo.betweenness` scales
otherwise than the usual definition.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from polyg_shared.engine import (
    AllPathsOutput,
    ComponentsOutput,
    CyclesOutput,
    DegreeCentralityOutput,
    DegreeOut,
    EdgeOut,
    GraphInfoOutput,
    NodeOut,
    RankedOut,
    RankingOutput,
    ShortestPathOutput,
    SubgraphOutput,
    TransitiveReductionOutput,
)

# The package loads its algorithms (rustworkx, scipy) on first use, not at start-up.
from polyg_core import algorithms
from polyg_core.algorithms.model import GraphData, NodeData, NodeRef
from polyg_core.errors import AmbiguousName, Candidate, NodeNotFound
from polyg_core.resolve import CAUSAL_NAMES, CONCEPT_NAMES, ENTITY_NAMES
from polyg_core.scratch.fetch import DEFAULT_MAX_NODES, fetch_graph
from polyg_core.scratch.nodes import ScratchGraphs
from polyg_core.scratch.registry import GraphKindName
from polyg_core.storage.schema import R_SCRATCH, SCRATCH
from polyg_core.text.normalize import normalize_name

logger = logging.getLogger(__name__)

_LABEL_PREFERENCE = ("E_Entity", "S_Concept", "C_Node", "T_Event", "T_Fact", "S_Memory")


def _names(refs: Sequence[NodeRef]) -> list[str]:
    return [r.name for r in refs]


@dataclass
class _Opened:
    ns: str
    kind: GraphKindName


@dataclass
class GraphAnalyzer:
    """Runs the analysis functions on a named graph.

    Args:
        scratch: the scratch-graph operations (for the store, the graph manager and names).
        max_nodes: largest graph fetched for an analysis.
        use_builtin: use FalkorDB's shortestPath() for scratch-graph shortest paths.
    """

    scratch: ScratchGraphs
    max_nodes: int = DEFAULT_MAX_NODES
    use_builtin: bool = True

    async def _open(self, graph: str | None) -> _Opened:
        ns, kind = await self.scratch.manager.use(graph)
        return _Opened(ns, kind)

    async def _fetch(self, g: _Opened) -> GraphData:
        return await fetch_graph(self.scratch.store, g.ns, g.kind, max_nodes=self.max_nodes)

    async def _node_id(self, g: _Opened, data: GraphData | None, name: str) -> str:
        """The `GraphData` node id a user-given name refers to."""
        if g.kind == "scratch":
            return (await self.scratch.resolve(g.ns, name)).name
        assert data is not None
        return await self._memory_node(g.ns, data, name)

    async def _memory_node(self, ns: str, data: GraphData, name: str) -> str:
        text = name.strip()
        if data.get_node(text) is not None:
            return text
        matches: tuple[Callable[[NodeData], bool], ...] = (
            lambda n: n.name == text,
            lambda n: normalize_name(n.name) == normalize_name(text),
        )
        for match in matches:
            hits = [n for n in data.nodes if match(n)]
            if hits:
                return self._prefer(name, hits).id
        best: tuple[float, str] | None = None
        for spec in (ENTITY_NAMES, CONCEPT_NAMES, CAUSAL_NAMES):
            found = await self.scratch.resolver.find(ns, spec, text)
            known = found is not None and data.get_node(found.uuid) is not None
            if found is not None and known and (best is None or found.similarity > best[0]):
                best = (found.similarity, found.uuid)
        if best is not None:
            return best[1]
        raise NodeNotFound("node", name)

    @staticmethod
    def _prefer(name: str, hits: list[NodeData]) -> NodeData:
        def rank(n: NodeData) -> int:
            label = str(n.properties.get("label", ""))
            return _LABEL_PREFERENCE.index(label) if label in _LABEL_PREFERENCE else 99

        hits.sort(key=rank)
        if len(hits) > 1 and rank(hits[0]) == rank(hits[1]):
            cands = [Candidate(n.id, n.name, str(n.properties.get("label")), 1.0) for n in hits]
            raise AmbiguousName("node", name, cands[:5])
        return hits[0]

    # -- summaries ---------------------------------------------------------------------------

    async def graph_info(self, graph: str | None = None) -> GraphInfoOutput:
        """Counts, density, connectivity, acyclicity, node and relation types."""
        g = await self._open(graph)
        info = algorithms.graph_info(await self._fetch(g))
        return GraphInfoOutput(
            name=g.ns,
            kind=g.kind,
            node_count=info.node_count,
            edge_count=info.edge_count,
            is_directed=info.is_directed,
            density=round(info.density, 6),
            is_connected=info.is_connected,
            is_dag=info.is_dag,
            component_count=info.component_count,
            node_types=info.node_types,
            relation_types=info.relation_types,
        )

    # -- paths -------------------------------------------------------------------------------

    async def shortest_path(
        self, source: str, target: str, *, graph: str | None = None
    ) -> ShortestPathOutput:
        """The fewest-hop directed path from `source` to `target` (names matched fuzzily)."""
        g = await self._open(graph)
        if g.kind == "scratch" and self.use_builtin:
            a = await self.scratch.resolve(g.ns, source)
            b = await self.scratch.resolve(g.ns, target)
            if a.uuid == b.uuid:
                return ShortestPathOutput(
                    path=[a.name], length=0, source_matched=a.name, target_matched=b.name
                )
            res = await self.scratch.store.query(
                g.ns,
                f"MATCH (a:{SCRATCH} {{uuid: $a}}), (b:{SCRATCH} {{uuid: $b}}) "
                f"WITH shortestPath((a)-[:{R_SCRATCH}*]->(b)) AS p WHERE p IS NOT NULL "
                "RETURN [n IN nodes(p) | n.name], [r IN relationships(p) | r.relation]",
                {"a": a.uuid, "b": b.uuid},
                read_only=True,
            )
            if not res.rows:
                return self._no_path(a.name, b.name)
            names, relations = res.rows[0]
            return ShortestPathOutput(
                path=[str(n) for n in names],
                length=len(names) - 1,
                relations=[str(r) for r in relations],
                source_matched=a.name,
                target_matched=b.name,
            )
        data = await self._fetch(g)
        s = await self._node_id(g, data, source)
        t = await self._node_id(g, data, target)
        sname, tname = data.ref(s).name, data.ref(t).name
        found = algorithms.shortest_path(data, s, t)
        if found is None:
            return self._no_path(sname, tname)
        return ShortestPathOutput(
            path=_names(found.path),
            length=found.length,
            relations=found.relations,
            source_matched=sname,
            target_matched=tname,
        )

    @staticmethod
    def _no_path(source: str, target: str) -> ShortestPathOutput:
        return ShortestPathOutput(
            path=None,
            reason=f"no directed path from {source!r} to {target!r}; edges only run "
            "source -> target (try get_neighbors, or the reverse direction)",
            source_matched=source,
            target_matched=target,
        )

    async def all_paths(
        self,
        source: str,
        target: str,
        max_length: int = 6,
        limit: int = 100,
        *,
        graph: str | None = None,
    ) -> AllPathsOutput:
        """Simple directed paths, shortest first, up to `max_length` edges and `limit` paths."""
        g = await self._open(graph)
        data = await self._fetch(g)
        s = await self._node_id(g, data, source)
        t = await self._node_id(g, data, target)
        found = algorithms.all_paths(data, s, t, max_length, limit, time_budget=10.0)
        return AllPathsOutput(
            paths=[_names(p) for p in found.paths],
            count=found.count,
            truncated=found.truncated,
            source_matched=data.ref(s).name,
            target_matched=data.ref(t).name,
        )

    # -- rankings ----------------------------------------------------------------------------

    async def pagerank(self, top_n: int = 10, *, graph: str | None = None) -> RankingOutput:
        """PageRank (damping 0.85, dangling rank spread evenly, as networkx)."""
        data = await self._fetch(await self._open(graph))
        result = algorithms.pagerank(data, top_n, time_budget=30.0)
        return RankingOutput(
            rankings=[
                RankedOut(label=r.node.name, score=round(r.score, 6)) for r in result.rankings
            ],
            total_nodes=result.total_nodes,
            method="python power iteration",
        )

    async def betweenness(self, top_n: int = 10, *, graph: str | None = None) -> RankingOutput:
        """Betweenness centrality, normalised as networkx does for directed graphs."""
        data = await self._fetch(await self._open(graph))
        result = algorithms.betweenness(data, top_n)
        return RankingOutput(
            rankings=[
                RankedOut(label=r.node.name, score=round(r.score, 6)) for r in result.rankings
            ],
            total_nodes=result.total_nodes,
            method="rustworkx",
        )

    async def degree_centrality(
        self, top_n: int = 10, *, graph: str | None = None
    ) -> DegreeCentralityOutput:
        """Nodes by total degree (in + out), highest first."""
        data = await self._fetch(await self._open(graph))
        result = algorithms.degree_centrality(data, "total", top_n)
        return DegreeCentralityOutput(
            rankings=[
                DegreeOut(
                    label=r.node.name, in_degree=r.in_degree, out_degree=r.out_degree, total=r.total
                )
                for r in result.rankings
            ]
        )

    # -- structure ---------------------------------------------------------------------------

    async def connected_components(
        self, strong: bool = False, limit: int = 100, *, graph: str | None = None
    ) -> ComponentsOutput:
        """Weakly (or strongly) connected components, largest first."""
        g = await self._open(graph)
        data = await self._fetch(g)
        result = algorithms.connected_components(data, strong, limit)
        return ComponentsOutput(
            components=[_names(c) for c in result.components],
            count=result.count,
            method="python (scipy)",
        )

    async def find_cycles(
        self, limit: int = 100, max_length: int | None = None, *, graph: str | None = None
    ) -> CyclesOutput:
        """Directed simple cycles, shortest first among those found."""
        data = await self._fetch(await self._open(graph))
        result = algorithms.find_cycles(data, limit, max_length, time_budget=10.0)
        return CyclesOutput(
            cycles=[_names(c) for c in result.cycles],
            has_cycles=result.has_cycles,
            truncated=result.truncated,
        )

    async def transitive_reduction(
        self, in_place: bool = False, *, graph: str | None = None
    ) -> TransitiveReductionOutput:
        """Edges implied by longer paths; with `in_place` they are removed (scratch graphs only)."""
        g = await self._open(graph)
        if in_place and g.kind != "scratch":
            g = _Opened(await self.scratch.manager.use_scratch(graph), "scratch")
        data = await self._fetch(g)
        result = algorithms.transitive_reduction(data)
        redundant = [
            EdgeOut(source=e.source.name, target=e.target.name, relation=e.relation)
            for e in result.removable
        ]
        removed = 0
        if in_place and result.removable:
            rows = [
                {"a": e.source.id, "b": e.target.id, "rel": e.relation} for e in result.removable
            ]
            res = await self.scratch.store.query(
                g.ns,
                f"UNWIND $rows AS e MATCH (a:{SCRATCH} {{name: e.a}})-[r:{R_SCRATCH}]->"
                f"(b:{SCRATCH} {{name: e.b}}) WHERE r.relation = e.rel DELETE r",
                {"rows": rows},
            )
            removed = res.relationships_deleted
        return TransitiveReductionOutput(
            edges_removed=removed, redundant=redundant, in_place=in_place, note=result.note
        )

    async def subgraph(
        self,
        nodes: Sequence[str],
        hops: int = 0,
        include_edges: bool = True,
        *,
        graph: str | None = None,
    ) -> SubgraphOutput:
        """The named nodes, their neighbours up to `hops` away, and the edges among them."""
        g = await self._open(graph)
        data = await self._fetch(g)
        ids = [await self._node_id(g, data, n) for n in nodes]
        result = algorithms.subgraph(data, ids, hops)
        sub = result.graph
        names = {n.id: n.name for n in sub.nodes}
        return SubgraphOutput(
            nodes=[NodeOut(label=n.name, type=n.type, properties=n.properties) for n in sub.nodes],
            edges=[
                EdgeOut(
                    source=names[e.source],
                    target=names[e.target],
                    relation=e.relation,
                    properties=e.properties,
                )
                for e in sub.edges
            ]
            if include_edges
            else [],
            truncated=result.truncated,
        )
