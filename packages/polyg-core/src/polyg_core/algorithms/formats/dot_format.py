"""GraphViz DOT, parsed with pydot's grammar.

Read: node `label` -> name, `type` -> type, other attributes -> properties;
edge `relation` (else `label`) -> relation, numeric `weight` -> weight, other
attributes -> properties. Ports (`a:p1`) are dropped, edges to subgraphs
(`a -> {b c}`) go to each node in them, `node`/`edge`/`graph` default
statements are ignored. An undirected `graph` gives two directed edges per
`--` edge (a warning says so).

Write: ids, names, types, relations and weights come back as they were;
other property values come back as strings (DOT attributes are text).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from polyg_core.algorithms.formats.base import (
    GraphBuilder,
    Limits,
    LineError,
    ParseResult,
    text_value,
    to_float,
)
from polyg_core.algorithms.model import GraphData

if TYPE_CHECKING:
    from pydot.core import Dot, Edge, Node, Subgraph

# pydot's pyparsing grammar keeps state while parsing and is not thread-safe.
_PARSER_LOCK = threading.Lock()
_DEFAULTS = {"node", "edge", "graph"}


def unquote(raw: str) -> str:
    """A DOT id or attribute value as plain text (quotes removed, escapes resolved)."""
    if len(raw) >= 2 and raw[0] == '"' and raw[-1] == '"':
        out: list[str] = []
        i, body = 0, raw[1:-1]
        while i < len(body):
            char = body[i]
            if char == "\\" and i + 1 < len(body):
                nxt = body[i + 1]
                mapped = {"\\": "\\", '"': '"', "n": "\n", "r": "\r"}.get(nxt)
                if mapped is not None:
                    out.append(mapped)
                    i += 2
                    continue
                # Other escapes (\l, \N, ...) are GraphViz label codes; keep them.
            if char == "\\" and body[i + 1 : i + 2] == "\n":
                i += 2  # line continuation
                continue
            out.append(char)
            i += 1
        return "".join(out)
    return raw


def quote(text: str) -> str:
    """`text` as a quoted DOT id (inverse of `unquote`)."""
    escaped = (
        text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    )
    return f'"{escaped}"'


def _node_id(raw: str) -> str:
    # Unquoted ids may carry a port (`a:p1`); quoted ones are taken whole.
    if not raw.startswith('"') and ":" in raw:
        raw = raw.split(":", 1)[0]
    return unquote(raw)


def _endpoints(raw: object) -> list[str] | None:
    if isinstance(raw, str):
        return [_node_id(raw)]
    if isinstance(raw, Mapping):
        nodes = cast("Mapping[str, Any]", raw).get("nodes")
        if isinstance(nodes, Mapping):
            return [_node_id(str(name)) for name in cast("Mapping[str, Any]", nodes)]
    return None


def _attributes(raw: Mapping[str, Any]) -> dict[str, str]:
    return {unquote(str(k)): unquote(str(v)) for k, v in raw.items() if v is not None}


class _Reader:
    def __init__(self, builder: GraphBuilder, directed: bool) -> None:
        self.builder = builder
        self.directed = directed
        self.errors: list[LineError] = []

    def walk(self, graph: Dot | Subgraph) -> None:
        for node in graph.get_nodes():
            self.add_node(node)
        for edge in graph.get_edges():
            self.add_edge(edge)
        for sub in graph.get_subgraphs():
            self.walk(sub)

    def add_node(self, node: Node) -> None:
        raw = node.get_name()
        if raw in _DEFAULTS:
            return
        attrs = _attributes(node.get_attributes())
        name, node_type = attrs.pop("label", None), attrs.pop("type", None)
        self.builder.node(_node_id(raw), name, node_type, attrs)

    def add_edge(self, edge: Edge) -> None:
        sources, targets = _endpoints(edge.get_source()), _endpoints(edge.get_destination())
        if sources is None or targets is None:
            self.errors.append(LineError(0, f"edge endpoint not understood: {edge.to_string()}"))
            return
        attrs = _attributes(edge.get_attributes())
        relation = attrs.pop("relation", None)
        if relation is None:
            relation = attrs.pop("label", None)
        weight = to_float(attrs.get("weight"))
        if weight is not None:
            del attrs["weight"]
        for source in sources:
            for target in targets:
                self.builder.edge(source, target, relation, dict(attrs), weight)
                if not self.directed:
                    self.builder.edge(target, source, relation, dict(attrs), weight)


def parse_dot(text: str, limits: Limits) -> ParseResult:
    """Parse DOT; a syntax error is one `LineError` with line and column."""
    # pydot's grammar takes a third of a second to build: only when DOT is read.
    from pydot.core import Dot
    from pydot.dot_parser import GraphParser
    from pyparsing import ParseBaseException

    builder = GraphBuilder("dot", limits)
    try:
        with _PARSER_LOCK:
            # pyparsing leaves parse_string's **kwargs unannotated.
            parsed = GraphParser.parser.parse_string(text, parse_all=True)  # pyright: ignore[reportUnknownMemberType]
            graphs: list[object] = list(parsed)
    except ParseBaseException as exc:
        return ParseResult(builder.graph, [LineError(exc.lineno, exc.msg, exc.col)])
    except RecursionError:
        return ParseResult(builder.graph, [LineError(0, "DOT nested too deeply")])
    dots = [g for g in graphs if isinstance(g, Dot)]
    if not dots:
        return ParseResult(
            builder.graph, [LineError(0, "no digraph { ... } or graph { ... } found")]
        )
    dot = dots[0]
    warnings: list[str] = []
    if len(dots) > 1:
        warnings.append(f"the input holds {len(dots)} graphs; only the first was read")
    name = unquote(dot.get_name() or "")
    builder.graph.name = name or None
    directed = dot.get_type() == "digraph"
    if not directed:
        warnings.append("undirected graph: each -- edge became two directed edges")
    reader = _Reader(builder, directed)
    reader.walk(dot)
    return ParseResult(builder.graph, reader.errors, warnings)


def _attr_list(attrs: dict[str, Any]) -> str:
    if not attrs:
        return ""
    return " [" + ", ".join(f"{quote(k)}={quote(text_value(v))}" for k, v in attrs.items()) + "]"


def dump_dot(g: GraphData) -> str:
    """Write a graph as a DOT digraph (every id and value quoted and escaped)."""
    lines = [f"digraph {quote(g.name)} {{" if g.name else "digraph {"]
    for node in g.nodes:
        attrs: dict[str, Any] = {**node.properties, "label": node.name}
        if node.type is not None:
            attrs["type"] = node.type
        lines.append(f"  {quote(node.id)}{_attr_list(attrs)};")
    for edge in g.edges:
        attrs = {**edge.properties, "label": edge.relation}
        if edge.weight is not None:
            attrs["weight"] = edge.weight
        lines.append(f"  {quote(edge.source)} -> {quote(edge.target)}{_attr_list(attrs)};")
    lines.append("}")
    return "\n".join(lines) + "\n"
