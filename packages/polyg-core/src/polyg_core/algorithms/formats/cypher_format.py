"""Cypher `CREATE` scripts that rebuild a graph, and a reader for that dialect only.

Written (one statement per line, every string an escaped literal)::

    CREATE (n0:G_Node {id: 'a', name: 'A', type: 'service', properties: '{"k": 1}'})
    CREATE (n0)-[:G_EDGE {relation: 'calls', weight: 1.5, properties: '{}'}]->(n1)

Properties are one JSON string, as polyg stores them in FalkorDB, so the
format is lossless for JSON values. The reader accepts exactly this grammar
(plus `//` comments, a trailing `;`, `<-[..]-`, other labels as the node
type, other relationship types as the relation, and extra map keys as
properties); it is parsed into `GraphData` and never executed anywhere.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, cast

from polyg_core.algorithms.formats.base import (
    GraphBuilder,
    Limits,
    LineError,
    ParseResult,
    to_float,
)
from polyg_core.algorithms.model import GraphData

NODE_LABEL = "G_Node"
EDGE_TYPE = "G_EDGE"
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"-?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)")
_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f"}
_NODE_KEYS = {"id", "name", "type", "properties"}
_EDGE_KEYS = {"relation", "weight", "properties"}


class _Syntax(Exception):
    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.column = pos + 1


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text, self.pos = text, 0

    def ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self, token: str) -> bool:
        self.ws()
        return self.text.startswith(token, self.pos)

    def take(self, token: str) -> bool:
        if self.peek(token):
            self.pos += len(token)
            return True
        return False

    def expect(self, token: str) -> None:
        if not self.take(token):
            found = self.text[self.pos : self.pos + 15] or "end of line"
            raise _Syntax(f"expected {token!r}, found {found!r}", self.pos)

    def ident(self) -> str:
        self.ws()
        if self.take("`"):
            end = self.text.find("`", self.pos)
            while end >= 0 and self.text.startswith("``", end):
                end = self.text.find("`", end + 2)
            if end < 0:
                raise _Syntax("unclosed `name`", self.pos)
            name = self.text[self.pos : end].replace("``", "`")
            self.pos = end + 1
            return name
        match = _IDENT.match(self.text, self.pos)
        if match is None:
            raise _Syntax(f"expected a name at {self.text[self.pos : self.pos + 15]!r}", self.pos)
        self.pos = match.end()
        return match.group(0)

    def string(self) -> str:
        quote = self.text[self.pos]
        self.pos += 1
        out: list[str] = []
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char == quote:
                self.pos += 1
                try:  # \uXXXX pairs written for characters beyond the BMP
                    return "".join(out).encode("utf-16-le", "surrogatepass").decode("utf-16-le")
                except UnicodeDecodeError:
                    raise _Syntax("unpaired \\u surrogate in a string", self.pos) from None
            if char == "\\":
                nxt = self.text[self.pos + 1 : self.pos + 2]
                if nxt == "u" and re.fullmatch(
                    r"[0-9a-fA-F]{4}", self.text[self.pos + 2 : self.pos + 6]
                ):
                    out.append(chr(int(self.text[self.pos + 2 : self.pos + 6], 16)))
                    self.pos += 6
                    continue
                if nxt not in _ESCAPES:
                    raise _Syntax(f"unknown escape \\{nxt} in a string", self.pos)
                out.append(_ESCAPES[nxt])
                self.pos += 2
                continue
            out.append(char)
            self.pos += 1
        raise _Syntax("unclosed string literal", self.pos)

    def value(self) -> Any:
        self.ws()
        if self.pos < len(self.text) and self.text[self.pos] in "'\"":
            return self.string()
        if self.take("["):
            items: list[Any] = []
            if not self.take("]"):
                items.append(self.value())
                while self.take(","):
                    items.append(self.value())
                self.expect("]")
            return items
        for word, result in (("true", True), ("false", False), ("null", None)):
            if self.text[self.pos : self.pos + len(word)].lower() == word:
                self.pos += len(word)
                return result
        match = _NUMBER.match(self.text, self.pos)
        if match is None:
            raise _Syntax(f"expected a value at {self.text[self.pos : self.pos + 15]!r}", self.pos)
        self.pos = match.end()
        raw = match.group(0)
        return float(raw) if any(c in raw for c in ".eE") else int(raw)

    def mapping(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if not self.take("{"):
            return out
        if self.take("}"):
            return out
        while True:
            key = self.ident()
            self.expect(":")
            out[key] = self.value()
            if self.take("}"):
                return out
            self.expect(",")


def _properties(values: dict[str, Any], known: set[str]) -> dict[str, Any]:
    raw = values.get("properties")
    props: dict[str, Any] = {}
    if isinstance(raw, str) and raw:
        try:
            loaded = json.loads(raw)
        except ValueError as exc:
            raise _Syntax(f"'properties' is not valid JSON: {exc}", 0) from None
        if not isinstance(loaded, dict):
            raise _Syntax("'properties' must hold a JSON object", 0)
        props.update(cast("dict[str, Any]", loaded))
    props.update({k: v for k, v in values.items() if k not in known})
    return props


def _statement(line: str, builder: GraphBuilder, variables: dict[str, str]) -> None:
    scan = _Scanner(line)
    if scan.ident().upper() != "CREATE":
        raise _Syntax("only CREATE statements are read", 0)
    scan.expect("(")
    var = scan.ident()
    scan.ws()
    rest = line[scan.pos :]
    if rest.startswith(")") and rest[1:].lstrip().startswith(("-", "<")):
        _edge(scan, var, builder, variables)
    else:
        _node(scan, var, builder, variables)


def _edge(scan: _Scanner, var: str, builder: GraphBuilder, variables: dict[str, str]) -> None:
    """`CREATE (a)-[:TYPE {...}]->(b)` (or `<-`), read after `(a`."""
    if var not in variables:
        raise _Syntax(f"unknown node variable {var!r}; create the node first", scan.pos)
    scan.expect(")")
    reverse = scan.take("<-[")
    if not reverse:
        scan.expect("-[")
    if not scan.peek(":"):
        scan.ident()  # relationship variable, unused
    scan.expect(":")
    rel_type = scan.ident()
    values = scan.mapping()
    scan.expect("]-" if reverse else "]->")
    scan.expect("(")
    other = scan.ident()
    scan.expect(")")
    if other not in variables:
        raise _Syntax(f"unknown node variable {other!r}; create the node first", scan.pos)
    source, target = (
        (variables[other], variables[var]) if reverse else (variables[var], variables[other])
    )
    relation = values.get("relation", None if rel_type == EDGE_TYPE else rel_type)
    weight = values.get("weight")
    if weight is not None and to_float(weight) is None:
        raise _Syntax(f"weight {weight!r} is not a number", 0)
    _end(scan)
    builder.edge(
        source,
        target,
        str(relation) if relation is not None else None,
        _properties(values, _EDGE_KEYS),
        to_float(weight),
    )


def _node(scan: _Scanner, var: str, builder: GraphBuilder, variables: dict[str, str]) -> None:
    """`CREATE (n:Label {...})`, read after `(n`."""
    labels: list[str] = []
    while scan.take(":"):
        labels.append(scan.ident())
    values = scan.mapping()
    scan.expect(")")
    other_labels = [label for label in labels if label not in (NODE_LABEL, "Node")]
    node_id = values.get("id", values.get("name", var))
    name = values.get("name")
    node_type = values.get("type", other_labels[0] if other_labels else None)
    _end(scan)
    builder.node(
        str(node_id),
        str(name) if name is not None else None,
        str(node_type) if node_type is not None else None,
        _properties(values, _NODE_KEYS),
    )
    variables[var] = str(node_id)


def _end(scan: _Scanner) -> None:
    scan.ws()
    if scan.pos != len(scan.text):
        raise _Syntax(f"unexpected text {scan.text[scan.pos : scan.pos + 15]!r}", scan.pos)


def parse_cypher(text: str, limits: Limits) -> ParseResult:
    """Parse the CREATE dialect `dump_cypher` writes; bad lines are reported and skipped."""
    builder = GraphBuilder("cypher", limits)
    errors: list[LineError] = []
    variables: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("//"):
            continue
        line = line.rstrip(";").rstrip()
        try:
            _statement(line, builder, variables)
        except _Syntax as exc:
            errors.append(LineError(number, str(exc), exc.column))
    return ParseResult(builder.graph, errors)


def literal(value: Any) -> str:
    """A Cypher literal for a string, number, boolean, None or list of them."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("Cypher has no literal for NaN or infinity")
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in cast("list[Any]", value)) + "]"
    return "'" + "".join(_escaped(char) for char in str(value)) + "'"


_CHAR_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped(char: str) -> str:
    """One character of a string literal: escaped, as \\u units when it is unprintable or
    would break the line (`str.splitlines` breaks at U+2028, U+2029 and U+0085)."""
    if char in _CHAR_ESCAPES:
        return _CHAR_ESCAPES[char]
    if not char.isprintable() or char in "\u2028\u2029\x85":
        return "".join(f"\\u{unit:04x}" for unit in _utf16(char))
    return char


def _utf16(char: str) -> list[int]:
    data = char.encode("utf-16-be")
    return [int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2)]


def _props_json(properties: dict[str, Any]) -> str:
    return json.dumps(properties, ensure_ascii=False, sort_keys=True, default=str)


def dump_cypher(g: GraphData) -> str:
    """Write CREATE statements (one per line) that rebuild the graph."""
    var = {node.id: f"n{i}" for i, node in enumerate(g.nodes)}
    lines = [f"// {len(g.nodes)} nodes, {len(g.edges)} edges"]
    for node in g.nodes:
        fields = [f"id: {literal(node.id)}", f"name: {literal(node.name)}"]
        if node.type is not None:
            fields.append(f"type: {literal(node.type)}")
        fields.append(f"properties: {literal(_props_json(node.properties))}")
        lines.append(f"CREATE ({var[node.id]}:{NODE_LABEL} {{{', '.join(fields)}}})")
    for edge in g.edges:
        fields = [f"relation: {literal(edge.relation)}"]
        if edge.weight is not None:
            fields.append(f"weight: {literal(edge.weight)}")
        fields.append(f"properties: {literal(_props_json(edge.properties))}")
        lines.append(
            f"CREATE ({var[edge.source]})-[:{EDGE_TYPE} {{{', '.join(fields)}}}]->"
            f"({var[edge.target]})"
        )
    return "\n".join(lines) + "\n"
