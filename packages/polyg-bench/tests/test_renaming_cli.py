"""`polyg bench retrieval --renamed-speakers K` end to end on a tiny invented dataset."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from polyg_bench.renaming import NAME_PAIRS
from polyg_core.storage.embedded import EmbeddedFalkorDB

cli = pytest.importorskip("polyg_cli.app", reason="the polyg command is in polyg-cli")
testing = pytest.importorskip("typer.testing", reason="the polyg command is in polyg-cli")


def _turns(*said: tuple[str, str, str]) -> list[dict[str, str]]:
    return [{"id": tid, "speaker": who, "text": text} for tid, who, text in said]


# Two invented people over three sessions; Wendeline is called "Wen" once.
DATASET: dict[str, Any] = {
    "conversations": [
        {
            "id": "g1",
            "speakers": ["Wendeline", "Osric"],
            "sessions": [
                {
                    "id": "g1s1",
                    "date_time": "2025-05-03T10:00:00Z",
                    "turns": _turns(
                        ("g1:1", "Wendeline", "I repaired an old sailing boat called Heron."),
                        ("g1:2", "Osric", "Wendeline, I joined a choir that sings on Tuesdays."),
                    ),
                },
                {
                    "id": "g1s2",
                    "date_time": "2025-06-14T18:00:00Z",
                    "turns": _turns(
                        ("g1:3", "Osric", "Wen, the choir asked me to sing a solo."),
                        ("g1:4", "Wendeline", "Heron sank because a plank in the hull split."),
                    ),
                },
                {
                    "id": "g1s3",
                    "date_time": "2025-07-20T09:00:00Z",
                    "turns": _turns(
                        ("g1:5", "Wendeline", "Osric's solo at the harvest concert was lovely."),
                        ("g1:6", "Osric", "I bought a bicycle to ride to rehearsals."),
                    ),
                },
            ],
        }
    ],
    "questions": [
        {
            "conversation_id": "g1",
            "question": "Why did Wendeline's boat sink?",
            "answer": "a plank in the hull split",
            "evidence": ["g1:4"],
            "category": "causal",
        },
        {
            "conversation_id": "g1",
            "question": "What did the choir ask Osric to do?",
            "answer": "sing a solo",
            "evidence": ["g1:3"],
            "category": "single-hop",
        },
    ],
}


@pytest.fixture
def env(falkordb_server: EmbeddedFalkorDB) -> dict[str, str]:
    """The CLI pointed at the session's embedded server, with no model."""
    return {"POLYG_DATA_DIR": str(falkordb_server.data_dir), "LLM_MODEL": "", "NO_COLOR": "1"}


def _invoke(args: list[str], env: dict[str, str]) -> Any:
    return testing.CliRunner().invoke(cli.app, args, env=env)


def test_one_renamed_variant_is_asked_and_compared_with_the_dataset_as_given(
    env: dict[str, str], tmp_path: Path
) -> None:
    dataset, out = tmp_path / "tiny.json", tmp_path / "out.json"
    dataset.write_text(json.dumps(DATASET))
    result = _invoke(
        ["bench", "retrieval", str(dataset), "--renamed-speakers", "1", "--json", str(out)], env
    )
    assert result.exit_code == 0, result.stdout + result.stderr
    first, second = NAME_PAIRS[0]
    assert "renamed speakers:" in result.stdout
    assert f"| overall | variant 1 | {first}, {second} | 2 |" in result.stdout
    for run in ("as given", "mean", "min", "as given - mean"):
        assert f"| overall | {run} |" in result.stdout
    assert "renamed-speaker namespaces deleted: bench_retrieval_renamed1_0" in result.stdout
    assert "renamed speakers, variant 1/1: questions asked: 2/2" in result.stderr
    report = json.loads(out.read_text())
    renamed = report["renamed_speakers"]
    assert len(renamed["variants"]) == 1
    variant = renamed["variants"][0]
    assert variant["names"] == {"g1": {"Wendeline": first, "Osric": second}}
    assert {r["category"] for r in variant["table"]} == {"causal", "single-hop", "overall"}
    rows = [r for r in renamed["comparison"] if r["category"] == "overall"]
    assert [r["run"] for r in rows] == [
        "as given",
        "variant 1",
        "mean",
        "min",
        "as given - mean",
    ]
    # One variant: its mean and minimum are itself.
    assert rows[1]["R@5"] == rows[2]["R@5"] == rows[3]["R@5"]
    given = {r["category"]: r for r in report["table"] if r["system"] == "polyg"}
    assert rows[0]["R@10"] == given["overall"]["R@10"]
    listed = _invoke(["graphs", "list", "--json"], env)
    assert "bench_retrieval_renamed1" not in listed.stdout


def test_a_variant_count_out_of_range_is_refused_before_anything_runs(
    env: dict[str, str], tmp_path: Path
) -> None:
    dataset = tmp_path / "tiny.json"
    dataset.write_text(json.dumps(DATASET))
    for bad in (str(len(NAME_PAIRS) + 1), "-1"):
        result = _invoke(["bench", "retrieval", str(dataset), "--renamed-speakers", bad], env)
        assert result.exit_code == 1, result.stdout
        assert f"give 1 to {len(NAME_PAIRS)}" in result.stderr
        assert "Traceback" not in result.stdout + result.stderr
        assert "turns ingested" not in result.stderr


def test_help_describes_the_option_with_the_lists_length() -> None:
    result = _invoke(["bench", "retrieval", "--help"], {"NO_COLOR": "1", "COLUMNS": "200"})
    assert result.exit_code == 0
    text = " ".join(result.stdout.split())
    assert "--renamed-speakers" in text
    assert f"(1 to {len(NAME_PAIRS)}, 0 = off)" in text
