"""Loading a scratch graph or a memory namespace from FalkorDB into an in-memory `GraphData`.

Scratch graphs: node id = node name (names are unique per graph), type =
node_type, the stored properties; edges with their relation, properties and
weight. Memory namespaces: every memory label, node id = uuid, name from
name / description / subject-predicate-object / content, type from the entity
or causal type (else the kind of node), and every edge including cross-links
(relation = the entity relationship type, else the relationship type).
"""

from __future__ import annotations

import logging
from typing import Any, Final, cast

from polyg_core.algorithms.model import EdgeData, GraphData, NodeData
from polyg_core.errors import InvalidInput
from polyg_core.scratch.registry import GraphKindName
from polyg_core.storage.cypher import load_properties
from polyg_core.storage.schema import (
    CAUSAL,
    CONCEPT,
    ENTITY,
    EVENT,
    FACT,
    MEMORY,
    MEMORY_LABELS,
    R_RELATES,
    R_SCRATCH,
    SCRATCH,
)
from polyg_core.storage.store import FalkorStore

logger = logging.getLogger(__name__)

DEFAULT_MAX_NODES: Final = 200_000
"""Largest graph the analysis tools load."""

MEMORY_NAME_CHARS: Final = 120

_DEFAULT_TYPE: Final = {
    ENTITY: "entity",
    EVENT: "event",
    FACT: "fact",
    CAUSAL: "causal",
    CONCEPT: "concept",
    MEMORY: "memory",
}

_MEMORY_MATCH: Final = " OR ".join(f"n:{label}" for label in MEMORY_LABELS)


def _too_big(ns: str, count: int, max_nodes: int) -> InvalidInput:
    return InvalidInput(
        f"graph {ns!r} has {count:,} nodes, more than the {max_nodes:,} the analysis tools "
        "load at once; analyse a part of it with subgraph, or raise max_nodes."
    )


async def fetch_graph(
    store: FalkorStore, ns: str, kind: GraphKindName, *, max_nodes: int = DEFAULT_MAX_NODES
) -> GraphData:
    """The whole graph `ns` as `GraphData` (named `ns`).

    Raises:
        InvalidInput: the graph has more than `max_nodes` nodes.
    """
    if kind == "scratch":
        return await _fetch_scratch(store, ns, max_nodes)
    return await _fetch_memory(store, ns, max_nodes)


async def _fetch_scratch(store: FalkorStore, ns: str, max_nodes: int) -> GraphData:
    count = int(
        (await store.query(ns, f"MATCH (n:{SCRATCH}) RETURN count(n)", read_only=True)).scalar(0)
    )
    if count > max_nodes:
        raise _too_big(ns, count, max_nodes)
    nodes = await store.query(
        ns,
        f"MATCH (n:{SCRATCH}) RETURN id(n), n.name, n.node_type, n.properties",
        read_only=True,
    )
    edges = await store.query(
        ns,
        f"MATCH (a:{SCRATCH})-[r:{R_SCRATCH}]->(b:{SCRATCH}) "
        "RETURN id(a), id(b), r.relation, r.properties, r.weight",
        read_only=True,
    )
    graph = GraphData(name=ns)
    names: dict[int, str] = {}
    for internal, name, node_type, raw in nodes.rows:
        names[int(internal)] = str(name)
        graph.nodes.append(
            NodeData(
                str(name),
                str(name),
                str(node_type) if node_type is not None else None,
                load_properties(raw),
            )
        )
    for a, b, relation, raw, weight in edges.rows:
        graph.edges.append(
            EdgeData(
                names[int(a)],
                names[int(b)],
                str(relation),
                load_properties(raw),
                float(weight) if isinstance(weight, int | float) else None,
            )
        )
    return graph


async def _fetch_memory(store: FalkorStore, ns: str, max_nodes: int) -> GraphData:
    count = int(
        (
            await store.query(
                ns, f"MATCH (n) WHERE {_MEMORY_MATCH} RETURN count(n)", read_only=True
            )
        ).scalar(0)
    )
    if count > max_nodes:
        raise _too_big(ns, count, max_nodes)
    nodes = await store.query(
        ns,
        f"MATCH (n) WHERE {_MEMORY_MATCH} "
        "RETURN id(n), n.uuid, labels(n), "
        "substring(coalesce(n.name, n.description, "
        "n.subject + ' ' + n.predicate + ' ' + n.object, n.content, ''), 0, $chars), "
        "coalesce(n.entity_type, n.node_type, n.category)",
        {"chars": MEMORY_NAME_CHARS},
        read_only=True,
    )
    edges = await store.query(
        ns,
        f"MATCH (n)-[r]->(m) WHERE ({_MEMORY_MATCH}) "
        f"AND ({_MEMORY_MATCH.replace('n:', 'm:')}) "
        "RETURN id(n), id(m), type(r), r.relationship_type, coalesce(r.confidence, r.score)",
        read_only=True,
    )
    graph = GraphData(name=ns)
    ids: dict[int, str] = {}
    for internal, node_uuid, labels, name, node_type in nodes.rows:
        label = _memory_label(labels)
        node_id = str(node_uuid) if node_uuid else f"node-{internal}"
        ids[int(internal)] = node_id
        graph.nodes.append(
            NodeData(
                node_id,
                str(name) or node_id,
                str(node_type) if node_type else _DEFAULT_TYPE.get(label, label),
                {"label": label, "uuid": node_id},
            )
        )
    for a, b, rel_type, relationship, weight in edges.rows:
        relation = str(relationship) if rel_type == R_RELATES and relationship else str(rel_type)
        graph.edges.append(
            EdgeData(
                ids[int(a)],
                ids[int(b)],
                relation,
                {},
                float(weight) if isinstance(weight, int | float) else None,
            )
        )
    return graph


def _memory_label(labels: Any) -> str:
    for label in cast(list[Any], labels) if isinstance(labels, list) else []:
        if label in MEMORY_LABELS:
            return str(label)
    return "unknown"
