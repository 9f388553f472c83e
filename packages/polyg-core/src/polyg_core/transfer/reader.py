"""Reading memory files: JSONL, JSON, scenario YAML and polyg's Cypher dumps, as records.

Readers stream: they yield `(line, record)` or `(line, LineError)` one at a time,
so a file of any size is validated and imported in bounded memory, and a bad
record is reported with its line number instead of stopping the import.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import yaml

from polyg_core.errors import InvalidInput
from polyg_core.transfer.cypher_load import iter_cypher
from polyg_core.transfer.records import MAX_LINE_BYTES, Item, LineError, parse_record

logger = logging.getLogger(__name__)

MAX_DOCUMENT_BYTES = 256 << 20
"""Largest JSON/YAML document read at once (these formats are not streamed)."""

MEMORY_FORMATS = ("jsonl", "json", "yaml", "cypher")
GRAPH_FORMATS = ("csv", "dot", "graphml", "json")
_SUFFIXES = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".cypher": "cypher",
    ".cql": "cypher",
    ".csv": "csv",
    ".dot": "dot",
    ".gv": "dot",
    ".graphml": "graphml",
}


def detect_format(path: Path, fmt: str = "auto") -> str:
    """The format of a file: `fmt` unless "auto", else from its suffix.

    Raises:
        InvalidInput: the suffix is unknown and no format was given.
    """
    if fmt != "auto":
        return fmt
    found = _SUFFIXES.get(path.suffix.lower())
    if found is None:
        raise InvalidInput(
            f"cannot tell the format of {path.name!r} from its suffix; pass --format "
            "jsonl, json, yaml, cypher, csv, dot or graphml"
        )
    return found


def is_graph_json(path: Path) -> bool:
    """True when a .json file is a scratch graph (seed 002: `nodes`/`edges`), not records."""
    with path.open("rb") as f:
        head = f.read(4096).lstrip()
    if not head.startswith(b"{"):
        return False
    for key in (b'"nodes"', b'"edges"', b'"links"'):
        if key in head:
            return b'"records"' not in head
    return False


_MAY_REFUSE = re.compile(rb"\\u|\xed[\xa0-\xbf]")
"""What, in a JSON line, can decode to a character the tools refuse: a `\\u` escape, or
the UTF-8 form of a surrogate (json decodes bytes with "surrogatepass"). JSON allows
no raw control character in a string, so a line without either needs no check."""


def _skip_rest_of_line(f: Any) -> None:
    while True:
        chunk = f.readline(MAX_LINE_BYTES)
        if not chunk or chunk.endswith(b"\n"):
            return


def iter_jsonl(path: Path, max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[Item]:
    """Records of a JSONL file, one per non-blank line (`#` lines are comments)."""
    with path.open("rb") as f:
        number = 0
        while True:
            raw = f.readline(max_line_bytes + 1)
            if not raw:
                return
            number += 1
            if len(raw) > max_line_bytes and not raw.endswith(b"\n"):
                _skip_rest_of_line(f)
                yield (
                    number,
                    LineError(
                        number, f"line is longer than {max_line_bytes} bytes; split the record"
                    ),
                )
                continue
            text = raw.strip()
            if not text or text.startswith(b"#"):
                continue
            try:
                data = json.loads(text)
            except (ValueError, UnicodeDecodeError) as exc:
                yield number, LineError(number, f"not valid JSON ({exc}); is the line truncated?")
                continue
            yield number, parse_record(data, number, unescaped=_MAY_REFUSE.search(text) is None)


def _read_document(path: Path) -> str:
    size = path.stat().st_size
    if size > MAX_DOCUMENT_BYTES:
        raise InvalidInput(
            f"{path.name} is {size} bytes; JSON and YAML documents are read whole and are "
            f"limited to {MAX_DOCUMENT_BYTES} bytes. Convert it to JSONL (one record per line)."
        )
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path.name} is not UTF-8 text ({exc})") from exc


def iter_json(path: Path) -> Iterator[Item]:
    """Records of a JSON document: a list of records or `{"records": [...]}`.

    The position reported for a bad record is its index in the list (1-based).

    Raises:
        InvalidInput: the document is not valid JSON or has another shape.
    """
    try:
        doc = json.loads(_read_document(path))
    except ValueError as exc:
        raise InvalidInput(f"{path.name} is not valid JSON ({exc}); is it truncated?") from exc
    items: Any = cast(dict[str, Any], doc).get("records") if isinstance(doc, dict) else doc
    if not isinstance(items, list):
        raise InvalidInput(
            f"{path.name}: expected a list of records or an object with a 'records' list"
        )
    for i, data in enumerate(cast(list[Any], items), start=1):
        yield i, parse_record(data, i)


class _LineLoader(yaml.SafeLoader):
    """A safe loader that remembers the line of every mapping as `__line__`."""


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    mapping = loader.construct_mapping(node, deep=True)
    mapping["__line__"] = node.start_mark.line + 1
    return mapping


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)

SCENARIO_SECTIONS = {
    "entities": "entity",
    "relations": "relation",
    "events": "event",
    "facts": "fact",
    "causal_links": "causal_link",
    "concepts": "concept",
    "memories": "memory",
}


def _strip_lines(value: Any) -> Any:
    if isinstance(value, dict):
        mapping = cast(dict[Any, Any], value)
        return {k: _strip_lines(v) for k, v in mapping.items() if k != "__line__"}
    if isinstance(value, list):
        return [_strip_lines(v) for v in cast(list[Any], value)]
    return value


def load_yaml(path: Path) -> dict[str, Any]:
    """A scenario document (mappings carry `__line__`).

    Raises:
        InvalidInput: not YAML, or not a mapping at the top.
    """
    try:
        doc = yaml.load(_read_document(path), Loader=_LineLoader)
    except yaml.YAMLError as exc:
        raise InvalidInput(f"{path.name} is not valid YAML: {exc}") from exc
    if not isinstance(doc, dict):
        raise InvalidInput(
            f"{path.name}: a scenario is a mapping with entities, events, facts, causal_links"
        )
    return cast(dict[str, Any], doc)


def iter_scenario(doc: dict[str, Any]) -> Iterator[Item]:
    """Records of a scenario document (seed 000's format), with their YAML line numbers."""
    unknown = [
        k
        for k in doc
        if k not in SCENARIO_SECTIONS
        and k not in ("name", "description", "queries", "probes", "__line__")
    ]
    for key in unknown:
        yield (
            0,
            LineError(
                int(doc.get("__line__", 1)),
                f"unknown section {key!r}; use {', '.join(SCENARIO_SECTIONS)}, queries or probes",
            ),
        )
    for section, kind in SCENARIO_SECTIONS.items():
        items: Any = doc.get(section) or []
        if not isinstance(items, list):
            yield 0, LineError(int(doc.get("__line__", 1)), f"{section} must be a list")
            continue
        for item in cast(list[Any], items):
            line = (
                int(cast(dict[str, Any], item).get("__line__", 0)) if isinstance(item, dict) else 0
            )
            data = _strip_lines(item)
            if isinstance(data, dict) and "kind" not in data:
                data = {"kind": kind, **cast(dict[str, Any], data)}
            yield line, parse_record(data, line)


def iter_yaml(path: Path) -> Iterator[Item]:
    """Records of a scenario YAML file."""
    yield from iter_scenario(load_yaml(path))


def iter_records(path: Path, fmt: str) -> Iterator[Item]:
    """Records of a memory file in one of `MEMORY_FORMATS`.

    Raises:
        InvalidInput: an unknown format, or a whole-document error (JSON/YAML).
    """
    if fmt == "jsonl":
        return iter_jsonl(path)
    if fmt == "json":
        return iter_json(path)
    if fmt == "yaml":
        return iter_yaml(path)
    if fmt == "cypher":
        return iter_cypher(path)
    raise InvalidInput(f"{fmt!r} is not a memory format; use one of {', '.join(MEMORY_FORMATS)}")


def count_lines(path: Path) -> int:
    """Lines in a file (for progress totals), read in 1 MiB blocks."""
    n = 0
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            n += block.count(b"\n")
    return n
