"""What every format shares: limits, the parse result, and a graph builder that enforces them."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from polyg_core.algorithms.model import DEFAULT_RELATION, EdgeData, GraphData, NodeData
from polyg_core.errors import InvalidInput

MB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """Bounds on input, checked before (bytes, line length) or while (counts) parsing.

    Attributes:
        max_bytes: largest input, in UTF-8 bytes.
        max_nodes: most nodes a parse may create.
        max_edges: most edges a parse may create.
        max_line_length: longest line, in characters, for the line-based
            formats (CSV/TSV, Mermaid, Cypher); JSON, GraphML and DOT may be
            written on one line, so only `max_bytes` bounds them.
    """

    max_bytes: int = 50 * MB
    max_nodes: int = 1_000_000
    max_edges: int = 1_000_000
    max_line_length: int = 100_000


@dataclass(frozen=True)
class LineError:
    """A part of the input that could not be used; `line` is 1-based (0: not tied to a line)."""

    line: int
    message: str
    column: int | None = None

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line else "input"
        if self.column is not None:
            where += f", column {self.column}"
        return f"{where}: {self.message}"


@dataclass
class ParseResult:
    """The graph read from an input, plus what was skipped (`errors`) or changed (`warnings`)."""

    graph: GraphData
    errors: list[LineError] = field(default_factory=lambda: [])
    warnings: list[str] = field(default_factory=lambda: [])


def check_input(text: str, fmt: str, limits: Limits, *, line_based: bool) -> None:
    """Refuse an input over the byte or line-length limit before parsing it.

    Raises:
        InvalidInput: the input is too large or has a too-long line.
    """
    # Cheap bound first: a str of n characters encodes to at most 4n bytes.
    if len(text) * 4 > limits.max_bytes and len(text.encode("utf-8")) > limits.max_bytes:
        raise InvalidInput(
            f"The {fmt} input is larger than {limits.max_bytes:,} bytes; split it into "
            "smaller imports."
        )
    if line_based:
        for number, line in enumerate(text.splitlines(), start=1):
            if len(line) > limits.max_line_length:
                raise InvalidInput(
                    f"Line {number} of the {fmt} input is {len(line):,} characters long, over "
                    f"the limit of {limits.max_line_length:,}; put one record per line."
                )


class GraphBuilder:
    """Collects nodes and edges while parsing; node ids stay unique and counts stay in limits."""

    def __init__(self, fmt: str, limits: Limits, name: str | None = None) -> None:
        self.fmt = fmt
        self.limits = limits
        self.graph = GraphData(name=name)
        self._nodes: dict[str, NodeData] = {}

    def has_node(self, node_id: str) -> bool:
        """Whether a node with this id was added."""
        return node_id in self._nodes

    def node(
        self,
        node_id: str,
        name: str | None = None,
        type: str | None = None,
        properties: dict[str, Any] | None = None,
    ) -> NodeData:
        """Add a node or update the existing one (given name/type replace, properties merge).

        Raises:
            InvalidInput: more nodes than `limits.max_nodes`.
        """
        node = self._nodes.get(node_id)
        if node is None:
            if len(self._nodes) >= self.limits.max_nodes:
                raise InvalidInput(
                    f"The {self.fmt} input has more than {self.limits.max_nodes:,} nodes; "
                    "split it into smaller imports."
                )
            node = NodeData(node_id, name if name is not None else node_id, type)
            self._nodes[node_id] = node
            self.graph.nodes.append(node)
        else:
            if name is not None:
                node.name = name
            if type is not None:
                node.type = type
        if properties:
            node.properties.update(properties)
        return node

    def edge(
        self,
        source: str,
        target: str,
        relation: str | None = None,
        properties: dict[str, Any] | None = None,
        weight: float | None = None,
    ) -> EdgeData:
        """Add an edge, creating missing endpoints (named by their id).

        Raises:
            InvalidInput: more edges than `limits.max_edges` (or nodes over theirs).
        """
        if len(self.graph.edges) >= self.limits.max_edges:
            raise InvalidInput(
                f"The {self.fmt} input has more than {self.limits.max_edges:,} edges; "
                "split it into smaller imports."
            )
        for end in (source, target):
            if end not in self._nodes:
                self.node(end)
        edge = EdgeData(source, target, relation or DEFAULT_RELATION, properties or {}, weight)
        self.graph.edges.append(edge)
        return edge


def to_float(value: Any) -> float | None:
    """`value` as a float if it is (or spells) a finite number, else None."""
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number == number and abs(number) != float("inf") else None


def text_value(value: Any) -> str:
    """A property value as text for the formats that only hold strings (DOT, CSV)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
