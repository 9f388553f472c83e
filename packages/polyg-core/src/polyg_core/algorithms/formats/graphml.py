"""GraphML, read with defusedxml (any DTD, entity or external reference is refused).

Read: `<key attr.name=... attr.type=...>` declarations type the `<data>`
values (boolean, int, long, float, double, string; key defaults apply);
node data `label`/`name` -> name, `type` -> type; edge data `relation`/
`label` -> relation, `weight` -> weight; the rest -> properties. Nodes and
edges of nested graphs are read too; an undirected edge (edgedefault or
`directed="false"`) gives two directed edges.

Write: lossless for str, int, float and bool values as long as one property
name keeps one type across nodes (mixed int/float becomes double, other
mixes become strings); lists and objects are written as JSON text and come
back as strings. Characters XML cannot hold (control characters other than
tab, newline, carriage return) are replaced by U+FFFD.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from xml.etree.ElementTree import Element, ParseError
from xml.sax.saxutils import escape, quoteattr

import defusedxml
import defusedxml.ElementTree as SafeET

from polyg_core.algorithms.formats.base import GraphBuilder, Limits, LineError, ParseResult
from polyg_core.algorithms.model import GraphData
from polyg_core.errors import InvalidInput

_NS = "http://graphml.graphdrawing.org/xmlns"
_NODE_RESERVED = {"label": "name", "name": "name", "type": "type"}
_EDGE_RESERVED = {"relation": "relation", "label": "relation", "weight": "weight"}
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _convert(raw: str, kind: str) -> Any:
    kind = kind.lower()
    if kind == "boolean":
        lowered = raw.strip().lower()
        if lowered in ("true", "1"):
            return True
        if lowered in ("false", "0"):
            return False
        raise ValueError(f"{raw!r} is not a boolean")
    if kind in ("int", "long"):
        return int(raw.strip())
    if kind in ("float", "double"):
        return float(raw.strip())
    return raw


class _Key:
    def __init__(self, name: str, kind: str, default: str | None) -> None:
        self.name, self.kind, self.default = name, kind, default


def _read_data(
    element: Element, keys: dict[str, _Key], domain: dict[str, _Key], errors: list[LineError]
) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for key in domain.values():
        if key.default is not None:
            values[key.name] = key.default, key.kind
    for child in element:
        if _local(child.tag) != "data":
            continue
        key_id = child.get("key", "")
        key = keys.get(key_id)
        if key is None:
            errors.append(LineError(0, f"<data key={key_id!r}> has no matching <key> declaration"))
            continue
        values[key.name] = "".join(child.itertext()), key.kind
    out: dict[str, Any] = {}
    for name, (raw, kind) in values.items():
        try:
            out[name] = _convert(raw, kind)
        except ValueError:
            errors.append(
                LineError(0, f"value {raw!r} of {name!r} is not a valid {kind}; kept as text")
            )
            out[name] = raw
    return out


def parse_graphml(text: str, limits: Limits) -> ParseResult:
    """Parse GraphML; a syntax error is one `LineError` with line and column.

    Raises:
        InvalidInput: the document has a DTD, entity declarations or external
            references (refused to rule out entity-expansion and XXE attacks).
    """
    builder = GraphBuilder("graphml", limits)
    try:
        root = SafeET.fromstring(text, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except defusedxml.DefusedXmlException as exc:
        raise InvalidInput(
            f"GraphML refused: {exc}. DTDs, entity declarations and external references are "
            "not allowed (they enable entity-expansion and external-entity attacks); remove "
            "the <!DOCTYPE ...> block and import again."
        ) from None
    except ParseError as exc:
        line, column = getattr(exc, "position", (0, 0))
        return ParseResult(builder.graph, [LineError(line, f"XML syntax error: {exc}", column)])
    keys = _read_keys(root)
    graph = next((e for e in root.iter() if _local(e.tag) == "graph"), None)
    if graph is None:
        return ParseResult(builder.graph, [LineError(0, "no <graph> element found")])
    builder.graph.name = graph.get("id") or None
    errors: list[LineError] = []
    default_directed = graph.get("edgedefault", "directed") != "undirected"
    warned_undirected = False
    for element in graph.iter():
        tag = _local(element.tag)
        if tag == "node":
            _read_node(element, keys, builder, errors)
        elif tag == "edge":
            warned_undirected |= _read_edge(element, keys, default_directed, builder, errors)
    warnings = ["undirected edges became two directed edges"] if warned_undirected else []
    return ParseResult(builder.graph, errors, warnings)


@dataclass
class _Keys:
    """The document's <key> declarations: all of them, and those that apply to nodes and edges."""

    all: dict[str, _Key] = field(default_factory=dict[str, _Key])
    node: dict[str, _Key] = field(default_factory=dict[str, _Key])
    edge: dict[str, _Key] = field(default_factory=dict[str, _Key])


def _read_keys(root: Element) -> _Keys:
    keys = _Keys()
    for element in root.iter():
        if _local(element.tag) != "key":
            continue
        default = next((c for c in element if _local(c.tag) == "default"), None)
        key = _Key(
            element.get("attr.name") or element.get("id", ""),
            element.get("attr.type", "string"),
            "".join(default.itertext()) if default is not None else None,
        )
        key_id = element.get("id", "")
        keys.all[key_id] = key
        target = element.get("for", "all")
        if target in ("node", "all"):
            keys.node[key_id] = key
        if target in ("edge", "all"):
            keys.edge[key_id] = key
    return keys


def _read_node(
    element: Element, keys: _Keys, builder: GraphBuilder, errors: list[LineError]
) -> None:
    node_id = element.get("id")
    if not node_id:
        errors.append(LineError(0, "<node> without an id attribute skipped"))
        return
    data = _read_data(element, keys.all, keys.node, errors)
    fields = {v: data.pop(k) for k, v in _NODE_RESERVED.items() if k in data}
    name, node_type = fields.get("name"), fields.get("type")
    builder.node(
        node_id,
        str(name) if name is not None else None,
        str(node_type) if node_type is not None else None,
        data,
    )


def _read_edge(
    element: Element,
    keys: _Keys,
    default_directed: bool,
    builder: GraphBuilder,
    errors: list[LineError],
) -> bool:
    """Add the edge (both ways when undirected); True when it was undirected."""
    source, target = element.get("source"), element.get("target")
    if not source or not target:
        errors.append(LineError(0, "<edge> without source and target skipped"))
        return False
    data = _read_data(element, keys.all, keys.edge, errors)
    fields = {v: data.pop(k) for k, v in _EDGE_RESERVED.items() if k in data}
    relation = fields.get("relation")
    weight = fields.get("weight")
    if weight is not None and not isinstance(weight, int | float):
        data["weight"], weight = weight, None
    directed = element.get("directed")
    is_directed = default_directed if directed is None else directed != "false"
    rel = str(relation) if relation is not None else None
    w = float(weight) if weight is not None else None
    builder.edge(source, target, rel, data, w)
    if not is_directed:
        builder.edge(target, source, rel, dict(data), w)
    return not is_directed


def _clean(text: str) -> str:
    return _INVALID_XML.sub("\ufffd", text)


def _text(text: str) -> str:
    # A bare \r in element text would be normalised to \n by any XML parser.
    return escape(_clean(text), {"\r": "&#13;"})


def _kind(values: list[Any]) -> str:
    if all(isinstance(v, bool) for v in values):
        return "boolean"
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return "long"
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return "double"
    return "string"


def _serial(value: Any, kind: str) -> str:
    if kind == "boolean":
        return "true" if value else "false"
    if kind in ("long", "double"):
        return repr(float(value)) if kind == "double" else str(value)
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _property_values(
    properties: Iterable[dict[str, Any]], reserved: Mapping[str, str]
) -> dict[str, list[Any]]:
    """Every non-null value of each property name, reserved names left out."""
    values: dict[str, list[Any]] = {}
    for props in properties:
        for k, v in props.items():
            if v is not None and k not in reserved:
                values.setdefault(k, []).append(v)
    return values


def _declare_keys(
    domain: str, values: dict[str, list[Any]], lines: list[str]
) -> dict[str, tuple[str, str]]:
    """Append a typed <key> per property name; each name's (key id, kind)."""
    ids: dict[str, tuple[str, str]] = {}
    for i, (name, seen) in enumerate(values.items()):
        kind = _kind(seen)
        ids[name] = (f"{domain[0]}{i}", kind)
        lines.append(
            f"  <key id={quoteattr(ids[name][0])} for={quoteattr(domain)} "
            f"attr.name={quoteattr(_clean(name))} attr.type={quoteattr(kind)}/>"
        )
    return ids


def _data_lines(properties: dict[str, Any], keys: dict[str, tuple[str, str]]) -> list[str]:
    lines: list[str] = []
    for k, v in properties.items():
        if k in keys and v is not None:
            key_id, kind = keys[k]
            lines.append(f'      <data key="{key_id}">{_text(_serial(v, kind))}</data>')
    return lines


def dump_graphml(g: GraphData) -> str:
    """Write a graph as GraphML with typed `<key>` declarations and escaped text."""
    node_values = _property_values((n.properties for n in g.nodes), _NODE_RESERVED)
    edge_values = _property_values((e.properties for e in g.edges), _EDGE_RESERVED)
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<graphml xmlns="{_NS}">',
        '  <key id="n_label" for="node" attr.name="label" attr.type="string"/>',
        '  <key id="n_type" for="node" attr.name="type" attr.type="string"/>',
        '  <key id="e_relation" for="edge" attr.name="relation" attr.type="string"/>',
        '  <key id="e_weight" for="edge" attr.name="weight" attr.type="double"/>',
    ]
    node_key = _declare_keys("node", node_values, lines)
    edge_key = _declare_keys("edge", edge_values, lines)
    graph_id = f" id={quoteattr(_clean(g.name))}" if g.name else ""
    lines.append(f'  <graph{graph_id} edgedefault="directed">')
    for node in g.nodes:
        lines.append(f"    <node id={quoteattr(_clean(node.id))}>")
        lines.append(f'      <data key="n_label">{_text(node.name)}</data>')
        if node.type is not None:
            lines.append(f'      <data key="n_type">{_text(node.type)}</data>')
        lines += _data_lines(node.properties, node_key)
        lines.append("    </node>")
    for edge in g.edges:
        lines.append(
            f"    <edge source={quoteattr(_clean(edge.source))} "
            f"target={quoteattr(_clean(edge.target))}>"
        )
        lines.append(f'      <data key="e_relation">{_text(edge.relation)}</data>')
        if edge.weight is not None:
            lines.append(f'      <data key="e_weight">{edge.weight!r}</data>')
        lines += _data_lines(edge.properties, edge_key)
        lines.append("    </edge>")
    lines += ["  </graph>", "</graphml>"]
    return "\n".join(lines) + "\n"
