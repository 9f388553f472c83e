"""The explorer's reads: a page of a namespace, a node with its neighbours, the timeline, search.

Every query is parameterized and bounded (SKIP/LIMIT, id seeks, range-indexed orders);
labels and relationship types come from `polyg_core.storage.schema` only.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, cast

from polyg_core.errors import AmbiguousName, Candidate, NodeNotFound
from polyg_core.resolve import CAUSAL_NAMES, CONCEPT_NAMES, ENTITY_NAMES, NameResolver
from polyg_core.storage.cypher import clean, load_properties, props
from polyg_core.storage.schema import (
    CROSS_LINKS,
    EDGES_OF_GRAPH,
    EVENT,
    FACT,
    GRAPH_OF_LABEL,
    LABELS_OF_GRAPH,
    MEMORY_LABELS,
)
from polyg_core.storage.store import FalkorStore

from polyg_server.ui.models import (
    GraphPage,
    Layer,
    Neighbour,
    NodeDetail,
    SearchHit,
    SearchOutput,
    TimelineOutput,
    UiEdge,
    UiNode,
)

logger = logging.getLogger(__name__)

MAX_NAME_CHARS = 160
EDGE_SCAN_FACTOR = 4
"""Edges read per edge returned before filtering to the page (bounds the scan)."""

_LAYER_OF_EDGE: dict[str, str] = {
    rel: layer for layer, rels in EDGES_OF_GRAPH.items() for rel in rels
} | {rel: "cross" for rel in CROSS_LINKS}


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def to_ui_node(label: str, node: dict[str, Any]) -> UiNode:
    """The explorer's view of a node of `label` from its projected properties."""
    if label == FACT:
        name = f"{node.get('subject', '')} {node.get('predicate', '')} {node.get('object', '')}"
    else:
        name = str(
            node.get("name") or node.get("description") or node.get("content") or node.get("uuid")
        )
    if len(name) > MAX_NAME_CHARS:
        name = name[: MAX_NAME_CHARS - 1] + "…"
    kind = node.get("entity_type") or node.get("node_type") or node.get("category")
    return UiNode(
        id=str(node.get("uuid", "")),
        label=label,
        layer=cast(Layer, GRAPH_OF_LABEL[label]),
        name=name.strip(),
        kind=str(kind) if kind else None,
        time=_int(node.get("occurred_at")),
        valid_from=_int(node.get("valid_from")),
        valid_to=_int(node.get("valid_to")),
    )


def to_ui_edge(source: str, target: str, rel: str, confidence: Any, relation: Any) -> UiEdge:
    """The explorer's view of an edge of type `rel`."""
    return UiEdge(
        source=source,
        target=target,
        type=rel,
        layer=cast(Any, _LAYER_OF_EDGE.get(rel, "cross")),
        label=str(relation) if relation else None,
        confidence=float(confidence) if isinstance(confidence, int | float) else None,
    )


def _memory_label(labels: Any) -> str | None:
    for label in cast(list[Any], labels) if isinstance(labels, list) else [labels]:
        if label in MEMORY_LABELS:
            return str(label)
    return None


async def graph_page(
    store: FalkorStore,
    namespace: str,
    layers: Sequence[Layer],
    *,
    offset: int,
    limit: int,
    max_edges: int,
) -> GraphPage:
    """Nodes `offset..offset+limit` of the chosen layers (labels in a fixed order, each in
    storage order), and the edges among them (at most `max_edges`)."""
    labels = [label for layer in layers for label in LABELS_OF_GRAPH[layer]]
    counts: dict[str, int] = dict.fromkeys(layers, 0)
    per_label: list[tuple[str, int]] = []
    for label in labels:
        res = await store.query(namespace, f"MATCH (n:{label}) RETURN count(n)", read_only=True)
        n = int(res.scalar(0) or 0)
        per_label.append((label, n))
        counts[GRAPH_OF_LABEL[label]] += n
    total = sum(n for _, n in per_label)

    nodes: list[UiNode] = []
    uuid_of: dict[int, str] = {}
    start = 0
    end = offset + limit
    for label, n in per_label:
        lo, hi = max(offset, start), min(end, start + n)
        if lo < hi:
            res = await store.query(
                namespace,
                f"MATCH (n:{label}) RETURN id(n), {props('n')} SKIP $s LIMIT $l",
                {"s": lo - start, "l": hi - lo},
                read_only=True,
            )
            for internal, node in res.rows:
                ui = to_ui_node(label, clean(node))
                uuid_of[int(internal)] = ui.id
                nodes.append(ui)
        start += n

    edges: list[UiEdge] = []
    truncated = False
    if uuid_of and max_edges > 0:
        scan = max_edges * EDGE_SCAN_FACTOR
        res = await store.query(
            namespace,
            "UNWIND $ids AS i MATCH (a) WHERE id(a) = i MATCH (a)-[r]->(b) "
            "RETURN id(a), id(b), type(r), r.confidence, r.relationship_type LIMIT $scan",
            {"ids": list(uuid_of), "scan": scan + 1},
            read_only=True,
        )
        truncated = len(res.rows) > scan
        for a, b, rel, conf, relation in res.rows[:scan]:
            target = uuid_of.get(int(b))
            if target is None:
                continue
            if len(edges) >= max_edges:
                truncated = True
                break
            edges.append(to_ui_edge(uuid_of[int(a)], target, str(rel), conf, relation))
    following = offset + len(nodes)
    return GraphPage(
        graph=namespace,
        layers=list(layers),
        offset=offset,
        limit=limit,
        total=total,
        counts=counts,
        next_offset=following if following < total else None,
        nodes=nodes,
        edges=edges,
        edges_truncated=truncated,
    )


MAX_SIZED_GRAPHS = 200
"""Namespaces whose memory nodes /api/graphs counts (one query each); the rest show None."""

_COUNT_MEMORY = " UNION ALL ".join(
    f"MATCH (n:{label}) RETURN count(n) AS c" for label in MEMORY_LABELS
)


async def memory_sizes(
    store: FalkorStore, names: Sequence[str], existing: Sequence[str]
) -> dict[str, int | None]:
    """Memory nodes in each of `names` (0 for a name not in `existing`, which FalkorDB has
    not created yet), counted for the first MAX_SIZED_GRAPHS names only."""
    present = set(existing)
    sizes: dict[str, int | None] = {}
    for i, name in enumerate(names):
        if i >= MAX_SIZED_GRAPHS:
            sizes[name] = None
        elif name not in present:
            sizes[name] = 0
        else:
            res = await store.query(name, _COUNT_MEMORY, read_only=True)
            sizes[name] = sum(int(row[0] or 0) for row in res.rows)
    return sizes


def opening_graph(default: str, sizes: dict[str, int | None]) -> str | None:
    """The namespace the explorer opens on: the default when it holds memory, else the only
    namespace that does; None when several do, so the explorer asks; the (empty) default
    when none does."""
    if sizes.get(default):
        return default
    filled = [name for name, n in sizes.items() if n]
    if len(filled) > 1:
        return None
    return filled[0] if filled else default


async def find_node(store: FalkorStore, namespace: str, uuid: str) -> tuple[str, dict[str, Any]]:
    """The label and properties of the memory node with this uuid.

    Raises:
        NodeNotFound: no memory node has this uuid.
    """
    for label in MEMORY_LABELS:
        res = await store.query(
            namespace,
            f"MATCH (n:{label} {{uuid: $u}}) RETURN {props('n')} LIMIT 1",
            {"u": uuid},
            read_only=True,
        )
        if res.rows:
            return label, clean(res.rows[0][0])
    raise NodeNotFound("node", uuid)


async def node_detail(store: FalkorStore, namespace: str, uuid: str, limit: int) -> NodeDetail:
    """A node's properties and up to `limit` neighbours (outgoing first) with their edges.

    Raises:
        NodeNotFound: no memory node has this uuid.
    """
    label, node = await find_node(store, namespace, uuid)
    neighbours: list[Neighbour] = []
    truncated = False
    for direction, pattern in (("out", "(n)-[r]->(m)"), ("in", "(n)<-[r]-(m)")):
        room = limit - len(neighbours)
        if room <= 0:
            truncated = True
            break
        res = await store.query(
            namespace,
            f"MATCH (n:{label} {{uuid: $u}}) MATCH {pattern} "
            f"RETURN type(r), r.confidence, r.relationship_type, labels(m), {props('m')} "
            "LIMIT $lim",
            {"u": uuid, "lim": room + 1},
            read_only=True,
        )
        if len(res.rows) > room:
            truncated = True
        for rel, conf, relation, labels, other in res.rows[:room]:
            other_label = _memory_label(labels)
            if other_label is None:
                continue
            ui = to_ui_node(other_label, clean(other))
            src, dst = (uuid, ui.id) if direction == "out" else (ui.id, uuid)
            neighbours.append(
                Neighbour(
                    node=ui,
                    edge=to_ui_edge(src, dst, str(rel), conf, relation),
                    direction="out" if direction == "out" else "in",
                )
            )
    properties = dict(node)
    if "properties" in properties:
        properties["properties"] = load_properties(properties["properties"])
    return NodeDetail(
        graph=namespace,
        node=to_ui_node(label, node),
        properties=properties,
        neighbours=neighbours,
        truncated=truncated,
    )


async def timeline(store: FalkorStore, namespace: str, limit: int) -> TimelineOutput:
    """The latest `limit` events and the `limit` facts most recently made valid."""
    out: dict[str, list[UiNode]] = {}
    truncated = False
    for label, key in ((EVENT, "occurred_at"), (FACT, "valid_from")):
        res = await store.query(
            namespace,
            f"MATCH (n:{label}) WHERE n.{key} IS NOT NULL "
            f"RETURN {props('n')} ORDER BY n.{key} DESC LIMIT $lim",
            {"lim": limit + 1},
            read_only=True,
        )
        truncated = truncated or len(res.rows) > limit
        items = [to_ui_node(label, clean(r[0])) for r in res.rows[:limit]]
        items.reverse()
        out[label] = items
    return TimelineOutput(graph=namespace, events=out[EVENT], facts=out[FACT], truncated=truncated)


_SEARCH_SPECS = (ENTITY_NAMES, CAUSAL_NAMES, CONCEPT_NAMES)


async def search(resolver: NameResolver, namespace: str, query: str, limit: int) -> SearchOutput:
    """Entities, causal nodes and concepts whose names match `query`, best first.

    The resolver's own steps decide: uuid, exact, normalised, embedding similarity,
    then partial names among the closest candidates.
    """
    best: dict[str, tuple[int, SearchHit]] = {}

    def keep(c: Candidate, how: str, rank: int) -> None:
        if c.label not in GRAPH_OF_LABEL or not c.uuid:
            return
        hit = SearchHit(
            id=c.uuid,
            name=c.name,
            label=c.label,
            layer=cast(Layer, GRAPH_OF_LABEL[c.label]),
            similarity=round(min(float(c.similarity), 1.0), 4),
            how=how,
        )
        old = best.get(c.uuid)
        if old is None or (old[0], old[1].similarity) < (rank, hit.similarity):
            best[c.uuid] = (rank, hit)

    for spec in _SEARCH_SPECS:
        try:
            found = await resolver.find(namespace, spec, query)
        except AmbiguousName as exc:
            for c in exc.candidates:
                keep(c, "ambiguous", 0)
            found = None
        if found is not None:
            keep(Candidate(found.uuid, found.name, found.label, found.similarity), found.how, 1)
        for c in await resolver.candidates(namespace, spec, query, limit):
            keep(c, "similar", 0)
    ranked = sorted(best.values(), key=lambda rh: (-rh[0], -rh[1].similarity, rh[1].name))
    hits = [h for _, h in ranked[:limit]]
    return SearchOutput(graph=namespace, query=query, hits=hits)
