"""The in-memory graph the analysis algorithms and the import/export formats work on.

`GraphData` is the exchange format between storage (adjacency fetched from
FalkorDB) and the pure code in `polyg_core.algorithms`: a directed multigraph
whose nodes have a stable `id`, a display `name`, an optional `type` and free
properties, and whose edges carry a user relation name, properties and an
optional numeric weight. Several edges (with different relations) may join
the same pair of nodes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from polyg_shared.types import control_char_error

from polyg_core.errors import InvalidInput

DEFAULT_RELATION = "related_to"
"""Relation given to edges whose source format names none (e.g. `a -> b` in DOT)."""


@dataclass
class NodeData:
    """One node: `id` is unique in its graph, `name` is what a person reads."""

    id: str
    name: str
    type: str | None = None
    properties: dict[str, Any] = field(default_factory=lambda: {})


@dataclass
class EdgeData:
    """One directed edge `source -> target` (node ids) with a user relation name."""

    source: str
    target: str
    relation: str = DEFAULT_RELATION
    properties: dict[str, Any] = field(default_factory=lambda: {})
    weight: float | None = None


@dataclass(frozen=True)
class NodeRef:
    """A node as results name it: its id and its display name."""

    id: str
    name: str


@dataclass
class GraphData:
    """A directed multigraph held in memory.

    Build it with `add_node`/`add_edge` (which keep ids unique) or pass lists
    directly and call `validate()` before use.
    """

    nodes: list[NodeData] = field(default_factory=lambda: [])
    edges: list[EdgeData] = field(default_factory=lambda: [])
    name: str | None = None
    _index: dict[str, NodeData] = field(
        default_factory=lambda: {}, init=False, repr=False, compare=False
    )

    def _nodes_by_id(self) -> dict[str, NodeData]:
        # Rebuilt when `nodes` was changed directly (appended to or replaced).
        if len(self._index) != len(self.nodes):
            self._index = {node.id: node for node in self.nodes}
        return self._index

    @classmethod
    def from_edges(
        cls, edges: Iterable[tuple[str, str] | tuple[str, str, str]], *, name: str | None = None
    ) -> GraphData:
        """A graph from `(source, target[, relation])` tuples; node ids double as names."""
        graph = cls(name=name)
        for edge in edges:
            graph.add_edge(edge[0], edge[1], edge[2] if len(edge) == 3 else DEFAULT_RELATION)
        return graph

    def node_map(self) -> dict[str, NodeData]:
        """Nodes by id (a fresh dict; the last one wins if ids repeat, `validate` refuses that)."""
        return {node.id: node for node in self.nodes}

    def get_node(self, node_id: str) -> NodeData | None:
        """The node with this id, or None."""
        return self._nodes_by_id().get(node_id)

    def ref(self, node_id: str, nodes: dict[str, NodeData] | None = None) -> NodeRef:
        """The `NodeRef` of a node id (its name is the id itself if the node is unknown)."""
        node = (nodes if nodes is not None else self.node_map()).get(node_id)
        return NodeRef(node_id, node.name if node else node_id)

    def add_node(
        self,
        node_id: str,
        name: str | None = None,
        type: str | None = None,
        properties: dict[str, Any] | None = None,
    ) -> NodeData:
        """Add a node, or return the existing node with that id (left unchanged)."""
        index = self._nodes_by_id()
        existing = index.get(node_id)
        if existing is not None:
            return existing
        node = NodeData(node_id, name if name is not None else node_id, type, properties or {})
        self.nodes.append(node)
        index[node_id] = node
        return node

    def add_edge(
        self,
        source: str,
        target: str,
        relation: str = DEFAULT_RELATION,
        properties: dict[str, Any] | None = None,
        weight: float | None = None,
    ) -> EdgeData:
        """Add an edge, creating missing endpoint nodes (named by their id)."""
        for node_id in (source, target):
            self.add_node(node_id)
        edge = EdgeData(source, target, relation, properties or {}, weight)
        self.edges.append(edge)
        return edge

    def validate(self) -> None:
        """Check that node ids are unique and every edge joins known nodes.

        Raises:
            InvalidInput: a duplicate node id, an edge naming an unknown node, or a
                text with a character no text may hold (NUL, a lone surrogate such as
                a JSON `\\ud800` escape: it cannot be stored or embedded).
        """
        for what, items in (("node", self.nodes), ("edge", self.edges)):
            for i, item in enumerate(items):
                found = control_char_error(vars(item))
                if found is not None:
                    loc, _, message = found
                    where = ".".join(str(p) for p in loc)
                    raise InvalidInput(f"{what} {i + 1} of the input, field {where}: {message}")
        seen: set[str] = set()
        for node in self.nodes:
            if node.id in seen:
                raise InvalidInput(
                    f"Node id {node.id!r} appears twice; give every node its own id."
                )
            seen.add(node.id)
        for edge in self.edges:
            for end in (edge.source, edge.target):
                if end not in seen:
                    raise InvalidInput(
                        f"Edge {edge.source!r} -[{edge.relation}]-> {edge.target!r} names "
                        f"node {end!r}, which is not in the graph; add the node first."
                    )

    def iter_pairs(self) -> Iterator[tuple[str, str]]:
        """Distinct `(source, target)` pairs, in first-seen order."""
        seen: set[tuple[str, str]] = set()
        for edge in self.edges:
            pair = (edge.source, edge.target)
            if pair not in seen:
                seen.add(pair)
                yield pair
