"""CSV and TSV edge lists: `source,target,relation,...`, one edge per row.

Recognised columns (case-insensitive): `source`, `target`, `relation` (or
`relationship`, `rel`, `label`), `weight`, `source_type`, `target_type`,
`source_name`, `target_name`; every other column becomes an edge property
(text; empty cells are left out). A row with an empty `target` declares a
node without edges. The delimiter is sniffed among `,` `;` `|` tab for
CSV. Without a header row the columns are taken as source, target, relation.

Write: ids, names, types, relations and weights come back as they were;
edge property values come back as strings; node properties are not written
(an edge list has no place for them).
"""

from __future__ import annotations

import csv
import io
from typing import Any

from polyg_core.algorithms.formats.base import (
    GraphBuilder,
    Limits,
    LineError,
    ParseResult,
    text_value,
    to_float,
)
from polyg_core.algorithms.model import GraphData

_ALIASES = {
    "source": "source",
    "from": "source",
    "target": "target",
    "to": "target",
    "relation": "relation",
    "relationship": "relation",
    "rel": "relation",
    "label": "relation",
    "weight": "weight",
    "source_type": "source_type",
    "target_type": "target_type",
    "source_name": "source_name",
    "target_name": "target_name",
}
_RESERVED = set(_ALIASES)
_CANDIDATES = (",", "\t", ";", "|")


def sniff_delimiter(text: str) -> str:
    """The delimiter of a delimited text, guessed from its first line (`,` when unsure)."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    counts = {d: first.count(d) for d in _CANDIDATES}
    best = max(_CANDIDATES, key=lambda d: counts[d])
    return best if counts[best] else ","


def _rows(text: str, delimiter: str, errors: list[LineError]) -> list[tuple[int, list[str]]]:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    rows: list[tuple[int, list[str]]] = []
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            errors.append(LineError(start, f"unreadable row: {exc}"))
            continue
        if any(cell.strip() for cell in row):
            rows.append((start, row))
    return rows


def parse_delimited(text: str, limits: Limits, *, fmt: str = "csv") -> ParseResult:
    """Parse a CSV/TSV edge list; bad rows are reported with their line and skipped."""
    builder = GraphBuilder(fmt, limits)
    errors: list[LineError] = []
    warnings: list[str] = []
    delimiter = "\t" if fmt == "tsv" else sniff_delimiter(text)
    rows = _rows(text, delimiter, errors)
    if not rows:
        return ParseResult(builder.graph, errors, warnings)
    columns, rows = _columns(rows, warnings)
    for line, row in rows:
        if len(row) != len(columns):
            errors.append(
                LineError(line, f"expected {len(columns)} fields, found {len(row)}; row skipped")
            )
            continue
        error = _add_row(builder, dict(zip(columns, row, strict=True)))
        if error:
            errors.append(LineError(line, error))
    return ParseResult(builder.graph, errors, warnings)


def _columns(
    rows: list[tuple[int, list[str]]], warnings: list[str]
) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """The column names (from the header row, else positional) and the data rows."""
    header = [cell.strip().lower() for cell in rows[0][1]]
    columns = [_ALIASES.get(name, rows[0][1][i].strip()) for i, name in enumerate(header)]
    if "source" in columns and "target" in columns:
        return columns, rows[1:]
    width = max(len(row) for _, row in rows)
    columns = ["source", "target", "relation"][:width] + [f"column{i + 1}" for i in range(3, width)]
    warnings.append(
        "no header row with 'source' and 'target': columns read as source, target, relation"
    )
    return columns, rows


def _add_row(builder: GraphBuilder, cells: dict[str, str]) -> str | None:
    """Add the row's nodes and edge; the reason when the row is skipped."""
    source, target = cells.get("source", "").strip(), cells.get("target", "").strip()
    if not source:
        return "empty source; row skipped"
    raw_weight = cells.get("weight", "").strip()
    weight = to_float(raw_weight) if raw_weight else None
    if raw_weight and weight is None:
        return f"weight {raw_weight!r} is not a number; row skipped"
    builder.node(source, cells.get("source_name") or None, cells.get("source_type") or None)
    if not target:
        return None
    builder.node(target, cells.get("target_name") or None, cells.get("target_type") or None)
    props: dict[str, Any] = {k: v for k, v in cells.items() if k not in _RESERVED and v != ""}
    builder.edge(source, target, cells.get("relation") or None, props, weight)
    return None


def _dump_columns(g: GraphData) -> list[str]:
    """The header: the fixed columns the graph uses, then every edge property's name."""
    columns = ["source", "target", "relation"]
    if any(e.weight is not None for e in g.edges):
        columns.append("weight")
    if any(n.type is not None for n in g.nodes):
        columns += ["source_type", "target_type"]
    if any(n.name != n.id for n in g.nodes):
        columns += ["source_name", "target_name"]
    extra: dict[str, None] = {}
    for edge in g.edges:
        extra.update((k, None) for k in edge.properties if k.lower() not in _RESERVED)
    return columns + list(extra)


def dump_delimited(g: GraphData, *, fmt: str = "csv") -> str:
    """Write a graph as a CSV (or TSV) edge list with a header row."""
    nodes = g.node_map()
    columns = _dump_columns(g)
    rows: list[list[str]] = [columns]

    def node_cells(prefix: str, node_id: str, cells: dict[str, str]) -> None:
        node = nodes.get(node_id)
        cells[prefix] = node_id
        if node is not None:
            cells[f"{prefix}_type"] = node.type or ""
            cells[f"{prefix}_name"] = node.name

    touched: set[str] = set()
    for edge in g.edges:
        cells: dict[str, str] = {"relation": edge.relation}
        node_cells("source", edge.source, cells)
        node_cells("target", edge.target, cells)
        if edge.weight is not None:
            cells["weight"] = repr(edge.weight)
        cells.update((k, text_value(v)) for k, v in edge.properties.items())
        touched.update((edge.source, edge.target))
        rows.append([cells.get(c, "") for c in columns])
    for node in g.nodes:
        if node.id not in touched:
            cells = {}
            node_cells("source", node.id, cells)
            rows.append([cells.get(c, "") for c in columns])
    # csv quotes a field only for characters of the line terminator, so a bare
    # \r in a value needs \r\n line ends to survive.
    carriage = any("\r" in cell for row in rows for cell in row)
    out = io.StringIO()
    writer = csv.writer(
        out,
        delimiter="\t" if fmt == "tsv" else ",",
        lineterminator="\r\n" if carriage else "\n",
    )
    writer.writerows(rows)
    return out.getvalue()
