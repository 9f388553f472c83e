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
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

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
from polyg_core.transfer.export import DEFAULT_PAGE, Exported, iter_exported, iter_late_edges
from polyg_core.transfer.reader import MAX_LINE_BYTES, Item, LineError, parse_record

_SCHEMA = ("CREATE INDEX ", "CALL db.idx.")
"""Schema statements of a dump: a bare database runs them, an import skips them."""

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"-?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_UNESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "r": "\r", "t": "\t", "0": "\x00"}


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

EDGE_KIND = "edge"
"""The kind of a dump statement that writes one `T_BEFORE` or `S_SIMILAR_TO` edge once
every node is written. An import into polyg skips it: it rebuilds each entity's
chain from its events, and concept records carry their similarity links."""


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
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)}: {literal(v)}" for k, v in value.items()) + "}"
    raise ValueError(f"no Cypher literal for {type(value).__name__}")


def _key(key: Any) -> str:
    text = str(key)
    if _IDENT.fullmatch(text):
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
        quoted = ", ".join(f"'{p}'" for p in FULLTEXT_INDEXES[label])
        out.append(f"CALL db.idx.fulltext.createNodeIndex('{label}', {quoted});")
    return out


class _Parser:
    """Recursive-descent parser of the Cypher literals `literal` writes."""

    def __init__(self, text: str, pos: int) -> None:
        self.text = text
        self.pos = pos

    def error(self, what: str) -> ValueError:
        return ValueError(f"{what} at column {self.pos + 1}")

    def ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t\r\n":
            self.pos += 1

    def value(self) -> Any:
        self.ws()
        if self.pos >= len(self.text):
            raise self.error("unexpected end of statement")
        c = self.text[self.pos]
        if c == "{":
            return self.mapping()
        if c == "[":
            return self.sequence()
        if c in "'\"":
            return self.string(c)
        for word, val in (("null", None), ("true", True), ("false", False)):
            if self.text.startswith(word, self.pos):
                self.pos += len(word)
                return val
        m = _NUMBER.match(self.text, self.pos)
        if m:
            self.pos = m.end()
            token = m.group()
            return float(token) if any(ch in token for ch in ".eE") else int(token)
        raise self.error(f"unexpected {c!r}")

    def string(self, quote: str) -> str:
        self.pos += 1
        out: list[str] = []
        while self.pos < len(self.text):
            c = self.text[self.pos]
            if c == "\\":
                nxt = self.text[self.pos + 1 : self.pos + 2]
                if nxt == "u":
                    out.append(chr(int(self.text[self.pos + 2 : self.pos + 6], 16)))
                    self.pos += 6
                    continue
                if nxt not in _UNESCAPES:
                    raise self.error(f"unknown escape \\{nxt}")
                out.append(_UNESCAPES[nxt])
                self.pos += 2
                continue
            if c == quote:
                self.pos += 1
                return "".join(out)
            out.append(c)
            self.pos += 1
        raise self.error("unterminated string")

    def key(self) -> str:
        self.ws()
        if self.text.startswith("`", self.pos):
            end = self.pos + 1
            while True:
                end = self.text.find("`", end)
                if end < 0:
                    raise self.error("unterminated `key`")
                if self.text.startswith("``", end):
                    end += 2
                    continue
                break
            key = self.text[self.pos + 1 : end].replace("``", "`")
            self.pos = end + 1
            return key
        m = _IDENT.match(self.text, self.pos)
        if not m:
            raise self.error("expected a key")
        self.pos = m.end()
        return m.group()

    def expect(self, char: str) -> None:
        self.ws()
        if not self.text.startswith(char, self.pos):
            raise self.error(f"expected {char!r}")
        self.pos += 1

    def mapping(self) -> dict[str, Any]:
        self.expect("{")
        out: dict[str, Any] = {}
        self.ws()
        if self.text.startswith("}", self.pos):
            self.pos += 1
            return out
        while True:
            k = self.key()
            self.expect(":")
            out[k] = self.value()
            self.ws()
            if self.text.startswith(",", self.pos):
                self.pos += 1
                continue
            self.expect("}")
            return out

    def sequence(self) -> list[Any]:
        self.expect("[")
        out: list[Any] = []
        self.ws()
        if self.text.startswith("]", self.pos):
            self.pos += 1
            return out
        while True:
            out.append(self.value())
            self.ws()
            if self.text.startswith(",", self.pos):
                self.pos += 1
                continue
            self.expect("]")
            return out


def parse_statement(text: str) -> dict[str, Any]:
    """The record map of one dump statement.

    Raises:
        ValueError: the statement is not `WITH {...} AS row ...;`.
    """
    stripped = text.strip()
    if not stripped.upper().startswith("WITH "):
        raise ValueError("expected a statement starting with 'WITH {' (a polyg Cypher dump)")
    parser = _Parser(stripped, 4)
    parser.ws()
    row = parser.mapping()
    if not re.match(r"\s+AS\s+row\b", stripped[parser.pos :], re.IGNORECASE):
        raise parser.error("expected 'AS row' after the record map")
    if not stripped.endswith(";"):
        raise ValueError("the statement does not end with ';' (is the file truncated?)")
    return row


def iter_cypher(path: Path) -> Iterator[Item]:
    """Records of a polyg Cypher dump (lines starting with `//` are comments)."""
    with path.open("rb") as f:
        for number, raw in enumerate(f, start=1):
            if len(raw) > MAX_LINE_BYTES:
                yield number, LineError(number, f"line is longer than {MAX_LINE_BYTES} bytes")
                continue
            try:
                text = raw.decode("utf-8").strip()
            except UnicodeDecodeError as exc:
                yield number, LineError(number, f"not UTF-8 ({exc})")
                continue
            if not text or text.startswith("//") or text.startswith(_SCHEMA):
                continue
            try:
                data = parse_statement(text)
            except ValueError as exc:
                yield number, LineError(number, str(exc))
                continue
            if data.get("kind") == EDGE_KIND:
                continue
            yield number, parse_record(data, number)


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
