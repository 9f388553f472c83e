"""Import and export of `GraphData`: DOT, CSV, TSV, GraphML, JSON, Mermaid, Cypher.

`parse(text, fmt)` returns the graph plus what it could not use;
`dump(graph, fmt)` writes it; `detect_format(text, filename)` guesses the
format. Which formats give back exactly what was written:

=========  ===================================================================
format     round trip (dump -> parse)
=========  ===================================================================
json       lossless (JSON values; other values are written with ``str``)
cypher     lossless (properties are one JSON string, as polyg stores them)
graphml    lossless for str/int/float/bool values that keep one type per
           property name; lists/objects come back as JSON text
dot        ids, names, types, relations, weights; property values as strings
csv, tsv   edges, ids, names, types, relations, weights; edge property
           values as strings (empty ones dropped); node properties dropped
mermaid    names, relations, identifier-like ids and types; no properties
=========  ===================================================================

Property names a format uses itself are reserved there: `label`/`type`
(nodes) and `label`/`relation`/`weight` (edges) in DOT and GraphML, the
column names in CSV/TSV.

Every parse checks `Limits` first: input bytes and (for the line-based
formats) line length before parsing, node and edge counts while parsing;
going over raises `InvalidInput`. Malformed parts become `LineError`s (with
the line for line-based formats; one error with its position for a syntax
error in JSON, GraphML or DOT) and the rest is still read.
"""

from __future__ import annotations

import re
from pathlib import PurePath

from polyg_core.algorithms.formats.base import Limits, LineError, ParseResult, check_input
from polyg_core.algorithms.formats.cypher_format import dump_cypher, parse_cypher
from polyg_core.algorithms.formats.delimited import dump_delimited, parse_delimited
from polyg_core.algorithms.formats.dot_format import dump_dot, parse_dot
from polyg_core.algorithms.formats.graphml import dump_graphml, parse_graphml
from polyg_core.algorithms.formats.json_format import dump_json, parse_json
from polyg_core.algorithms.formats.mermaid import dump_mermaid, parse_mermaid
from polyg_core.algorithms.model import GraphData
from polyg_core.errors import InvalidInput

FORMATS = ("json", "dot", "csv", "tsv", "graphml", "mermaid", "cypher")
"""Format names `parse` and `dump` accept (plus the aliases in `ALIASES`)."""

ALIASES = {
    "gv": "dot",
    "graphviz": "dot",
    "xml": "graphml",
    "mmd": "mermaid",
    "cql": "cypher",
}
_LINE_BASED = {"csv", "tsv", "mermaid", "cypher"}
_EXTENSIONS = {
    ".json": "json",
    ".dot": "dot",
    ".gv": "dot",
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".graphml": "graphml",
    ".xml": "graphml",
    ".mmd": "mermaid",
    ".mermaid": "mermaid",
    ".cypher": "cypher",
    ".cql": "cypher",
}


def normalize_format(fmt: str) -> str:
    """The canonical name of a format.

    Raises:
        InvalidInput: an unknown format name.
    """
    name = fmt.strip().lower().lstrip(".")
    name = ALIASES.get(name, name)
    if name not in FORMATS:
        raise InvalidInput(f"Unknown graph format {fmt!r}; use one of: {', '.join(FORMATS)}.")
    return name


def parse(text: str, fmt: str, *, limits: Limits | None = None) -> ParseResult:
    """Read a graph from text.

    Args:
        text: the document.
        fmt: one of `FORMATS` (or an alias).
        limits: size bounds; `Limits()` defaults (50 MB, 1,000,000 nodes and
            edges, 100,000-character lines) if None.

    Returns:
        The graph and the errors/warnings about parts that were skipped or changed.

    Raises:
        InvalidInput: unknown format, input over a limit, or a GraphML document
            with a DTD/entities (refused).
    """
    name = normalize_format(fmt)
    bounds = limits or Limits()
    check_input(text, name, bounds, line_based=name in _LINE_BASED)
    if name == "json":
        return parse_json(text, bounds)
    if name == "dot":
        return parse_dot(text, bounds)
    if name in ("csv", "tsv"):
        return parse_delimited(text, bounds, fmt=name)
    if name == "graphml":
        return parse_graphml(text, bounds)
    if name == "mermaid":
        return parse_mermaid(text, bounds)
    return parse_cypher(text, bounds)


def dump(g: GraphData, fmt: str) -> str:
    """Write a graph as text in one of `FORMATS`.

    Raises:
        InvalidInput: unknown format.
    """
    name = normalize_format(fmt)
    if name == "json":
        return dump_json(g)
    if name == "dot":
        return dump_dot(g)
    if name in ("csv", "tsv"):
        return dump_delimited(g, fmt=name)
    if name == "graphml":
        return dump_graphml(g)
    if name == "mermaid":
        return dump_mermaid(g)
    return dump_cypher(g)


_DOT_START = re.compile(r"^(strict\s+)?(di)?graph\b[^\n{]*\{", re.IGNORECASE)
_MERMAID_START = re.compile(r"^(graph|flowchart)\s+(TD|TB|BT|LR|RL)\b|^flowchart\b", re.IGNORECASE)


def detect_format(text: str, filename: str | None = None) -> str:
    """Guess a document's format from its file extension, else from its first characters.

    Raises:
        InvalidInput: nothing to go on (empty text and no known extension).
    """
    if filename:
        by_extension = _EXTENSIONS.get(PurePath(filename).suffix.lower())
        if by_extension:
            return by_extension
    body = "\n".join(
        line
        for line in text.lstrip("\ufeff").splitlines()
        if not line.strip().startswith(("//", "%%", "#"))
    ).lstrip()
    if not body:
        raise InvalidInput("Cannot tell the format of an empty document; pass fmt explicitly.")
    if body[0] in "{[":
        return "json"
    if body.startswith("<"):
        return "graphml"
    if _MERMAID_START.match(body):
        return "mermaid"
    if _DOT_START.match(body):
        return "dot"
    if re.match(r"^(CREATE|MERGE)\b", body, re.IGNORECASE):
        return "cypher"
    first = body.splitlines()[0]
    return "tsv" if "\t" in first and "," not in first else "csv"


__all__ = [
    "ALIASES",
    "FORMATS",
    "Limits",
    "LineError",
    "ParseResult",
    "detect_format",
    "dump",
    "normalize_format",
    "parse",
]
