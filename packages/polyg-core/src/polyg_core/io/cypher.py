"""polyg's Cypher dump: one statement per record, runnable elsewhere and re-importable.

Every statement has the shape `WITH {<record as a map literal>} AS row <writes>;`
on one line. The map literal carries the whole record, so importing a dump only
parses those literals (nothing in the file is executed) and the dump is as
lossless as JSONL; the writes after it let any Cypher database load the dump
(`redis-cli GRAPH.QUERY` or cypher-shell, one statement at a time).
"""

from __future__ import annotations

import math
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import IO, Any

from polyg_core.io.reader import MAX_LINE_BYTES, Item, LineError, parse_record
from polyg_core.io.records import Record
from polyg_core.storage.schema import (
    CAUSAL,
    CONCEPT,
    ENTITY,
    EVENT,
    FACT,
    MEMORY,
    R_ABOUT,
    R_CAUSES,
    R_RELATES,
    X_AFFECTS,
    X_INVOLVES,
    X_REPRESENTS,
)

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"-?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_UNESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "r": "\r", "t": "\t", "0": "\x00"}

_LINK_ENTITIES = (
    "FOREACH (x IN row.entities | MERGE (xe:{e} {{name: x}}) MERGE ({v})-[:{rel}]->(xe))"
)
_WRITES: dict[str, str] = {
    "entity": f"MERGE (n:{ENTITY} {{name: row.name, entity_type: row.type}}) "
    "SET n += coalesce(row.properties, {})",
    "relation": f"MERGE (a:{ENTITY} {{name: row.source}}) MERGE (b:{ENTITY} {{name: row.target}}) "
    f"MERGE (a)-[r:{R_RELATES} {{relationship_type: row.type}}]->(b) "
    "SET r += coalesce(row.properties, {})",
    "event": f"MERGE (n:{EVENT} {{description: row.description, occurred_at: row.occurred_at}}) "
    + _LINK_ENTITIES.format(e=ENTITY, v="n", rel=X_INVOLVES),
    "fact": f"CREATE (n:{FACT} {{subject: row.subject, predicate: row.predicate, "
    "object: row.object, valid_from: row.valid_from, valid_to: row.valid_to}) "
    + _LINK_ENTITIES.format(e=ENTITY, v="n", rel=X_INVOLVES),
    "causal_link": f"MERGE (a:{CAUSAL} {{description: row.cause}}) "
    f"MERGE (b:{CAUSAL} {{description: row.effect}}) "
    f"MERGE (a)-[r:{R_CAUSES}]->(b) SET r.confidence = row.confidence, r.evidence = row.evidence "
    + _LINK_ENTITIES.format(e=ENTITY, v="a", rel=X_AFFECTS),
    "concept": f"MERGE (n:{CONCEPT} {{name: row.name}}) SET n.description = row.description "
    + _LINK_ENTITIES.format(e=ENTITY, v="n", rel=X_REPRESENTS),
    "memory": f"MERGE (n:{MEMORY} {{content: row.content}}) SET n.category = row.category, "
    "n.tags = row.tags FOREACH (c IN coalesce(row.concepts, []) | "
    f"MERGE (ce:{CONCEPT} {{name: c}}) MERGE (n)-[:{R_ABOUT}]->(ce))",
}


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


def statement(record: Record) -> str:
    """The one-line Cypher statement of a record."""
    data = record.model_dump(mode="json", exclude_defaults=True)
    row = {"kind": record.kind, **data}
    return f"WITH {literal(row)} AS row {_WRITES[record.kind]};"


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
            if not text or text.startswith("//"):
                continue
            try:
                data = parse_statement(text)
            except ValueError as exc:
                yield number, LineError(number, str(exc))
                continue
            yield number, parse_record(data, number)


async def write_cypher(records: AsyncIterator[Record], out: IO[str], namespace: str) -> int:
    """Write a Cypher dump of records; the number written."""
    out.write(
        f"// polyg memory dump of graph {namespace!r}: one statement per record.\n"
        "// Re-import with `polyg import FILE --format cypher` (embeddings are recomputed).\n"
    )
    n = 0
    async for rec in records:
        out.write(statement(rec))
        out.write("\n")
        n += 1
    return n
