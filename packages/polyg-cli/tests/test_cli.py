"""The `polyg` command driven through typer's CliRunner against the embedded FalkorDB."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from polyg_cli.app import app
from typer.testing import CliRunner

RECORDS = [
    {"kind": "entity", "name": "auth-service", "type": "Service", "properties": {"tier": 1}},
    {"kind": "entity", "name": "Alice", "type": "Person"},
    {"kind": "relation", "source": "Alice", "target": "auth-service", "type": "owns"},
    {
        "kind": "event",
        "description": "Auth service crashed",
        "occurred_at": "2026-01-07T14:05:00Z",
        "entities": ["auth-service"],
    },
    {
        "kind": "fact",
        "subject": "Alice",
        "predicate": "works_on",
        "object": "Payments",
        "valid_from": "2024-01-01",
        "valid_to": "2025-05-31",
    },
    {
        "kind": "causal_link",
        "cause": "missing AUTH_SECRET",
        "effect": "auth service crash",
        "confidence": 0.95,
    },
]


def polyg(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


def jsonl(tmp_path: Path, rows: Sequence[object], name: str = "in.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def canonical(text: str) -> list[str]:
    return sorted(json.dumps(json.loads(line), sort_keys=True) for line in text.splitlines())


def test_version_prints_the_version() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.startswith("polyg ")


@pytest.mark.parametrize("fmt", ["jsonl", "json", "cypher"])
def test_export_then_import_reproduces_the_graph(
    env: dict[str, str], graph: str, tmp_path: Path, fmt: str
) -> None:
    code, out, err = polyg(env, "import", str(jsonl(tmp_path, RECORDS)), "--graph", graph, "--json")
    assert code == 0, err
    assert json.loads(out)["created"] == len(RECORDS)
    dump = tmp_path / f"dump.{fmt}"
    code, _, err = polyg(env, "export", "--graph", graph, "--format", fmt, "-o", str(dump))
    assert code == 0, err
    other = f"{graph}_copy"
    try:
        code, out, err = polyg(env, "import", str(dump), "--graph", other, "--json")
        assert code == 0, err
        assert json.loads(out)["failed"] == 0
        _, first, _ = polyg(env, "export", "--graph", graph, "--format", "jsonl")
        _, second, _ = polyg(env, "export", "--graph", other, "--format", "jsonl")
        assert canonical(second) == canonical(first)
    finally:
        polyg(env, "graphs", "delete", other, "--yes")


def test_reimport_creates_no_duplicates(env: dict[str, str], graph: str, tmp_path: Path) -> None:
    path = jsonl(tmp_path, RECORDS)
    polyg(env, "import", str(path), "--graph", graph)
    _, before, _ = polyg(env, "stats", "--graph", graph, "--json")
    code, out, _ = polyg(env, "import", str(path), "--graph", graph, "--json")
    assert code == 0
    assert json.loads(out)["created"] == 0 and json.loads(out)["merged"] == len(RECORDS)
    _, after, _ = polyg(env, "stats", "--graph", graph, "--json")
    assert json.loads(after)["total_nodes"] == json.loads(before)["total_nodes"]
    assert json.loads(after)["total_edges"] == json.loads(before)["total_edges"]


def test_bad_records_are_listed_with_line_numbers(
    env: dict[str, str], graph: str, tmp_path: Path
) -> None:
    path = jsonl(
        tmp_path,
        [
            RECORDS[0],
            '{"kind": "entity", "name": ["not", "a", "string"]}',
            '{"kind": "wormhole"}',
            "x" * (10 << 20),
            '{"kind": "entity", "name": "cut off',
        ],
    )
    code, out, _ = polyg(env, "import", str(path), "--graph", graph)
    assert code == 1
    assert "failed records" in out
    for line in ("2", "3", "4", "5"):
        assert f"│ {line} │" in out or f"┃ {line} ┃" in out or f" {line} " in out
    assert "unknown kind 'wormhole'" in out
    assert "longer than" in out


def test_strict_leaves_the_graph_untouched(env: dict[str, str], graph: str, tmp_path: Path) -> None:
    path = jsonl(
        tmp_path, [RECORDS[0], '{"kind": "event", "description": "x", "occurred_at": 5.5.5}']
    )
    code, out, _ = polyg(env, "import", str(path), "--graph", graph, "--strict", "--json")
    assert code == 1
    report = json.loads(out)
    assert report["aborted"] and report["errors"][0]["line"] == 2
    code, _, err = polyg(env, "stats", "--graph", graph)
    assert code == 1 and "no graph" in err


def test_import_exits_non_zero_when_every_record_failed(
    env: dict[str, str], graph: str, tmp_path: Path
) -> None:
    path = jsonl(tmp_path, ['{"kind": "relation", "source": "a", "target": "A", "type": "x"}'])
    code, out, _ = polyg(env, "import", str(path), "--graph", graph, "--json")
    assert code == 1
    assert json.loads(out)["failed"] == 1 and json.loads(out)["created"] == 0


def test_dry_run_validates_without_writing(env: dict[str, str], graph: str, tmp_path: Path) -> None:
    code, out, _ = polyg(env, "import", str(jsonl(tmp_path, RECORDS)), "-g", graph, "--dry-run")
    assert code == 0 and "nothing was written" in out
    _, listing, _ = polyg(env, "graphs", "--json")
    assert graph not in [g["name"] for g in json.loads(listing)]


def test_truncated_json_document_is_a_user_error(
    env: dict[str, str], graph: str, tmp_path: Path
) -> None:
    path = tmp_path / "cut.json"
    path.write_text('{"records": [{"kind": "entity", "name": "a"}, {"kind": "ent')
    code, _, err = polyg(env, "import", str(path), "--graph", graph)
    assert code == 1 and "not valid JSON" in err


def test_yaml_scenario_imports(env: dict[str, str], graph: str, tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "entities:\n  - name: PostgreSQL\n    type: Database\n"
        "events:\n  - description: Pool exhausted\n    occurred_at: '2026-01-05T09:15:00Z'\n"
        "    entities: [PostgreSQL]\n"
        "causal_links:\n  - cause: Traffic spike\n    effect: pool exhaustion\n    confidence: 0.9\n"
        "  - cause: x\n    effect: y\n    confidence: 7\n"
    )
    code, out, _ = polyg(env, "import", str(path), "--graph", graph, "--json")
    report = json.loads(out)
    assert code == 1 and report["created"] == 3
    assert report["errors"][0]["line"] == 12 and "confidence" in report["errors"][0]["message"]


def test_csv_goes_to_a_scratch_graph_and_exports_as_dot(
    env: dict[str, str], graph: str, tmp_path: Path
) -> None:
    path = tmp_path / "g.csv"
    path.write_text("source,target,relation\nA,B,calls\nB,C,calls\n")
    code, out, err = polyg(env, "import", str(path), "--graph", graph)
    assert code == 0, err
    assert "3 nodes added" in out
    code, out, _ = polyg(env, "export", "--graph", graph, "--format", "dot")
    assert code == 0 and "digraph" in out and '"A"' in out


def test_unknown_graph_and_unknown_format_are_user_errors(
    env: dict[str, str], tmp_path: Path
) -> None:
    code, _, err = polyg(env, "export", "--graph", "no_such_graph_x", "--format", "jsonl")
    assert code == 1 and "polyg graphs" in err
    odd = tmp_path / "data.txt"
    odd.write_text("hello")
    code, _, err = polyg(env, "import", str(odd))
    assert code == 1 and "--format" in err


def test_unreachable_falkordb_is_an_environment_error() -> None:
    env = {"FALKORDB_HOST": "127.0.0.1", "FALKORDB_PORT": "1", "POLYG_MAX_RETRIES": "0"}
    code, _, err = polyg(env, "stats")
    assert code == 2 and "127.0.0.1:1" in err and "polyg doctor" in err


def test_a_bad_environment_variable_is_named_before_anything_runs() -> None:
    code, _, err = polyg({"FALKORDB_PORT": "sixty", "POLYG_LOG_LEVEL": "loud"}, "stats")
    assert code == 2
    assert "invalid configuration" in err and "FALKORDB_PORT='sixty'" in err
    assert "POLYG_LOG_LEVEL='loud'" in err and "Traceback" not in err


def test_doctor_reports_each_check(env: dict[str, str]) -> None:
    code, out, _ = polyg(env, "doctor", "--json")
    checks = {c["name"]: c for c in json.loads(out)["checks"]}
    assert code == 0
    assert checks["FalkorDB"]["ok"] and checks["embeddings"]["ok"]
    assert checks["LLM"]["ok"] is None and "LLM_MODEL" in checks["LLM"]["fix"]


@pytest.mark.slow
def test_demo_answers_why_with_the_causal_chain(env: dict[str, str], graph: str) -> None:
    code, out, err = polyg(env, "demo", "--graph", graph, "--json")
    assert code == 0, err
    result = json.loads(out)
    why = result["answers"][0]
    assert why["question"] == "Why did the auth service crash?"
    steps = [(s["cause"], s["effect"]) for s in why["reasoning"]["causal_chain"]]
    assert ("missing AUTH_SECRET", "auth service crash") in steps
    assert ("deploy-v2.3.1", "missing AUTH_SECRET") in steps
    assert "AUTH_SECRET" in why["answer"]
    who = result["answers"][2]
    assert "Alice" in who["answer"]


def test_a_json_record_over_the_jsonl_line_limit_is_refused(
    env: dict[str, str], graph: str, tmp_path: Path
) -> None:
    from polyg_core.transfer.records import MAX_LINE_BYTES

    huge = {
        "kind": "entity",
        "name": "big",
        "type": "Blob",
        "properties": {"data": "x" * (MAX_LINE_BYTES + 10)},
    }
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"records": [RECORDS[0], huge]}))
    code, out, _ = polyg(env, "import", str(path), "--graph", graph, "--json")
    report = json.loads(out)
    assert code == 1
    assert report["created"] >= 1 and report["failed"] == 1
    assert "over the 1048576-byte limit" in json.dumps(report["errors"])
    _, dump, _ = polyg(env, "export", "--graph", graph, "--format", "jsonl")
    names = [json.loads(line).get("name") for line in dump.splitlines()]
    assert "auth-service" in names and "big" not in names
