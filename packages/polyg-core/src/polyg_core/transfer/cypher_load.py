"""Reading polyg's Cypher dumps back as records (`cypher_dump` writes them).

Only the record map of each statement is parsed, by a small parser of the Cypher
literals the dump writes; nothing in the file is executed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from polyg_core.transfer.records import MAX_LINE_BYTES, Item, LineError, parse_record

EDGE_KIND = "edge"
"""The kind of a dump statement that writes one `T_BEFORE` or `S_SIMILAR_TO` edge once
every node is written. An import into polyg skips it: it rebuilds each entity's
chain from its events, and concept records carry their similarity links."""

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""A map key written without backquotes."""

_SCHEMA = ("CREATE INDEX ", "CALL db.idx.")
"""Schema statements of a dump: a bare database runs them, an import skips them."""

_NUMBER = re.compile(r"-?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
_UNESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "r": "\r", "t": "\t", "0": "\x00"}


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
        m = IDENTIFIER.match(self.text, self.pos)
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
