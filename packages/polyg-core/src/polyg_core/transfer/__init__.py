"""Import and export of memory namespaces: polyg's JSONL records, JSON, Cypher dumps and
seed 000's scenario YAML (docs/import-format.md)."""

from polyg_core.transfer.export import iter_export, record_json, write_json, write_jsonl
from polyg_core.transfer.reader import (
    GRAPH_FORMATS,
    MEMORY_FORMATS,
    count_lines,
    detect_format,
    is_graph_json,
    iter_records,
)
from polyg_core.transfer.records import KINDS, RECORD, LineError, Record
from polyg_core.transfer.writer import ImportReport, KindCounts, RecordWriter

__all__ = [
    "GRAPH_FORMATS",
    "KINDS",
    "MEMORY_FORMATS",
    "RECORD",
    "ImportReport",
    "KindCounts",
    "LineError",
    "Record",
    "RecordWriter",
    "count_lines",
    "detect_format",
    "is_graph_json",
    "iter_export",
    "iter_records",
    "record_json",
    "write_json",
    "write_jsonl",
]
