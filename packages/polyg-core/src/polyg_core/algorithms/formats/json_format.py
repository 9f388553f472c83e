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
    errors: list[LineError] = []
    node_list = _list_of("nodes", doc.get("nodes", []), errors)
    edge_list = _list_of("edges", doc.get("edges", doc.get("links", [])), errors)
    if len(node_list) > limits.max_nodes or len(edge_list) > limits.max_edges:
        raise InvalidInput(
            f"The json input has {len(node_list):,} nodes and {len(edge_list):,} edges, over "
            f"the limits ({limits.max_nodes:,} / {limits.max_edges:,}); split it."
        )
    if isinstance(doc.get("name"), str):
        builder.graph.name = doc["name"]
    by_name: dict[str, str] = {}
    for i, raw in enumerate(node_list):
        error = _add_node(builder, raw, by_name)
        if error:
            errors.append(LineError(0, f"nodes[{i}]: {error}"))
    for i, raw in enumerate(edge_list):
        error = _add_edge(builder, raw, by_name)
        if error:
            errors.append(LineError(0, f"edges[{i}]: {error}"))
    return ParseResult(builder.graph, errors)


def _list_of(key: str, value: Any, errors: list[LineError]) -> list[Any]:
    if isinstance(value, list):
        return cast("list[Any]", value)
    errors.append(LineError(0, f"'{key}' must be a list"))
    return []


def _add_node(builder: GraphBuilder, raw: Any, by_name: dict[str, str]) -> str | None:
    """Add one node; the reason when it is skipped."""
    if not isinstance(raw, dict):
        return "expected an object"
    item = cast("dict[str, Any]", raw)
    name = _as_id(item.get("label")) or _as_id(item.get("name"))
    node_id = _as_id(item.get("id")) or name
    node_type = item.get("type")
    props = _properties(item, _NODE_KEYS)
    if node_id is None:
        return "needs a non-empty 'label' (or 'id')"
    if node_type is not None and not isinstance(node_type, str):
        return "'type' must be a string"
    if isinstance(props, str):
        return props
    builder.node(node_id, name or node_id, node_type, props)
    by_name.setdefault(name or node_id, node_id)
    return None


def _add_edge(builder: GraphBuilder, raw: Any, by_name: dict[str, str]) -> str | None:
    """Add one edge, its ends named by id or label; the reason when it is skipped."""
    if not isinstance(raw, dict):
        return "expected an object"
    item = cast("dict[str, Any]", raw)
    first, second = _as_id(item.get("source")), _as_id(item.get("target"))
    relation = item.get("relation", item.get("label", item.get("type")))
    props = _properties(item, _EDGE_KEYS)
    weight = item.get("weight")
    if first is None or second is None:
        return "needs 'source' and 'target' node labels"
    if relation is not None and not isinstance(relation, str):
        return "'relation' must be a string"
    if isinstance(props, str):
        return props
    if weight is not None and to_float(weight) is None:
        return "'weight' must be a number"
    source, target = (e if builder.has_node(e) else by_name.get(e, e) for e in (first, second))
    builder.edge(source, target, relation, props, to_float(weight))
    return None


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
