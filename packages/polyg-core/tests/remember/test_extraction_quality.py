"""The rule extractor's quality on the labelled notes stays above what it reached.

The set (tests/remember/data/extraction_notes.json) was written for these tests; the
thresholds are the measured scores minus a margin, so a change that loses quality fails
here. `polyg bench extraction` prints the full tables (docs/benchmarks.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from polyg_bench.extraction import (
    ExtractionReport,
    LabelledSet,
    evaluate_extraction,
    load_labelled_set,
)
from polyg_core.errors import InvalidInput

NOTES = Path(__file__).parent / "data" / "extraction_notes.json"


def _report(split: str | None = None) -> ExtractionReport:
    labelled = load_labelled_set(NOTES)
    notes = [n for n in labelled.notes if split is None or n.split == split]
    return evaluate_extraction(LabelledSet(reference=labelled.reference, notes=notes))


def test_the_labelled_set_is_large_and_varied() -> None:
    notes = load_labelled_set(NOTES).notes
    assert len(notes) >= 100
    kinds = {n.kind for n in notes}
    assert {"ops", "move", "project", "chat", "dated", "negative"} <= kinds
    assert sum(1 for n in notes if n.known) >= 10
    assert len({n.id for n in notes}) == len(notes)


def test_quality_on_the_whole_set_meets_the_floors() -> None:
    report = _report()
    scores = report.scores
    assert scores["entities"].precision >= 0.93
    assert scores["entities"].recall >= 0.88
    assert scores["relations"].precision >= 0.9
    assert scores["relations"].recall >= 0.82
    assert scores["facts"].precision >= 0.85
    assert scores["facts"].recall >= 0.82
    assert scores["causal links"].precision >= 0.85
    assert scores["causal links"].recall >= 0.85
    # Seed 000's table: mention detection > 90%, type > 85%, resolution to existing > 80%.
    assert report.mention_detection >= 0.9
    assert report.type_accuracy >= 0.9
    assert report.resolution >= 0.85
    assert report.empty_kept_empty == report.empty_notes
    assert len(report.forbidden) <= 2


def test_quality_on_the_held_out_notes_meets_lower_floors() -> None:
    report = _report("heldout")
    assert report.notes >= 30
    assert report.scores["entities"].precision >= 0.9
    assert report.scores["entities"].recall >= 0.8
    assert report.scores["facts"].recall >= 0.75
    assert report.type_accuracy >= 0.85


def test_a_missing_or_malformed_set_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="no labelled set"):
        load_labelled_set(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"notes": [{"id": "x"}]}')
    with pytest.raises(InvalidInput, match="not a labelled set"):
        load_labelled_set(bad)
