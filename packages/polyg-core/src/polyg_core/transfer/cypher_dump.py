"""polyg's Cypher dump: one statement per record, replayable in a bare FalkorDB and re-importable.

Every record statement has the shape
`WITH {<record as a map literal>} AS row, {<stored form>} AS db <writes>;` on one
line. The record map carries the whole record, so importing a dump only parses
those literals (nothing in the file is executed) and the dump is as lossless as
JSONL. The writes use `db` (the stored properties and the uuids of linked
nodes), so running the statements one at a time (`GRAPH.QUERY`) rebuilds the
namespace as it was stored, without polyg: same nodes, edges and properties,
embeddings aside. `T_BEFORE` and `S_SIMILAR_TO` edges follow as their own
statements, once every node is written.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import IO, Any, cast

from polyg_core.storage.schema import (
    CAUSAL,
    CONCEPT,
    ENTITY,
    EVENT,
    FACT,
    FULLTEXT_INDEXES,
    MEMORY,
    MEMORY_LABELS,
    R_ABOUT,
    R_CAUSES,
    R_RELATES,
    R_SOLVED_BY,
    RANGE_INDEXES,
    X_AFFECTS,
    X_INVOLVES,
    X_REFERS_TO,
    X_REPRESENTS,
    check_label,
    check_relationship,
)
from polyg_core.storage.store import FalkorStore
from polyg_core.transfer.cypher_load import EDGE_KIND, IDENTIFIER
from polyg_core.transfer.export import DEFAULT_PAGE, Exported, iter_exported, iter_late_edges

_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _links(links: tuple[tuple[str, str, str], ...]) -> str:
    """Clauses linking node `n` to the nodes whose uuids are in `db.<key>` lists."""
    out = ""
    carried = ["n", "db"]
    for key, label, _rel in links:
        out += (
            f" WITH {', '.join(carried)} OPTIONAL MATCH (m_{key}:{label}) WHERE m_{key}.uuid IN "
            f"db.{key} WITH {', '.join(carried)}, collect(m_{key}) AS l_{key}"
        )
        carried.append(f"l_{key}")
    for key, _, rel in links:
        out += f" FOREACH (m IN l_{key} | CREATE (n)-[:{rel}]->(m))"
    # The stored properties of links that have any (`xp`: type, linked uuid, properties),
    # found by expanding from `n`.
    if links:
        out += (
            " WITH n, db UNWIND coalesce(db.xp, []) AS p MATCH (n)-[r]->(m) "
            "WHERE type(r) = p[0] AND m.uuid = p[1] SET r = p[2]"
        )
    return out


def _node(label: str, *links: tuple[str, str, str]) -> str:
    return f"CREATE (n:{label}) SET n = db.node" + _links(links)


def _edge(a: str, rel: str, b: str) -> str:
    return (
        f"MATCH (a:{a} {{uuid: db.a}}), (b:{b} {{uuid: db.b}}) "
        f"CREATE (a)-[r:{rel}]->(b) SET r = db.edge"
    )


_WRITES: dict[str, str] = {
    "entity": _node(ENTITY),
    "relation": _edge(ENTITY, R_RELATES, ENTITY),
    "event": _node(EVENT, ("x", ENTITY, X_INVOLVES)),
    "fact": _node(FACT, ("x", ENTITY, X_INVOLVES)),
    "causal_node": _node(CAUSAL, ("x", ENTITY, X_AFFECTS), ("v", EVENT, X_REFERS_TO)),
    "causal_link": _edge(CAUSAL, R_CAUSES, CAUSAL),
    "solution": _edge(CAUSAL, R_SOLVED_BY, CAUSAL),
    "concept": _node(CONCEPT, ("x", ENTITY, X_REPRESENTS)),
    "memory": _node(MEMORY, ("c", CONCEPT, R_ABOUT)),
}
"""Per record kind, the writes that store it in a bare database exactly as exported
(from `db`: the stored properties and the uuids of the linked nodes)."""


def literal(value: Any) -> str:
    """A Cypher literal for a JSON-like value.

    Raises:
        ValueError: a non-finite float or an unsupported type.
    """
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("Cypher has no literal for NaN or infinity")
        return repr(value)
    if isinstance(value, str):
        return "'" + "".join(_ESCAPES.get(c, c) for c in value) + "'"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(literal(v) for v in cast(Sequence[Any], value)) + "]"
    if isinstance(value, dict):
        fields = cast(dict[Any, Any], value)
        return "{" + ", ".join(f"{_key(k)}: {literal(v)}" for k, v in fields.items()) + "}"
    raise ValueError(f"no Cypher literal for {type(value).__name__}")


def _key(key: Any) -> str:
    text = str(key)
    if IDENTIFIER.fullmatch(text):
        return text
    return "`" + text.replace("`", "``") + "`"


def statement(item: Exported) -> str:
    """The one-line Cypher statement of an exported record."""
    data = item.record.model_dump(mode="json", exclude_defaults=True)
    row = {"kind": item.record.kind, **data}
    return f"WITH {literal(row)} AS row, {literal(item.db)} AS db {_WRITES[item.record.kind]};"


def edge_statement(label: str, rel: str, a: str, b: str, edge: dict[str, Any]) -> str:
    """The one-line Cypher statement of an edge between two nodes of `label`."""
    db = {"a": a, "b": b, "edge": edge}
    return (
        f"WITH {{kind: '{EDGE_KIND}'}} AS row, {literal(db)} AS db "
        f"{_edge(check_label(label), check_relationship(rel), label)};"
    )


def index_statements() -> list[str]:
    """The statements creating polyg's range and full-text indexes (vector indexes need
    the embeddings, which a dump does not carry)."""
    out: list[str] = []
    for label in MEMORY_LABELS:
        out += [f"CREATE INDEX FOR (n:{label}) ON (n.{p});" for p in RANGE_INDEXES[label]]
        if label in FULLTEXT_INDEXES:
            quoted = ", ".join(f"'{p}'" for p in FULLTEXT_INDEXES[label])
            out.append(f"CALL db.idx.fulltext.createNodeIndex('{label}', {quoted});")
    return out


async def write_cypher(
    store: FalkorStore, namespace: str, out: IO[str], *, page: int = DEFAULT_PAGE
) -> int:
    """Write a Cypher dump of a memory namespace; the number of records written.

    The dump is schema statements (range and full-text indexes), one statement per
    record, then one per `T_BEFORE` and `S_SIMILAR_TO` edge; run one at a time (`GRAPH.QUERY`), they
    rebuild the namespace's nodes, edges and properties in a bare FalkorDB, without
    embeddings. `polyg import` reads the records only and recomputes embeddings.

    Raises:
        StorageUnavailable: FalkorDB cannot be reached.
    """
    out.write(
        f"// polyg memory dump of graph {namespace!r}: one statement per line.\n"
        "// Replay: run each line with GRAPH.QUERY (no embeddings, no vector indexes).\n"
        "// Re-import with `polyg import FILE --format cypher` (embeddings are recomputed).\n"
    )
    for line in index_statements():
        out.write(line + "\n")
    n = 0
    async for item in iter_exported(store, namespace, page=page):
        out.write(statement(item))
        out.write("\n")
        n += 1
    async for label, rel, a, b, edge in iter_late_edges(store, namespace, page=page):
        out.write(edge_statement(label, rel, a, b, edge))
        out.write("\n")
    return n
