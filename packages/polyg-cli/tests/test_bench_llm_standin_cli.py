"""`polyg bench retrieval --llm-standin MODEL`: LLM tokens and cost per call, offline."""

from __future__ import annotations

import json
from pathlib import Path

from polyg_cli.app import app
from typer.testing import CliRunner

TEXT = "Ana adopted a cat named Miso because the flat felt empty."
DATASET = {
    "conversations": [
        {
            "id": "c1",
            "speakers": ["Ana", "Ben"],
            "sessions": [
                {
                    "id": "s1",
                    "date_time": "2025-03-01T10:00:00Z",
                    "turns": [{"id": "t1", "speaker": "Ana", "text": TEXT}],
                }
            ],
        }
    ],
    "questions": [
        {
            "conversation_id": "c1",
            "question": "Why did Ana adopt Miso?",
            "answer": "the flat felt empty",
            "evidence": ["t1"],
            "category": "causal",
        }
    ],
}


def test_llm_standin_reports_priced_tokens_per_call(env: dict[str, str], tmp_path: Path) -> None:
    dataset = tmp_path / "tiny.json"
    dataset.write_text(json.dumps(DATASET))
    out = tmp_path / "out.json"

    result = CliRunner().invoke(
        app,
        [
            "bench",
            "retrieval",
            str(dataset),
            "--llm-standin",
            "openai/gpt-4o-mini",
            "--json",
            str(out),
        ],
        env=env,
    )

    assert result.exit_code == 0, result.stdout + result.stderr
    assert "openai/gpt-4o-mini (local stand-in" in result.stdout
    data = json.loads(out.read_text())
    remember, recall = data["usage"]
    assert remember["llm_calls_mean"] == 1.0
    assert recall["llm_calls_mean"] == 2.0
    assert remember["cost_usd_mean"] > 0 and recall["cost_usd_mean"] > 0
    assert remember["prompt_tokens_p50"] > 0 and recall["completion_tokens_p50"] > 0
    kinds = {row["kind"]: row["calls"] for row in data["llm_requests_by_kind"]}
    assert kinds == {"classifier": 1, "extractor": 1, "synthesizer": 1}
    # The LLM path gets what the extractive answer is built from.
    assert data["llm_plumbing"] == {
        "requests": 1,
        "with_question": 1,
        "with_answer_shape": 1,
        "with_context_nodes": 1,
    }
    # Answers are graded against the gold answer, per category.
    assert "token F1 against the gold answer" in result.stdout
    assert [(r["category"], r["n"]) for r in data["answers"]] == [("causal", 1), ("overall", 1)]
    assert sum(r["n"] for r in data["calibration"]) == 1


def test_without_an_llm_the_usage_table_is_zero(env: dict[str, str], tmp_path: Path) -> None:
    dataset = tmp_path / "tiny.json"
    dataset.write_text(json.dumps(DATASET))
    out = tmp_path / "out.json"

    result = CliRunner().invoke(
        app, ["bench", "retrieval", str(dataset), "--json", str(out)], env=env
    )

    assert result.exit_code == 0, result.stdout + result.stderr
    assert "none, rule-based path" in result.stdout
    for row in json.loads(out.read_text())["usage"]:
        assert row["total_tokens_mean"] == row["cost_usd_mean"] == row["llm_calls_mean"] == 0
