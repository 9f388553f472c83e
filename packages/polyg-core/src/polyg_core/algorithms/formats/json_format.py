"""JSON graphs as in seed 002 §7: `{"nodes": [{label, type, properties}], "edges": [{source, target, relation, properties}]}`.

Lossless for JSON values. Nodes may also be given as `{"id", "name"}`;
edges name their endpoints by node id or label; keys outside the known ones
are kept as properties.
"""

from __future__ import annotations

import json
from typing import Any, cast

from polyg_core.algorithms.formats.base import (
    GraphBuilder,
    Limits,
    LineError,
    ParseResult,
    to_float,
)
from polyg_core.algorithms.model import GraphData
from polyg_core.errors import InvalidInput

_NODE_KEYS = {"id", "label", "name", "type", "properties"}
_EDGE_KEYS = {"source", "target", "relation", "label", "type", "properties", "weight"}


def _as_id(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def _properties(item: dict[str, Any], known: set[str]) -> dict[str, Any] | str:
    raw = item.get("properties", {})
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        return "'properties' must be an object"
    props = dict(cast("dict[str, Any]", raw))
    props.update({k: v for k, v in item.items() if k not in known})
    return props


def parse_json(text: str, limits: Limits) -> ParseResult:
    """Parse a JSON graph; a syntax error is one `LineError` with its position."""
    builder = GraphBuilder("json", limits)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return ParseResult(builder.graph, [LineError(exc.lineno, exc.msg, exc.colno)])
    except RecursionError:
        return ParseResult(builder.graph, [LineError(0, "JSON nested too deeply")])
    if not isinstance(data, dict):
        return ParseResult(
            builder.graph,
            [LineError(0, 'expected an object {"nodes": [...], "edges": [...]}')],
        )
    doc = cast("dict[str, Any]", data)
    nodes, edges = doc.get("nodes", []), doc.get("edges", doc.get("links", []))
    errors: list[LineError] = []
    if not isinstance(nodes, list):
        errors.append(LineError(0, "'nodes' must be a list"))
        nodes = []
    if not isinstance(edges, list):
        errors.append(LineError(0, "'edges' must be a list"))
        edges = []
    node_list, edge_list = cast("list[Any]", nodes), cast("list[Any]", edges)
    if len(node_list) > limits.max_nodes or len(edge_list) > limits.max_edges:
        raise InvalidInput(
            f"The json input has {len(node_list):,} nodes and {len(edge_list):,} edges, over "
            f"the limits ({limits.max_nodes:,} / {limits.max_edges:,}); split it."
        )
    if isinstance(doc.get("name"), str):
        builder.graph.name = doc["name"]
    by_name: dict[str, str] = {}
    for i, raw in enumerate(node_list):
        if not isinstance(raw, dict):
            errors.append(LineError(0, f"nodes[{i}]: expected an object"))
            continue
        item = cast("dict[str, Any]", raw)
        name = _as_id(item.get("label")) or _as_id(item.get("name"))
        node_id = _as_id(item.get("id")) or name
        node_type = item.get("type")
        props = _properties(item, _NODE_KEYS)
        if node_id is None:
            errors.append(LineError(0, f"nodes[{i}]: needs a non-empty 'label' (or 'id')"))
        elif node_type is not None and not isinstance(node_type, str):
            errors.append(LineError(0, f"nodes[{i}]: 'type' must be a string"))
        elif isinstance(props, str):
            errors.append(LineError(0, f"nodes[{i}]: {props}"))
        else:
            builder.node(node_id, name or node_id, node_type, props)
            by_name.setdefault(name or node_id, node_id)
    for i, raw in enumerate(edge_list):
        if not isinstance(raw, dict):
            errors.append(LineError(0, f"edges[{i}]: expected an object"))
            continue
        item = cast("dict[str, Any]", raw)
        ends = [_as_id(item.get("source")), _as_id(item.get("target"))]
        relation = item.get("relation", item.get("label", item.get("type")))
        props = _properties(item, _EDGE_KEYS)
        weight = item.get("weight")
        if ends[0] is None or ends[1] is None:
            errors.append(LineError(0, f"edges[{i}]: needs 'source' and 'target' node labels"))
        elif relation is not None and not isinstance(relation, str):
            errors.append(LineError(0, f"edges[{i}]: 'relation' must be a string"))
        elif isinstance(props, str):
            errors.append(LineError(0, f"edges[{i}]: {props}"))
        elif weight is not None and to_float(weight) is None:
            errors.append(LineError(0, f"edges[{i}]: 'weight' must be a number"))
        else:
            source, target = (
                e if builder.has_node(e) else by_name.get(e, e) for e in (ends[0], ends[1])
            )
            builder.edge(source, target, relation, props, to_float(weight))
    return ParseResult(builder.graph, errors)


def dump_json(g: GraphData) -> str:
    """Write a graph as seed-002 JSON (`id` only where it differs from the label)."""
    nodes: list[dict[str, Any]] = []
    for node in g.nodes:
        item: dict[str, Any] = {"label": node.name}
        if node.id != node.name:
            item = {"id": node.id, **item}
        if node.type is not None:
            item["type"] = node.type
        if node.properties:
            item["properties"] = node.properties
        nodes.append(item)
    edges: list[dict[str, Any]] = []
    for edge in g.edges:
        entry: dict[str, Any] = {
            "source": edge.source,
            "target": edge.target,
            "relation": edge.relation,
        }
        if edge.properties:
            entry["properties"] = edge.properties
        if edge.weight is not None:
            entry["weight"] = edge.weight
        edges.append(entry)
    doc: dict[str, Any] = {"nodes": nodes, "edges": edges}
    if g.name:
        doc = {"name": g.name, **doc}
    return json.dumps(doc, ensure_ascii=False, indent=2, default=str) + "\n"
