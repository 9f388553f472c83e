"""Import into and export from named graphs (DOT, CSV/TSV, GraphML, JSON, Mermaid, Cypher).

Import parses the whole input first (a malformed input raises before anything
is written), then merges it into the scratch graph in UNWIND batches, one
query per batch: nodes match existing ones by normalised name, edges by
(source, target, relation). Export fetches the graph and writes it in the
asked format.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from polyg_shared.engine import ExportGraphOutput, ImportGraphOutput, LineProblem

from polyg_core.algorithms.formats import dump, normalize_format, parse
from polyg_core.algorithms.model import GraphData
from polyg_core.errors import InvalidInput
from polyg_core.scratch.fetch import DEFAULT_MAX_NODES, fetch_graph
from polyg_core.scratch.nodes import ScratchGraphs, embedding_text
from polyg_core.storage.cypher import dump_properties
from polyg_core.storage.schema import R_SCRATCH, SCRATCH
from polyg_core.text.normalize import normalize_name

logger = logging.getLogger(__name__)

DEFAULT_EMBED_MAX = 2_000
"""Imports adding more new nodes than this store them without embeddings (matched by name only)."""


_DOCUMENT_FORMATS = frozenset({"json", "graphml", "dot"})
"""Formats read as one document: any syntax error means nothing is imported."""


def _key(name: str) -> str:
    return normalize_name(name) or name.strip()


@dataclass
class GraphIO:
    """Imports and exports named graphs.

    Args:
        scratch: the scratch-graph operations (store, embedder, graph manager).
        batch_size: rows per UNWIND write.
        embed_max: new nodes embedded per import at most; a larger import stores
            its nodes without embeddings (found by exact or normalised name only).
        max_nodes: largest graph exported.
    """

    scratch: ScratchGraphs
    batch_size: int = 5_000
    embed_max: int = DEFAULT_EMBED_MAX
    max_nodes: int = DEFAULT_MAX_NODES

    async def import_graph(
        self, fmt: str, content: str, *, graph: str | None = None
    ) -> ImportGraphOutput:
        """Merge a graph given as text into a scratch graph (created if new).

        Line-based formats (CSV/TSV, Mermaid, Cypher) import their good lines and list
        the others in `unparseable`; a document format (JSON, GraphML, DOT) with a
        syntax error imports nothing.

        Raises:
            InvalidInput: the input cannot be parsed (nothing is written), an unknown
                format, or the graph is a memory graph.
        """
        parsed = parse(content, fmt)
        data = parsed.graph
        whole = normalize_format(fmt) in _DOCUMENT_FORMATS
        if parsed.errors and (whole or not data.nodes):
            problems = "; ".join(str(e) for e in parsed.errors[:5])
            raise InvalidInput(
                f"could not read the {fmt} input ({problems}); nothing was imported. "
                "Fix the input and import it again."
            )
        data.validate()
        ns = await self.scratch.manager.use_scratch(graph)
        names = {n.id: n.name for n in data.nodes}
        new_nodes, nodes_existing = await self._write_nodes(ns, data)
        edges_added, edges_existing = await self._write_edges(ns, data, names)
        problems = [LineProblem(line=e.line or None, message=e.message) for e in parsed.errors]
        return ImportGraphOutput(
            nodes_added=new_nodes,
            edges_added=edges_added,
            nodes_existing=nodes_existing,
            edges_existing=edges_existing,
            unparseable=problems,
            embedded=self.scratch.embedder is not None and new_nodes <= self.embed_max,
        )

    async def _existing(self, ns: str, keys: list[str]) -> set[str]:
        """Which of the name keys a scratch node already holds."""
        existing: set[str] = set()
        for start in range(0, len(keys), self.batch_size):
            res = await self.scratch.store.query(
                ns,
                f"UNWIND $keys AS k MATCH (n:{SCRATCH} {{name_key: k}}) RETURN k",
                {"keys": keys[start : start + self.batch_size]},
                read_only=True,
            )
            existing.update(str(r[0]) for r in res.rows)
        return existing

    async def _embed(self, ns: str, fresh: list[dict[str, Any]]) -> None:
        """Give the new nodes' rows their vectors, unless there are more than `embed_max`."""
        embedder = self.scratch.embedder
        if embedder is not None and fresh and len(fresh) <= self.embed_max:
            vectors = await embedder.embed([embedding_text(r["name"]) for r in fresh])
            for row, vector in zip(fresh, vectors, strict=True):
                row["vec"] = [float(x) for x in vector]
        elif fresh and embedder is not None:
            logger.info(
                "import of %d new nodes into %s: stored without embeddings (limit %d)",
                len(fresh),
                ns,
                self.embed_max,
            )

    async def _write_nodes(self, ns: str, data: GraphData) -> tuple[int, int]:
        by_key = _node_rows(data)
        keys = list(by_key)
        existing = await self._existing(ns, keys)
        fresh = [by_key[k] for k in keys if k not in existing]
        await self._embed(ns, fresh)
        created = 0
        for start in range(0, len(fresh), self.batch_size):
            res = await self.scratch.store.query(
                ns,
                f"UNWIND $rows AS r MERGE (n:{SCRATCH} {{name_key: r.key}}) "
                "ON CREATE SET n.uuid = randomUUID(), n.name = r.name, n.node_type = r.type, "
                "n.properties = r.props, n.embedding = "
                "CASE WHEN r.vec IS NULL THEN null ELSE vecf32(r.vec) END",
                {"rows": fresh[start : start + self.batch_size]},
            )
            created += res.nodes_created
        return created, len(data.nodes) - created

    async def _write_edges(
        self, ns: str, data: GraphData, names: dict[str, str]
    ) -> tuple[int, int]:
        rows: list[dict[str, Any]] = []
        seen: set[tuple[str, str, str]] = set()
        for edge in data.edges:
            a, b = _key(names[edge.source]), _key(names[edge.target])
            if (a, b, edge.relation) in seen:
                continue
            seen.add((a, b, edge.relation))
            rows.append(
                {
                    "a": a,
                    "b": b,
                    "rel": edge.relation,
                    "props": dump_properties(edge.properties),
                    "w": edge.weight,
                }
            )
        created = 0
        for start in range(0, len(rows), self.batch_size):
            res = await self.scratch.store.query(
                ns,
                f"UNWIND $rows AS e MATCH (a:{SCRATCH} {{name_key: e.a}}) "
                f"MATCH (b:{SCRATCH} {{name_key: e.b}}) "
                f"MERGE (a)-[r:{R_SCRATCH} {{relation: e.rel}}]->(b) "
                "ON CREATE SET r.properties = e.props, r.weight = e.w",
                {"rows": rows[start : start + self.batch_size]},
            )
            created += res.relationships_created
        return created, len(data.edges) - created

    async def export_graph(self, fmt: str, *, graph: str | None = None) -> ExportGraphOutput:
        """A scratch graph or memory namespace as text in `fmt`.

        Raises:
            InvalidInput: an unknown format, or a graph larger than `max_nodes`.
        """
        ns, kind = await self.scratch.manager.use(graph)
        data = await fetch_graph(self.scratch.store, ns, kind, max_nodes=self.max_nodes)
        content = dump(data, fmt)
        return ExportGraphOutput(
            format=fmt, content=content, node_count=len(data.nodes), edge_count=len(data.edges)
        )


def _node_rows(data: GraphData) -> dict[str, dict[str, Any]]:
    """One row per distinct name key (the first node of a name wins), without a vector yet."""
    by_key: dict[str, dict[str, Any]] = {}
    for node in data.nodes:
        key = _key(node.name)
        if key in by_key:
            continue
        by_key[key] = {
            "key": key,
            "name": node.name,
            "type": node.type,
            "props": dump_properties(node.properties),
            "vec": None,
        }
    return by_key
