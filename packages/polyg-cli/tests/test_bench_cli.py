"""`polyg bench scale` and `polyg bench retrieval` at toy sizes: the commands run end to end."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from polyg_cli.app import app
from typer.testing import CliRunner

DATASET = {
    "conversations": [
        {
            "id": "c1",
            "speakers": ["Ana", "Ben"],
            "sessions": [
                {
                    "id": "s1",
                    "date_time": "2025-03-01T10:00:00Z",
                    "turns": [
                        {
                            "id": "t1",
                            "speaker": "Ana",
                            "text": "I adopted a cat named Miso last week.",
                        },
                        {
                            "id": "t2",
                            "speaker": "Ben",
                            "text": "The build broke because the cache was full.",
                        },
                    ],
                }
            ],
        }
    ],
    "questions": [
        {
            "conversation_id": "c1",
            "question": "What is the name of Ana's cat?",
            "answer": "Miso",
            "evidence": ["t1"],
            "category": "single-hop",
        },
        {
            "conversation_id": "c1",
            "question": "Why did the build break?",
            "answer": "cache full",
            "evidence": ["t2"],
            "category": "causal",
        },
    ],
}


def test_bench_scale_runs_at_a_toy_size(env: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "scale.json"
    result = CliRunner().invoke(
        app,
        [
            "bench",
            "scale",
            "--size",
            "200",
            "--iterations",
            "3",
            "--recall-iterations",
            "2",
            "--json",
            str(out),
        ],
        env=env,
    )
    assert result.exit_code == 0, result.stdout + result.stderr
    data = json.loads(out.read_text())
    assert data["rows"][0]["entities"] == 200
    names = {t["name"] for t in data["rows"][0]["timings"]}
    assert names  # every measured read reports p50/p95/p99
    assert "p50" in result.stdout


def test_bench_retrieval_reports_recall_against_baselines(
    env: dict[str, str], tmp_path: Path
) -> None:
    dataset = tmp_path / "tiny.json"
    dataset.write_text(json.dumps(DATASET))
    result = CliRunner().invoke(app, ["bench", "retrieval", str(dataset)], env=env)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "R@5" in result.stdout
    assert "bm25" in result.stdout.lower()
    assert "namespaces deleted" in result.stdout


def test_bench_retrieval_keeps_the_data_and_prints_the_ablation(
    env: dict[str, str], tmp_path: Path
) -> None:
    data = json.loads(json.dumps(DATASET))
    turns = data["conversations"][0]["sessions"][0]["turns"]
    turns += [
        {"id": "t3", "speaker": "Ben", "text": " "},
        {"id": "t4", "speaker": "Ana", "text": turns[0]["text"]},
    ]
    data["questions"][0]["evidence"] = ["t4", "t404"]
    dataset = tmp_path / "tiny.json"
    dataset.write_text(json.dumps(data))
    kept, out = tmp_path / "kept", tmp_path / "out.json"

    result = CliRunner().invoke(
        app,
        [
            "bench",
            "retrieval",
            str(dataset),
            "--retrievers",
            "lexical,dense",
            "--ablation",
            "--keep",
            str(kept),
            "--json",
            str(out),
        ],
        env=env,
    )

    assert result.exit_code == 0, result.stdout + result.stderr
    assert "1 empty turns skipped" in result.stdout
    assert "1 evidence ids naming no turn ignored" in result.stdout
    assert "| all - dense |" in result.stdout
    assert "invariant overall:" in result.stdout
    assert f"data kept in {kept}" in result.stdout
    assert "questions asked:" in result.stderr
    report = json.loads(out.read_text())
    assert [r["configuration"] for r in report["ablation"]] == [
        "all",
        "lexical",
        "dense",
        "all - lexical",
        "all - dense",
    ]
    # The repeated text is one memory that stands for both of its turns.
    cat = report["questions"][0]
    assert cat["ranked"]["polyg"][:2] == ["t1", "t4"]
    assert cat["memories"][0]["turns"] == ["t1", "t4"]
    assert set(cat["memories"][0]["retrievers"]) <= {"lexical", "dense"}
    listed = CliRunner().invoke(
        app, ["graphs", "list", "--json"], env={**env, "POLYG_DATA_DIR": str(kept)}
    )
    assert "bench_retrieval_0" in listed.stdout


def test_bench_retrieval_refuses_an_unknown_retriever(env: dict[str, str], tmp_path: Path) -> None:
    dataset = tmp_path / "tiny.json"
    dataset.write_text(json.dumps(DATASET))
    result = CliRunner().invoke(
        app, ["bench", "retrieval", str(dataset), "--retrievers", "lexical,psychic"], env=env
    )
    assert result.exit_code == 1
    assert "psychic" in result.stderr


def test_bench_load_and_profile_run_at_a_toy_size(env: dict[str, str]) -> None:
    load = CliRunner().invoke(
        app,
        [
            "bench",
            "load",
            "--entities",
            "50",
            "--clients",
            "2",
            "--workload",
            "direct",
            "--max-requests",
            "10",
            "--max-seconds",
            "5",
        ],
        env=env,
    )
    assert load.exit_code == 0, load.stdout + load.stderr
    assert "QPS" in load.stdout or "qps" in load.stdout
    profile = CliRunner().invoke(
        app, ["bench", "profile", "--entities", "50", "--calls", "1", "--top", "3"], env=env
    )
    assert profile.exit_code == 0, profile.stdout + profile.stderr
    assert "recall" in profile.stdout


def test_stats_and_graphs_list_as_json(env: dict[str, str]) -> None:
    graph = f"cli_{uuid.uuid4().hex[:10]}"
    made = CliRunner().invoke(
        app, ["remember", "Alice owns the auth-service.", "-g", graph], env=env
    )
    assert made.exit_code == 0, made.stdout
    stats = CliRunner().invoke(app, ["stats", "-g", graph, "--json"], env=env)
    assert stats.exit_code == 0, stats.stdout + stats.stderr
    assert "graphs" in json.loads(stats.stdout)
    listed = CliRunner().invoke(app, ["graphs", "list", "--json"], env=env)
    assert listed.exit_code == 0, listed.stdout + listed.stderr
    json.loads(listed.stdout)
    pretty = CliRunner().invoke(app, ["stats", "-g", graph], env=env)
    assert pretty.exit_code == 0
    CliRunner().invoke(app, ["graphs", "delete", graph, "--yes"], env=env)


def test_bench_extraction_prints_precision_recall_and_the_seed_table(tmp_path: Path) -> None:
    notes = {
        "reference": "2026-01-07T16:00:00Z",
        "notes": [
            {
                "id": "n1",
                "kind": "move",
                "text": "Alice moved from the payments team to the auth team on June 1st.",
                "entities": [["Alice", "person"], ["payments team", "team"], ["auth team", "team"]],
                "relations": [["Alice", "member_of", "auth team"]],
                "facts": [["Alice", "member_of", "auth team", "2025-06-01", None]],
            },
            {"id": "n2", "kind": "negative", "text": "ok, 14 is better", "forbidden": ["14"]},
        ],
    }
    path = tmp_path / "notes.json"
    path.write_text(json.dumps(notes))
    out = tmp_path / "out.json"
    result = CliRunner().invoke(app, ["bench", "extraction", str(path), "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "| entities | 3 | 3 | 1.0 | 1.0 | 1.0 |" in result.stdout
    assert "| Entity mention detection | >90% | 100.0% |" in result.stdout
    assert "left empty: 1/1" in result.stdout
    data = json.loads(out.read_text())
    assert data["labelled_set"] == str(path) and data["notes"] == 2 and data["forbidden"] == []


def test_bench_extraction_names_a_missing_set(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["bench", "extraction", str(tmp_path / "none.json")])
    assert result.exit_code == 1
    assert "no labelled set" in result.output


def test_bench_intents_prints_precision_recall_f1_per_intent(
    env: dict[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "intents.json"
    result = CliRunner().invoke(app, ["bench", "intents", "--json", str(out)], env=env)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "| intent | n | precision | recall | F1 |" in result.stdout
    data = json.loads(out.read_text())
    rows = {r["intent"]: r for r in data["types"]}
    assert set(rows) == {"WHY", "WHEN", "WHO", "WHAT", "EXPLORE", "accuracy"}
    assert rows["accuracy"]["n"] >= 300
    assert {r["part"] for r in data["parts"]} >= {"entities (exact set)"}
