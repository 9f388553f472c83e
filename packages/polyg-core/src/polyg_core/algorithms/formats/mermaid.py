"""Mermaid flowcharts: `graph TD` / `flowchart LR` with `A[Label] -->|rel| B` edges.

Read: node shapes (`[..]`, `(..)`, `{..}`, `([..])`, `((..))`, `[[..]]`,
`{{..}}`, `>..]`, quoted or not) give the name, `:::cls` gives the type, edge
labels (`-->|rel|` or `-- rel -->`) give the relation, chains (`a --> b --> c`)
give one edge per link, `<-->` gives both directions. `classDef`, `style`,
`subgraph`/`end` and the like are skipped.

Write: lossy. Ids survive when they are plain identifiers (else `n<i>` is
used), names and relations survive (entity-encoded in quotes), types only
when they are identifiers (`:::type`); properties and weights are dropped.
"""

from __future__ import annotations

import html
import re

from polyg_core.algorithms.formats.base import GraphBuilder, Limits, LineError, ParseResult
from polyg_core.algorithms.model import GraphData

_HEADER = re.compile(r"^(graph|flowchart)(\s+(TD|TB|BT|LR|RL))?\s*;?$", re.IGNORECASE)
_SKIP = re.compile(
    r"^(%%|classDef\b|class\b|style\b|linkStyle\b|click\b|subgraph\b|end\b|direction\b)"
)
_ID = re.compile(r"[\w.]+")
_IDENT = re.compile(r"^[A-Za-z_]\w*$")
_KEYWORDS = {"end", "graph", "flowchart", "subgraph", "class", "classdef", "style", "click"}
_CLASS = re.compile(r":::([\w-]+)")
_SHAPES = (
    ("([", "])"),
    ("((", "))"),
    ("[[", "]]"),
    ("[(", ")]"),
    ("{{", "}}"),
    ("[/", "/]"),
    ("[\\", "\\]"),
    ("[", "]"),
    ("(", ")"),
    ("{", "}"),
    (">", "]"),
)
_ARROW = re.compile(r"\s*(<)?(?:-{2,}|={2,}|-\.+-)(>|o|x)?\s*(?:\|(\"[^\"]*\"|[^|]*)\|)?\s*")
_TEXT_ARROW = re.compile(r"\s*(?:--|==)\s*(\"[^\"]*\"|[^-=>|\"]+?)\s*(?:-->|==>|---)\s*")
_ENTITY = re.compile(r"#(\d+|[a-zA-Z]+);")


def _decode(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        text = text[1:-1]

    def entity(match: re.Match[str]) -> str:
        code = match.group(1)
        if code.isdigit():
            return chr(int(code)) if int(code) < 0x110000 else match.group(0)
        return html.unescape(f"&{code};")

    return _ENTITY.sub(entity, text)


def _encode(text: str) -> str:
    return "".join(
        f"#{ord(c)};" if c in '"#|<>[](){}`\\' or not c.isprintable() else c for c in text
    )


class _Syntax(Exception):
    def __init__(self, message: str, column: int) -> None:
        super().__init__(message)
        self.column = column


def _node(line: str, pos: int, builder: GraphBuilder) -> tuple[str, int]:
    match = _ID.match(line, pos)
    if match is None:
        raise _Syntax(f"expected a node id at {line[pos : pos + 20]!r}", pos + 1)
    node_id, pos = match.group(0), match.end()
    label: str | None = None
    for opener, closer in _SHAPES:
        if line.startswith(opener, pos):
            start = pos + len(opener)
            if line.startswith('"', start):
                end_quote = line.find('"', start + 1)
                end = end_quote + 1 if end_quote >= 0 else -1
                if end > 0 and not line.startswith(closer, end):
                    end = -1
            else:
                end = line.find(closer, start)
            if end < 0:
                raise _Syntax(f"unclosed {opener!r} after node {node_id!r}", pos + 1)
            label = _decode(line[start:end])
            pos = end + len(closer)
            break
    cls = _CLASS.match(line, pos)
    node_type = None
    if cls is not None:
        node_type, pos = cls.group(1), cls.end()
    builder.node(node_id, label, node_type)
    return node_id, pos


def _statement(line: str, builder: GraphBuilder) -> None:
    pos = len(line) - len(line.lstrip())
    left, pos = _node(line, pos, builder)
    while pos < len(line):
        text = _TEXT_ARROW.match(line, pos)
        arrow = None if text else _ARROW.match(line, pos)
        if text is None and arrow is None:
            raise _Syntax(f"expected an arrow such as --> at {line[pos : pos + 20]!r}", pos + 1)
        if text is not None:
            relation, both, pos = _decode(text.group(1)), False, text.end()
        else:
            assert arrow is not None
            raw = arrow.group(3)
            relation = _decode(raw) if raw is not None else None
            both, pos = arrow.group(1) is not None, arrow.end()
        right, pos = _node(line, pos, builder)
        builder.edge(left, right, relation or None)
        if both:
            builder.edge(right, left, relation or None)
        left = right
        pos += len(line[pos:]) - len(line[pos:].lstrip())


def parse_mermaid(text: str, limits: Limits) -> ParseResult:
    """Parse a Mermaid flowchart; bad lines are reported with their number and skipped."""
    builder = GraphBuilder("mermaid", limits)
    errors: list[LineError] = []
    seen_header = False
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip().rstrip(";").rstrip()
        if not line or line.startswith("%%"):
            continue
        if not seen_header:
            seen_header = True
            if _HEADER.match(line):
                continue
            errors.append(LineError(number, "expected 'graph TD' or 'flowchart LR' first"))
        if _SKIP.match(line):
            continue
        try:
            _statement(line, builder)
        except _Syntax as exc:
            errors.append(LineError(number, str(exc), exc.column))
    return ParseResult(builder.graph, errors)


def dump_mermaid(g: GraphData, direction: str = "LR") -> str:
    """Write a graph as a Mermaid flowchart (names and relations quoted and entity-encoded)."""
    ids: dict[str, str] = {}
    used: set[str] = set()
    for node in g.nodes:
        if _IDENT.match(node.id) and node.id.lower() not in _KEYWORDS and node.id not in used:
            ids[node.id] = node.id
            used.add(node.id)
    counter = 0
    taken = used | {node.id for node in g.nodes}
    for node in g.nodes:
        if node.id not in ids:
            while f"n{counter}" in taken:
                counter += 1
            ids[node.id] = f"n{counter}"
            taken.add(ids[node.id])
    lines = [f"flowchart {direction}"]
    for node in g.nodes:
        cls = f":::{node.type}" if node.type and _IDENT.match(node.type) else ""
        lines.append(f'    {ids[node.id]}["{_encode(node.name)}"]{cls}')
    for edge in g.edges:
        lines.append(f'    {ids[edge.source]} -->|"{_encode(edge.relation)}"| {ids[edge.target]}')
    return "\n".join(lines) + "\n"
