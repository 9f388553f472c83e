"""The retrieval harness: dataset loading, scoring recalled memories, keep and ablation."""

import json
import logging
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from polyg_bench.dataset import Dataset, load_dataset
from polyg_bench.retrieval import (
    QuestionResult,
    RetrievalReport,
    ablation_configs,
    ranked_turns,
    recall_at,
    run_retrieval,
    turn_groups,
    within_budget,
)
from polyg_core.errors import InvalidInput
from polyg_core.memory import Memory
from polyg_core.storage.store import FalkorStore
from polyg_shared.retrieval import RETRIEVERS, RecalledMemory

pytestmark = pytest.mark.anyio

SHIPPED = Path(__file__).parents[3] / "scripts" / "retrieval_dataset.json"
MEET = "Let's meet at the lighthouse cafe on Friday."


def _session(sid: str, when: str, turns: list[tuple[str, str, str]]) -> dict[str, Any]:
    return {
        "id": sid,
        "date_time": when,
        "turns": [{"id": i, "speaker": who, "text": text} for i, who, text in turns],
    }


def _question(question: str, evidence: list[str], category: str) -> dict[str, Any]:
    return {
        "conversation_id": "c",
        "question": question,
        "evidence": evidence,
        "category": category,
    }


# Three sessions, eleven turns worth ingesting, one blank turn, one text said twice
# (t3 and t8), and one evidence id (t99) that names no turn.
TINY: dict[str, Any] = {
    "conversations": [
        {
            "id": "c",
            "speakers": ["Ann", "Bo"],
            "sessions": [
                _session(
                    "s1",
                    "2025-01-05T10:00:00Z",
                    [
                        ("t1", "Ann", "I adopted a dog named Pixel from the shelter."),
                        ("t2", "Bo", "I moved to Oslo for a job at the harbour office."),
                        ("t3", "Ann", MEET),
                        ("t4", "Bo", "   "),
                    ],
                ),
                _session(
                    "s2",
                    "2025-02-10T18:00:00Z",
                    [
                        ("t5", "Bo", "I started learning the cello in January."),
                        ("t6", "Ann", "Pixel got sick because he ate chocolate."),
                        ("t7", "Bo", "Sounds good to me."),
                        ("t8", "Ann", MEET),
                    ],
                ),
                _session(
                    "s3",
                    "2025-03-20T09:00:00Z",
                    [
                        ("t9", "Bo", "My sister Ingrid visited me in Oslo last weekend."),
                        ("t10", "Ann", "Pixel is healthy again after the vet visit."),
                        ("t11", "Bo", "The harbour office closed for renovation."),
                        ("t12", "Ann", "I bought a red kayak for the summer."),
                    ],
                ),
            ],
        }
    ],
    "questions": [
        _question("Why did Pixel get sick?", ["t6"], "causal"),
        _question("Where did Bo move for his job?", ["t2", "t99"], "single-hop"),
        _question(
            "Where are Ann and Bo meeting on Friday at the lighthouse?", ["t8"], "single-hop"
        ),
        _question("Who visited Bo in Oslo?", ["t9"], "multi-hop"),
    ],
}


def _write(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(data))
    return path


def test_shipped_dataset_is_valid_and_covers_every_category() -> None:
    data = load_dataset(SHIPPED)
    assert len(data.conversations) >= 3
    cats = {q.category for q in data.questions}
    assert {"single-hop", "multi-hop", "temporal", "causal"} <= cats
    dates = [s.date_time for c in data.conversations for s in c.sessions]
    assert min(dates)[:7] != max(dates)[:7]  # spans months


def test_unknown_evidence_is_ignored_with_a_warning_and_empty_turns_load(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="polyg_bench.dataset"):
        data = load_dataset(_write(tmp_path, TINY))
    assert data.ignored_evidence == [(1, "t99")]
    assert data.skipped_questions == 0
    assert [q.evidence for q in data.questions][1] == ["t2"]
    assert "t99" in caplog.text
    # The blank turn loads but is not a text to ingest.
    assert "t4" not in data.turn_texts("c")
    assert len(data.turn_texts("c")) == 11


def test_a_question_left_without_evidence_is_skipped_and_counted(tmp_path: Path) -> None:
    data = json.loads(json.dumps(TINY))
    data["questions"][0]["evidence"] = ["nope"]
    data["questions"][3]["conversation_id"] = "no-such-conversation"
    loaded = load_dataset(_write(tmp_path, data))
    assert loaded.skipped_questions == 2
    assert [q.question for q in loaded.questions] == [q["question"] for q in data["questions"][1:3]]


def test_a_file_that_is_not_json_says_so(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text("{nope")
    with pytest.raises(InvalidInput, match="not JSON"):
        load_dataset(path)


@given(
    st.lists(st.sampled_from("abcdefgh"), unique=True),
    st.lists(st.sampled_from("abcdefgh"), min_size=1, unique=True),
    st.integers(1, 10),
)
def test_recall_at_k_is_a_fraction_that_grows_with_k(
    ranked: list[str], evidence: list[str], k: int
) -> None:
    r = recall_at(ranked, evidence, k)
    assert 0.0 <= r <= 1.0
    assert recall_at(ranked, evidence, k + 1) >= r


def test_a_memory_stands_for_every_turn_with_its_text() -> None:
    # t3 has t1's words with other spacing: remember stores them as one memory.
    turns = {"t1": "Ann: hello there", "t2": "Bo: hi", "t3": "Ann: hello  there "}
    groups = turn_groups(turns)
    hit = RecalledMemory(uuid="m1", content="Ann: hello there", source_id="t1", score=1.0)
    other = RecalledMemory(uuid="m2", content="Bo: hi", source_id="t2", score=0.5)
    assert ranked_turns([hit, other], turns, groups, 20) == ["t1", "t3", "t2"]
    assert ranked_turns([hit, other], turns, groups, 1) == ["t1"]


def test_ablation_has_each_retriever_alone_and_left_out() -> None:
    configs = ablation_configs(["lexical", "dense", "time"])
    assert configs == {
        "lexical": ("lexical",),
        "dense": ("dense",),
        "time": ("time",),
        "all - lexical": ("dense", "time"),
        "all - dense": ("lexical", "time"),
        "all - time": ("lexical", "dense"),
    }


def test_ablation_leaves_the_graph_side_out_together() -> None:
    configs = ablation_configs(["lexical", "dense", "entity", "graph", "time"])
    assert configs["all - graph side"] == ("lexical", "dense")
    assert "all - graph side" not in ablation_configs(["lexical", "time"])


def test_invariant_lists_where_a_single_retriever_beats_polyg() -> None:
    report = RetrievalReport(
        retrievers=["lexical", "dense"], configurations=ablation_configs(["lexical", "dense"])
    )
    report.questions = [
        QuestionResult(
            "c",
            "q",
            "single-hop",
            ["t1"],
            ranked={"polyg": ["t2", "t1"]},
            ablation={"lexical": ["t1"], "dense": ["t3"]},
        )
    ]
    rows = {r["category"]: r for r in report.invariant()}
    assert not rows["single-hop"]["holds"]
    assert rows["single-hop"]["violations"] == ["R@1 polyg 0.000 < lexical 1.000"]
    assert [r["configuration"] for r in report.ablation_table()][:3] == ["all", "lexical", "dense"]


async def test_recalled_memories_are_scored_against_the_evidence(
    store: FalkorStore, embedder: Any, namespace: str
) -> None:
    memory = Memory(store=store, embedder=embedder)
    with anyio.fail_after(120):
        report = await run_retrieval(
            memory, Dataset.model_validate(TINY), namespace_prefix=namespace
        )
    assert (report.turns, report.empty_turns, report.identical_turns) == (11, 1, 1)
    assert (report.ignored_evidence, report.skipped_questions) == (1, 0)
    assert len(report.questions) == 4
    # t8 repeats t3, stored once as t3's memory: finding that memory finds t8.
    meet = report.questions[2]
    assert meet.evidence == ["t8"]
    assert recall_at(meet.ranked["polyg"], meet.evidence, 5) == 1.0
    assert any(h.turns[:2] == ["t3", "t8"] for h in meet.memories)
    assert all(h.retrievers for h in meet.memories)
    systems = {row["system"] for row in report.table()}
    assert systems == {"polyg", "bm25", "dense"}
    assert report.remember_usage["llm_calls"] == 0
    # Every recall asked FalkorDB something, and the report counts it per recall.
    assert len(report.recall_round_trips) == len(report.questions)
    assert all(n > 0 for n in report.recall_round_trips)
    assert report.timings()["recall_round_trips"] > 0
    assert f"{namespace}_0" not in await store.list_graphs()


async def test_keep_leaves_the_data_and_ablation_asks_each_configuration(
    store: FalkorStore, embedder: Any, namespace: str
) -> None:
    memory = Memory(store=store, embedder=embedder)
    data = Dataset.model_validate(TINY)
    kept = f"{namespace}_0"
    try:
        with anyio.fail_after(300):
            report = await run_retrieval(
                memory, data, namespace_prefix=namespace, keep=True, ablation=True
            )
        assert kept in await store.list_graphs()
        rows = {r["configuration"]: r for r in report.ablation_table()}
        assert set(rows) == {"all", "all - graph side"} | set(RETRIEVERS) | {
            f"all - {r}" for r in RETRIEVERS
        }
        assert all("R@10 single-hop" in r for r in rows.values())
        assert {r["category"] for r in report.invariant()} == {
            "causal",
            "multi-hop",
            "single-hop",
            "overall",
        }
        # Recall reads only: asking again on the kept data ranks the same memories.
        q = data.questions[0]
        again = await memory.recall(
            q.question, graph=kept, reference_time="2025-03-20T09:00:00Z", memory_limit=20
        )
        first = report.questions[0].memories
        assert [m.uuid for m in again.memories] == [m.uuid for m in first]
    finally:
        await store.delete_graph(kept)


def test_answer_token_f1_is_locomos_normalised_overlap() -> None:
    from polyg_bench.answers import normalize_answer, token_f1

    assert normalize_answer("The  Weekend, before 20 October!") == "weekend before 20 october"
    assert token_f1("7 May 2023", "7 May 2023") == 1.0
    # "on 7 may 2023 at group": three of six tokens are the gold's.
    assert token_f1("On 7 May 2023, at the group.", "7 May 2023") == pytest.approx(
        2 * (3 / 6) * 1.0 / (3 / 6 + 1.0)
    )
    assert token_f1("nothing shared", "7 May 2023") == 0.0
    assert token_f1("", "7 May 2023") == 0.0


def test_calibration_buckets_answers_by_confidence() -> None:
    from polyg_bench.answers import (
        calibration_table,
        expected_calibration_error,
        f1_table,
        grade,
    )

    graded = [
        grade("temporal", "7 May 2023", "7 May 2023", 0.9),
        grade("temporal", "in June", "7 May 2023", 0.85),
        grade("single-hop", "a cat", "a dog named Pixel", 0.3),
        grade("single-hop", "Pixel", "a dog named Pixel", 1.0),
    ]
    rows = calibration_table(graded)
    assert [r["n"] for r in rows] == [0, 0, 0, 1, 0, 0, 0, 0, 1, 2]
    assert rows[-1]["confidence"] == "[0.9, 1.0]"
    # "Pixel" shares one of the gold's three tokens: F1 0.5, right.
    assert rows[-1]["right"] == 2 and rows[-1]["accuracy"] == 1.0
    assert rows[8]["right"] == 0 and rows[3]["right"] == 0
    # |0.3 - 0| + |0.85 - 0| + 2 x |0.95 - 1|, over four answers.
    assert expected_calibration_error(graded) == pytest.approx((0.3 + 0.85 + 0.1) / 4, abs=1e-4)
    assert expected_calibration_error([]) is None
    by_cat = {r["category"]: r for r in f1_table(graded)}
    assert by_cat["temporal"]["n"] == 2 and by_cat["temporal"]["right"] == 0.5
    assert by_cat["single-hop"]["right"] == 0.5
    assert by_cat["overall"]["n"] == 4


def test_the_labelled_intent_set_is_large_and_scored_per_type() -> None:
    from polyg_bench.intents import TYPES, classify_all, load_questions

    questions = load_questions()
    assert len(questions.questions) >= 300
    assert {q.type for q in questions.questions} == set(TYPES)
    assert any(q.timeframe for q in questions.questions)
    assert any(q.direction == "downstream" for q in questions.questions)
    report = classify_all(questions)
    rows = {r["intent"]: r for r in report.type_table()}
    assert sum(rows[t]["n"] for t in TYPES) == len(questions.questions)
    assert all(0.0 <= rows[t]["F1"] <= 1.0 for t in TYPES)
    parts = {r["part"]: r for r in report.parts_table()}
    assert parts["causal direction (WHY)"]["n"] == sum(
        1 for q in questions.questions if q.type == "WHY"
    )


def test_an_intent_set_without_types_is_refused(tmp_path: Path) -> None:
    from polyg_bench.intents import load_questions

    bad = tmp_path / "bad.yaml"
    bad.write_text("reference_time: '2026-01-14T12:00:00Z'\nquestions:\n- question: Why?\n")
    with pytest.raises(InvalidInput, match="question 1"):
        load_questions(bad)


async def test_scenario_answers_are_checked_against_their_expectations(
    store: FalkorStore, embedder: Any, namespace: str
) -> None:
    from polyg_bench.answers import (
        calibration_table,
        check_expected,
        kind_table,
        run_scenario_answers,
        scenario_graded,
    )

    assert check_expected("At 2026-01-05 09:15 UTC", ["2026-01-05T09:15"], ["pool size 20"]) == (
        [],
        [],
    )
    assert check_expected("pool size 20", ["pool size 50"], ["pool size 20"]) == (
        ["pool size 50"],
        ["pool size 20"],
    )
    memory = Memory(store=store, embedder=embedder)
    with anyio.fail_after(180):
        answers = await run_scenario_answers(
            memory, ["deployment_failure"], namespace_prefix=namespace
        )
    queries = [a for a in answers if a.kind == "answerable"]
    probes = [a for a in answers if a.kind != "answerable"]
    assert [a.question for a in queries] == [
        "Why did the auth service crash?",
        "When did the auth service crash?",
        "Who owns the auth service?",
    ]
    assert all(a.right for a in queries), [(a.question, a.missing) for a in queries]
    assert all(0.0 < a.confidence < 1.0 for a in answers)
    # The probes expect what the data does not hold: none is right, and each is less sure
    # than every answerable query (the calibration the buckets show).
    assert {a.kind for a in probes} >= {"wrong_entity", "wrong_time", "unanswerable", "partial"}
    assert not any(a.right for a in probes)
    assert max(a.confidence for a in probes) < min(a.confidence for a in queries)
    assert all("match" in a.factors for a in answers)
    rows = calibration_table(scenario_graded(answers))
    assert sum(r["n"] for r in rows) == len(answers)
    assert {r["kind"]: r["n"] for r in kind_table(answers)}["answerable"] == 3
    assert f"{namespace}_deployment_failure" not in await store.list_graphs()


def test_within_budget_takes_turns_best_first_and_never_exceeds_it() -> None:
    texts = {"a": "x" * 40, "b": "y" * 400, "c": "z" * 20}  # 11, 101 and 6 tokens
    assert within_budget(["a", "b", "c"], texts, 20) == ["a", "c"]  # b does not fit
    assert within_budget(["a", "b", "c"], texts, 200) == ["a", "b", "c"]
    assert within_budget(["b"], texts, 100) == []
    report = RetrievalReport(
        questions=[
            QuestionResult(
                conversation_id="c",
                question="q",
                category="single-hop",
                evidence=["c"],
                within={"polyg": {500: ["a", "c"], 1000: ["a", "c"], 2000: ["a", "c"]}},
            )
        ]
    )
    rows = {(r["system"], r["category"]): r for r in report.budget_table()}
    assert rows[("polyg", "overall")]["R<=500 tok"] == 1.0
    assert rows[("bm25", "overall")]["R<=500 tok"] == 0.0
