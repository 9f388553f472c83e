"""The knowledge-update set: loading and checking cases, scoring answers, and a few cases run
end to end in a small and a (smaller than benchmark) large namespace."""

import json
from pathlib import Path

import pytest
from polyg_bench.updates import (
    SETS,
    UpdateQuestion,
    answer_right,
    filler_texts,
    load_cases,
    run_updates,
)
from polyg_core.errors import InvalidInput
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.storage.store import FalkorStore

pytestmark = pytest.mark.anyio


def test_the_shipped_set_has_enough_cases_of_each_kind() -> None:
    cases = load_cases()
    assert len(cases) >= 60
    assert {c.kind for c in cases} == {"person", "service", "preference"}
    tenses = [q.tense for c in cases for q in c.questions]
    assert tenses.count("present") >= 60
    assert tenses.count("past") >= 10


@pytest.mark.parametrize("name", [n for n in SETS if n != "ours"])
def test_each_set_written_apart_loads_with_questions_of_both_tenses(name: str) -> None:
    cases = load_cases(name=name)
    assert len(cases) >= 45
    tenses = [q.tense for c in cases for q in c.questions]
    assert all(c.questions for c in cases)
    assert tenses.count("present") >= 35
    assert tenses.count("past") >= 10
    assert len({c.id for c in cases}) == len(cases)


def test_an_unknown_set_is_refused_with_the_known_ones() -> None:
    with pytest.raises(InvalidInput, match="blind-1"):
        load_cases(name="blind-99")


def test_a_malformed_case_is_refused_with_its_line(tmp_path: Path) -> None:
    bad = tmp_path / "cases.jsonl"
    case = {
        "id": "x",
        "notes": [
            {"role": "old", "days": 5, "text": "Bo lives in Ayr."},
            {"role": "new", "days": 9, "text": "Bo moved to Oban."},
        ],
        "questions": [
            {"tense": "present", "q": "Where does Bo live?", "expect": "Oban", "stale": "Ayr"}
        ],
    }
    bad.write_text(json.dumps(case) + "\n", encoding="utf-8")
    with pytest.raises(InvalidInput, match=r"line 1.*later than the old"):
        load_cases(bad)
    bad.write_text("{not json\n", encoding="utf-8")
    with pytest.raises(InvalidInput, match="line 1: not JSON"):
        load_cases(bad)


def test_answer_right_wants_the_current_value_and_the_old_only_as_history() -> None:
    q = UpdateQuestion("present", "What do the CI pipelines run on?", "Buildkite", "Jenkins")
    note = "CI pipelines switched from Jenkins to Buildkite."
    assert answer_right("CI pipelines switched from Jenkins to Buildkite.", q, note)
    assert answer_right("Buildkite. Until 2026-05-01: CI runs on Jenkins.", q, note)
    assert not answer_right("Our CI pipelines run on Jenkins.", q, note)
    assert not answer_right("Jenkins, then Buildkite.", q, note)
    # A plural of the value gives it; a longer word does not.
    day = UpdateQuestion("present", "What day is the retro?", "Friday", "Wednesday")
    assert answer_right("The retro moved to Fridays.", day, "The retro moved to Fridays.")
    assert not answer_right("Fridayish, maybe.", day, "The retro moved to Fridays.")


def test_filler_is_the_same_every_run_and_distinct() -> None:
    first = filler_texts(500)
    assert first == filler_texts(500)
    assert len(set(first)) == 500


async def test_a_few_cases_put_the_current_note_first(
    store: FalkorStore, embedder: Embedder
) -> None:
    memory = Memory(store=store, embedder=embedder)
    cases = [c for c in load_cases() if c.id in {"svc-owner-notify", "person-city-jonah"}]
    report = await run_updates(memory, cases, filler=200, prefix="t_updates")
    assert {r.size for r in report.results} == {"small", "large"}
    for r in report.results:
        assert r.current_first, (r.size, r.question, r.first)
        assert not r.stale_first
        assert r.answer_right, (r.size, r.question, r.answer)
    assert not [g for g in await store.list_graphs() if g.startswith("t_updates")]
