"""Nodes and edges of scratch graphs, named by meaning rather than by id (seed 002 §6.4).

| operation   | exact / normalised | fuzzy (embedding)      | no match          |
|-------------|--------------------|------------------------|-------------------|
| add_node    | return existing    | return existing        | create            |
| add_edge    | use it             | use it                 | NodeNotFound      |
| find_node   | return it          | return candidates      | empty             |
| remove_node | remove it          | refused ("be specific")| NodeNotFound      |

A match by meaning on `add_node` needs similarity >= 0.85 (seed 002's
threshold, stricter than the 0.75 reads use) and labels that are also
`lexically_compatible` (same numbers, negation and polarity words, no word put
in place of another): "queue gateway 347" is not "queue gateway 575", nor
"AuthService" "AuthController", however close their embeddings are.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from polyg_shared.engine import (
    MAX_ADD_BATCH,
    AddEdgeOutput,
    AddEdgesOutput,
    AddNodeOutput,
    AddNodesOutput,
    CandidateOut,
    Direction,
    EdgeFailure,
    EdgeOut,
    EdgeSpec,
    FindEdgesOutput,
    FindNodeOutput,
    GetNeighborsOutput,
    ListNodesOutput,
    MatchHow,
    NeighborOut,
    NodeMatch,
    NodeOut,
    NodeSpec,
    RemoveEdgeOutput,
    RemoveNodeOutput,
)

from polyg_core.errors import AmbiguousName, Candidate, InvalidInput, NodeNotFound, PolygError
from polyg_core.graphs.entity_refs import lexically_compatible
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.resolve import SCRATCH_NAMES, NameResolver, Resolved
from polyg_core.scratch.registry import GraphManager
from polyg_core.storage.cypher import clean, dump_properties, load_properties, props
from polyg_core.storage.schema import R_SCRATCH, SCRATCH
from polyg_core.storage.store import FalkorStore
from polyg_core.storage.vector import knn
from polyg_core.text.normalize import normalize_name

logger = logging.getLogger(__name__)

# Seed 002's similarity for add_node to return an existing node by meaning; reads
# (find_node, candidates) keep the resolver's lower threshold.
ADD_MATCH_THRESHOLD = 0.85

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[_\-./]+")


def embedding_text(name: str) -> str:
    """The text embedded for a name: camelCase and separators become spaces.

    MiniLM reads "User Repository" far better than "UserRepository", so "user
    repo" finds it by meaning.
    """
    return " ".join(_SEPARATORS.sub(" ", _CAMEL.sub(" ", name)).split())


class NameNotExact(AmbiguousName):
    """A destructive call named a node only approximately; it must use the exact name."""

    def __init__(self, name: str, candidates: Sequence[Candidate]) -> None:
        super().__init__("node", name, candidates)
        listed = ", ".join(f"{c.name!r} ({c.similarity:.2f})" for c in self.candidates)
        Exception.__init__(
            self,
            f"No node is named {name!r}; be specific: removing needs the node's exact name "
            f"(case and spacing may differ). Closest: {listed}. Call again with one of these.",
        )


def _weight(properties: dict[str, Any]) -> float | None:
    value = properties.get("weight")
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def node_out(row: dict[str, Any]) -> NodeOut:
    """A stored G_Node (projected without embedding) as a `NodeOut`."""
    node_type = row.get("node_type")
    return NodeOut(
        label=str(row.get("name", "")),
        type=str(node_type) if node_type is not None else None,
        properties=load_properties(row.get("properties")),
    )


def _cands(cands: Sequence[Candidate]) -> list[CandidateOut]:
    return [CandidateOut(label=c.name, similarity=c.similarity) for c in cands]


@dataclass
class _Pending:
    spec: NodeSpec
    key: str
    result: AddNodeOutput | None = None
    ref: int | None = None  # index of an earlier batch item this one is the same node as
    vector: Any = None


def _name_key(label: str) -> str:
    return normalize_name(label) or label.strip()


def _how_matched(item: _Pending, node_label: str) -> MatchHow:
    """How a batch item's label matched the node an earlier item added or matched."""
    if node_label == item.spec.label:
        return "exact"
    if _name_key(node_label) == item.key:
        return "normalized"
    return "embedding"


def _check_batch(tool: str, what: str, count: int) -> None:
    if count > MAX_ADD_BATCH:
        raise InvalidInput(
            f"{tool} takes at most {MAX_ADD_BATCH} {what} per call, got {count}: split them "
            f"into calls of {MAX_ADD_BATCH} or fewer (import_graph loads a whole graph file)"
        )


@dataclass
class ScratchGraphs:
    """Node and edge operations on named scratch graphs.

    Args:
        store: the FalkorDB store.
        embedder: for matching names by meaning (None: exact and normalised only).
        graphs: the named-graph manager (created from store and embedder when omitted).
        find_min_similarity: find_node leaves out candidates below this similarity.
    """

    store: FalkorStore
    embedder: Embedder | None = None
    graphs: GraphManager | None = None
    find_min_similarity: float = 0.45
    resolver: NameResolver = field(init=False)

    def __post_init__(self) -> None:
        if self.graphs is None:
            self.graphs = GraphManager(self.store, self.embedder)
        self.resolver = NameResolver(self.store, self.embedder)

    @property
    def manager(self) -> GraphManager:
        """The named-graph manager."""
        assert self.graphs is not None
        return self.graphs

    # -- name resolution ---------------------------------------------------------------------

    async def resolve(self, ns: str, name: str, *, fuzzy: bool = True) -> Resolved:
        """Resolve a node name: uuid, exact, normalised, then (if `fuzzy`) by meaning.

        Raises:
            NodeNotFound: nothing matches; carries the closest names.
            AmbiguousName: several nodes match about equally well.
            NameNotExact: `fuzzy` is False and only an approximate match exists.
        """
        found = await self.resolver.find(ns, SCRATCH_NAMES, name, fuzzy=False)
        if found is not None:
            return found
        text = embedding_text(name)
        try:
            approx = await self.resolver.find(ns, SCRATCH_NAMES, text)
        except AmbiguousName as exc:
            raise AmbiguousName("node", name, exc.candidates) from None
        if (
            approx is not None
            and approx.how == "embedding"
            and not lexically_compatible(name, approx.name)
        ):
            approx = None
        if approx is not None and fuzzy:
            return approx
        candidates = await self.resolver.candidates(ns, SCRATCH_NAMES, text)
        if approx is not None:
            raise NameNotExact(name, candidates or [self._as_candidate(approx)])
        raise NodeNotFound("node", name, candidates)

    @staticmethod
    def _as_candidate(r: Resolved) -> Candidate:
        return Candidate(uuid=r.uuid, name=r.name, label=r.label, similarity=r.similarity)

    async def _embed(self, names: Sequence[str]) -> Any:
        if self.embedder is None or not names:
            return None
        return await self.embedder.embed([embedding_text(n) for n in names])

    # -- nodes -------------------------------------------------------------------------------

    async def add_node(
        self,
        label: str,
        type: str | None = None,
        properties: dict[str, Any] | None = None,
        *,
        graph: str | None = None,
    ) -> AddNodeOutput:
        """Add a node, or return the existing node the label matches (`created: false`)."""
        out = await self.add_nodes(
            [NodeSpec(label=label, type=type, properties=properties or {})], graph=graph
        )
        return out.results[0]

    async def add_nodes(
        self, nodes: Sequence[NodeSpec], *, graph: str | None = None
    ) -> AddNodesOutput:
        """Add nodes in one write; labels matching existing nodes (or earlier ones) are not added.

        A label matches an existing node by exact name, normalised name, or by
        meaning (embedding similarity at or above `ADD_MATCH_THRESHOLD`, lexically
        compatible labels, no other node within the ambiguity margin; an ambiguous
        label is added as new).
        """
        _check_batch("add_nodes", "nodes", len(nodes))
        ns = await self.manager.use_scratch(graph)
        items = [_Pending(spec, _name_key(spec.label)) for spec in nodes]
        first_of_key: dict[str, int] = {}
        for i, item in enumerate(items):
            if item.key in first_of_key:
                item.ref = first_of_key[item.key]
            else:
                first_of_key[item.key] = i
        open_items = await self._match_names(ns, items, first_of_key)
        accepted = await self._match_meanings(ns, items, open_items)
        await self._create(ns, [items[i] for i in accepted])
        added = len(accepted)
        return AddNodesOutput(added=added, existing=len(items) - added, results=_outcomes(items))

    async def _match_names(
        self, ns: str, items: list[_Pending], first_of_key: dict[str, int]
    ) -> list[int]:
        """Match each first item of a name key to a stored node by exact or normalised
        name; the items left open."""
        res = await self.store.query(
            ns,
            f"UNWIND $keys AS k MATCH (n:{SCRATCH} {{name_key: k}}) RETURN k, {props('n')}",
            {"keys": list(first_of_key)},
            read_only=True,
        )
        existing = {str(k): clean(row) for k, row in res.rows}
        open_items: list[int] = []
        for i in first_of_key.values():
            item = items[i]
            row = existing.get(item.key)
            if row is not None:
                how: MatchHow = "exact" if row.get("name") == item.spec.label else "normalized"
                item.result = AddNodeOutput(node=node_out(row), created=False, matched=how)
            else:
                open_items.append(i)
        return open_items

    async def _match_meanings(
        self, ns: str, items: list[_Pending], open_items: list[int]
    ) -> list[int]:
        """Match the open items by meaning to a stored node or an earlier item of the
        batch; the items to create."""
        vectors = await self._embed([items[i].spec.label for i in open_items])
        accepted: list[int] = []
        for pos, i in enumerate(open_items):
            item = items[i]
            item.vector = vectors[pos] if vectors is not None else None
            if item.vector is not None:
                match = await self._similar_existing(ns, item.spec.label, item.vector)
                if match is not None:
                    row, sim = match
                    item.result = AddNodeOutput(
                        node=node_out(row), created=False, matched="embedding", similarity=sim
                    )
                    continue
                twin = self._similar_in_batch(items, accepted, item)
                if twin is not None:
                    item.ref = twin
                    continue
            accepted.append(i)
        return accepted

    async def _similar_existing(
        self, ns: str, label: str, vector: Any
    ) -> tuple[dict[str, Any], float] | None:
        hits = await knn(
            self.store,
            ns,
            SCRATCH,
            [float(x) for x in vector],
            self.resolver.max_candidates,
            min_similarity=ADD_MATCH_THRESHOLD,
        )
        hits = [h for h in hits if lexically_compatible(label, str(h.properties.get("name", "")))]
        if not hits:
            return None
        best = hits[0]
        if len(hits) > 1 and best.similarity - hits[1].similarity <= self.resolver.margin:
            return None  # ambiguous: the label is taken as a new node
        return best.properties, round(best.similarity, 4)

    def _similar_in_batch(
        self, items: list[_Pending], accepted: list[int], item: _Pending
    ) -> int | None:
        pool = [i for i in accepted if lexically_compatible(item.spec.label, items[i].spec.label)]
        if not pool:
            return None
        matrix = np.stack([items[i].vector for i in pool])
        sims = matrix @ np.asarray(item.vector)
        best = int(np.argmax(sims))
        return pool[best] if float(sims[best]) >= ADD_MATCH_THRESHOLD else None

    async def _create(self, ns: str, items: list[_Pending]) -> None:
        if not items:
            return
        rows: list[dict[str, Any]] = []
        for item in items:
            rows.append(
                {
                    "uuid": str(uuid.uuid4()),
                    "name": item.spec.label,
                    "key": item.key,
                    "type": item.spec.type,
                    "props": dump_properties(item.spec.properties),
                    "vec": [float(x) for x in item.vector] if item.vector is not None else None,
                }
            )
        res = await self.store.query(
            ns,
            f"UNWIND $rows AS r MERGE (n:{SCRATCH} {{name_key: r.key}}) "
            "ON CREATE SET n.uuid = r.uuid, n.name = r.name, n.node_type = r.type, "
            "n.properties = r.props "
            "FOREACH (_ IN CASE WHEN r.vec IS NULL OR n.uuid <> r.uuid THEN [] ELSE [1] END | "
            "SET n.embedding = vecf32(r.vec)) "
            f"RETURN r.uuid = n.uuid, {props('n')}",
            {"rows": rows},
        )
        for item, (fresh, row) in zip(items, res.rows, strict=True):
            item.result = AddNodeOutput(
                node=node_out(clean(row)),
                created=bool(fresh),
                matched="created" if fresh else "normalized",
            )

    async def find_node(
        self, query: str, limit: int = 5, *, graph: str | None = None
    ) -> FindNodeOutput:
        """Nodes matching `query`: the node itself on an exact/normalised match, else close candidates."""
        ns, _ = await self.manager.use(graph)
        found = await self.resolver.find(ns, SCRATCH_NAMES, query, fuzzy=False)
        if found is not None:
            node = node_out(found.properties)
            return FindNodeOutput(
                matches=[
                    NodeMatch(
                        label=node.label, similarity=1.0, type=node.type, properties=node.properties
                    )
                ]
            )
        cands = await self.resolver.candidates(ns, SCRATCH_NAMES, embedding_text(query), limit)
        cands = [c for c in cands if c.similarity >= self.find_min_similarity]
        if not cands:
            return FindNodeOutput(matches=[])
        res = await self.store.query(
            ns,
            f"UNWIND $ids AS u MATCH (n:{SCRATCH} {{uuid: u}}) RETURN u, {props('n')}",
            {"ids": [c.uuid for c in cands]},
            read_only=True,
        )
        rows = {str(u): node_out(clean(r)) for u, r in res.rows}
        matches = [
            NodeMatch(
                label=c.name,
                similarity=c.similarity,
                type=rows[c.uuid].type,
                properties=rows[c.uuid].properties,
            )
            for c in cands
            if c.uuid in rows
        ]
        return FindNodeOutput(matches=matches)

    async def remove_node(self, label: str, *, graph: str | None = None) -> RemoveNodeOutput:
        """Remove a node named exactly (case and spacing may differ) and its edges.

        Raises:
            NameNotExact: only an approximate match exists ("be specific").
            NodeNotFound: nothing matches.
        """
        ns = await self.manager.use_scratch(graph)
        node = await self.resolve(ns, label, fuzzy=False)
        res = await self.store.query(
            ns, f"MATCH (n:{SCRATCH} {{uuid: $u}}) DETACH DELETE n", {"u": node.uuid}
        )
        return RemoveNodeOutput(
            success=res.nodes_deleted > 0, label=node.name, edges_removed=res.relationships_deleted
        )

    async def list_nodes(
        self, type: str | None = None, limit: int = 100, *, graph: str | None = None
    ) -> ListNodesOutput:
        """Nodes in name order, optionally of one type."""
        ns, _ = await self.manager.use(graph)
        where = "WHERE $t IS NULL OR n.node_type = $t"
        total = await self.store.query(
            ns, f"MATCH (n:{SCRATCH}) {where} RETURN count(n)", {"t": type}, read_only=True
        )
        res = await self.store.query(
            ns,
            f"MATCH (n:{SCRATCH}) {where} RETURN {props('n')} ORDER BY n.name LIMIT $lim",
            {"t": type, "lim": limit},
            read_only=True,
        )
        return ListNodesOutput(
            nodes=[node_out(clean(r[0])) for r in res.rows], total=int(total.scalar(0))
        )

    # -- edges -------------------------------------------------------------------------------

    async def add_edge(
        self,
        source: str,
        target: str,
        relation: str,
        properties: dict[str, Any] | None = None,
        *,
        graph: str | None = None,
    ) -> AddEdgeOutput:
        """Add an edge between two existing nodes named fuzzily; the same relation twice is one edge.

        Raises:
            NodeNotFound: an endpoint matches no node (with candidates).
            AmbiguousName: an endpoint matches several nodes about equally.
        """
        spec = EdgeSpec(
            source=source, target=target, relation=relation, properties=properties or {}
        )
        out = await self._add_edges(graph, [spec], raise_first=True)
        return out.results[0]

    async def add_edges(
        self, edges: Sequence[EdgeSpec], *, graph: str | None = None
    ) -> AddEdgesOutput:
        """Add edges in one write; edges whose endpoints cannot be resolved are reported in `failed`."""
        _check_batch("add_edges", "edges", len(edges))
        return await self._add_edges(graph, list(edges), raise_first=False)

    async def _add_edges(
        self, graph: str | None, edges: list[EdgeSpec], *, raise_first: bool
    ) -> AddEdgesOutput:
        ns = await self.manager.use_scratch(graph)
        cache: dict[str, Resolved | PolygError] = {}

        async def endpoint(name: str) -> Resolved:
            if name not in cache:
                try:
                    cache[name] = await self.resolve(ns, name)
                except (NodeNotFound, AmbiguousName) as exc:
                    cache[name] = exc
            value = cache[name]
            if isinstance(value, PolygError):
                raise value
            return value

        failed: list[EdgeFailure] = []
        good: list[tuple[int, EdgeSpec, Resolved, Resolved]] = []
        for i, spec in enumerate(edges):
            try:
                a = await endpoint(spec.source)
                b = await endpoint(spec.target)
            except (NodeNotFound, AmbiguousName) as exc:
                if raise_first:
                    raise
                failed.append(
                    EdgeFailure(edge=spec, reason=str(exc), candidates=_cands(exc.candidates))
                )
                continue
            good.append((i, spec, a, b))
        rows: list[dict[str, Any]] = []
        first: dict[tuple[str, str, str], int] = {}
        for i, spec, a, b in good:
            key = (a.uuid, b.uuid, spec.relation)
            if key in first:
                continue
            first[key] = i
            rows.append(
                {
                    "i": i,
                    "a": a.uuid,
                    "b": b.uuid,
                    "rel": spec.relation,
                    "props": dump_properties(spec.properties),
                    "w": _weight(spec.properties),
                }
            )
        fresh: dict[int, bool] = {}
        stored: dict[int, dict[str, Any]] = {}
        if rows:
            res = await self.store.query(
                ns,
                f"UNWIND $rows AS e MATCH (a:{SCRATCH} {{uuid: e.a}}) MATCH (b:{SCRATCH} {{uuid: e.b}}) "
                f"OPTIONAL MATCH (a)-[old:{R_SCRATCH} {{relation: e.rel}}]->(b) "
                "WITH a, b, e, count(old) = 0 AS fresh "
                f"MERGE (a)-[r:{R_SCRATCH} {{relation: e.rel}}]->(b) "
                "ON CREATE SET r.properties = e.props, r.weight = e.w "
                "RETURN e.i, fresh, r.properties",
                {"rows": rows},
            )
            for i, is_new, raw in res.rows:
                fresh[int(i)] = bool(is_new)
                stored[int(i)] = load_properties(raw)
        results: list[AddEdgeOutput] = []
        for i, spec, a, b in good:
            base = first[(a.uuid, b.uuid, spec.relation)]
            results.append(
                AddEdgeOutput(
                    edge=EdgeOut(
                        source=a.name,
                        target=b.name,
                        relation=spec.relation,
                        properties=stored.get(base, {}),
                    ),
                    created=fresh.get(base, False) and base == i,
                    source_matched=a.name,
                    target_matched=b.name,
                    source_match=a.how,
                    target_match=b.how,
                )
            )
        added = sum(1 for r in results if r.created)
        return AddEdgesOutput(
            added=added, existing=len(results) - added, failed=failed, results=results
        )

    async def find_edges(
        self,
        source: str | None = None,
        target: str | None = None,
        relation: str | None = None,
        limit: int = 100,
        *,
        graph: str | None = None,
    ) -> FindEdgesOutput:
        """Edges by source, target and/or relation (endpoint names matched fuzzily)."""
        ns, _ = await self.manager.use(graph)
        a = (await self.resolve(ns, source)).uuid if source else None
        b = (await self.resolve(ns, target)).uuid if target else None
        res = await self.store.query(
            ns,
            f"MATCH (a:{SCRATCH})-[r:{R_SCRATCH}]->(b:{SCRATCH}) "
            "WHERE ($a IS NULL OR a.uuid = $a) AND ($b IS NULL OR b.uuid = $b) "
            "AND ($rel IS NULL OR toLower(r.relation) = toLower($rel)) "
            "RETURN a.name, b.name, r.relation, r.properties ORDER BY a.name, b.name, r.relation "
            "LIMIT $lim",
            {"a": a, "b": b, "rel": relation, "lim": limit},
            read_only=True,
        )
        return FindEdgesOutput(
            edges=[
                EdgeOut(source=s, target=t, relation=rel, properties=load_properties(p))
                for s, t, rel, p in res.rows
            ]
        )

    async def remove_edge(
        self, source: str, target: str, relation: str | None = None, *, graph: str | None = None
    ) -> RemoveEdgeOutput:
        """Remove the edge(s) source→target (of one relation, or all); endpoints named exactly.

        Raises:
            NameNotExact: an endpoint only matches approximately.
            NodeNotFound: an endpoint matches nothing.
        """
        ns = await self.manager.use_scratch(graph)
        a = await self.resolve(ns, source, fuzzy=False)
        b = await self.resolve(ns, target, fuzzy=False)
        res = await self.store.query(
            ns,
            f"MATCH (a:{SCRATCH} {{uuid: $a}})-[r:{R_SCRATCH}]->(b:{SCRATCH} {{uuid: $b}}) "
            "WHERE $rel IS NULL OR toLower(r.relation) = toLower($rel) DELETE r",
            {"a": a.uuid, "b": b.uuid, "rel": relation},
        )
        return RemoveEdgeOutput(
            success=res.relationships_deleted > 0, removed=res.relationships_deleted
        )

    async def get_neighbors(
        self,
        node: str,
        direction: Direction = "both",
        relation: str | None = None,
        *,
        graph: str | None = None,
    ) -> GetNeighborsOutput:
        """Nodes joined to `node` by an edge in the given direction (and relation)."""
        ns, _ = await self.manager.use(graph)
        n = await self.resolve(ns, node)
        out: list[NeighborOut] = []
        patterns = {
            "out": f"(n)-[r:{R_SCRATCH}]->(m:{SCRATCH})",
            "in": f"(n)<-[r:{R_SCRATCH}]-(m:{SCRATCH})",
        }
        for way in ("out", "in"):
            if direction not in (way, "both"):
                continue
            res = await self.store.query(
                ns,
                f"MATCH (n:{SCRATCH} {{uuid: $u}}) MATCH {patterns[way]} "
                "WHERE $rel IS NULL OR toLower(r.relation) = toLower($rel) "
                "RETURN m.name, r.relation ORDER BY m.name, r.relation",
                {"u": n.uuid, "rel": relation},
                read_only=True,
            )
            out.extend(NeighborOut(label=m, relation=rel, direction=way) for m, rel in res.rows)  # type: ignore[arg-type]
        return GetNeighborsOutput(node_matched=n.name, neighbors=out)


def _outcomes(items: list[_Pending]) -> list[AddNodeOutput]:
    """Each item's outcome, in input order.

    A reference points to an earlier item, itself possibly a reference (a duplicate of
    a near-twin): resolving in input order gives every earlier item its result.
    """
    results: list[AddNodeOutput] = []
    for item in items:
        if item.ref is not None:
            base = items[item.ref].result
            if base is None:  # pragma: no cover - refs only point backwards
                raise RuntimeError("add_nodes: a batch item refers to an unresolved one")
            item.result = AddNodeOutput(
                node=base.node, created=False, matched=_how_matched(item, base.node.label)
            )
        if item.result is None:  # pragma: no cover - every item is created or matched
            raise RuntimeError(f"add_nodes: no outcome for {item.spec.label!r}")
        results.append(item.result)
    return results
