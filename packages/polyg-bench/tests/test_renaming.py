"""Renaming a dataset's speakers: names, possessives and short forms replaced as whole,
case-sensitive words, everything else kept; mappings that cannot rename one to one refused;
the bench's variants chosen deterministically; the comparison of recall as given and renamed."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from polyg_bench.dataset import Dataset
from polyg_bench.renaming import (
    NAME_PAIRS,
    SPARE_NAMES,
    RenamedRun,
    check_variant_count,
    comparison_table,
    rename_speakers,
    renamed_data,
    renamed_variant,
    short_forms,
    variant_names,
)
from polyg_bench.retrieval import QuestionResult, RetrievalReport
from polyg_core.errors import InvalidInput


def _turn(tid: str, who: str, text: str) -> dict[str, str]:
    return {"id": tid, "speaker": who, "text": text}


def _conversation(
    cid: str, speakers: list[str], session: tuple[str, str], turns: list[dict[str, str]]
) -> dict[str, Any]:
    """One conversation of one session (id, time) holding `turns`."""
    sid, when = session
    return {
        "id": cid,
        "speakers": speakers,
        "sessions": [{"id": sid, "date_time": when, "turns": turns}],
    }


def _data() -> dict[str, Any]:
    """Two invented people, Rosalind (called Ros and Rosa) and Will, and a willow tree."""
    return {
        "conversations": [
            _conversation(
                "c1",
                ["Rosalind", "Will"],
                ("s1", "2025-04-02T09:00:00Z"),
                [
                    _turn("a1", "Rosalind", "Will, I planted a Willow by the canal."),
                    _turn("a2", "Will", "Nice, Ros! Will it grow fast? I will water it."),
                    _turn("a3", "Rosalind", "Rosa's mum says Rosalind's tree will thrive."),
                    _turn("a4", "Will", "WILL and ROSALIND, the canal club (Rose too)."),
                ],
            ),
            _conversation(
                "c2",
                ["Quentin"],
                ("s2", "2025-04-03T09:00:00Z"),
                [_turn("b1", "Quentin", "Rosalind never visits the pier.")],
            ),
        ],
        "questions": [
            {
                "conversation_id": "c1",
                "question": "What did Rosalind plant, according to Ros?",
                "answer": "A willow for Will",
                "evidence": ["a1", "nowhere"],
                "category": "single-hop",
            },
            {
                "conversation_id": "c2",
                "question": "Who never visits the pier, Quentin?",
                "answer": "Rosalind",
                "evidence": ["b1"],
                "category": "single-hop",
            },
        ],
    }


def _texts(data: Dataset, conversation_id: str = "c1") -> list[str]:
    conv = next(c for c in data.conversations if c.id == conversation_id)
    return [t.text for s in conv.sessions for t in s.turns]


def test_names_possessives_and_short_forms_are_renamed_as_whole_words() -> None:
    data = Dataset.model_validate(_data())
    out = rename_speakers(data, {"Rosalind": "Marguerite", "Will": "Tobias"}, "c1")
    assert _texts(out) == [
        "Tobias, I planted a Willow by the canal.",
        # "Ros" is Rosalind's short form: the new name's first three letters.
        "Nice, Mar! Tobias it grow fast? I will water it.",
        "Marg's mum says Marguerite's tree will thrive.",
        # Case-sensitive: the upper-case words and the other name "Rose" stay.
        "WILL and ROSALIND, the canal club (Rose too).",
    ]
    conv = out.conversations[0]
    assert conv.speakers == ["Marguerite", "Tobias"]
    assert [t.speaker for t in conv.sessions[0].turns] == ["Marguerite", "Tobias"] * 2
    assert out.questions[0].question == "What did Marguerite plant, according to Mar?"
    assert out.questions[0].answer == "A willow for Tobias"


def test_ids_evidence_and_other_conversations_are_untouched_and_the_input_unchanged() -> None:
    raw = _data()
    data = Dataset.model_validate(raw)
    before = data.model_dump()
    out = rename_speakers(data, {"Rosalind": "Marguerite"}, "c1")
    assert data.model_dump() == before
    assert [q.evidence for q in out.questions] == [["a1"], ["b1"]]
    assert out.ignored_evidence == data.ignored_evidence == [(0, "nowhere")]
    ids = [
        (s.id, s.date_time, [t.id for t in s.turns]) for c in out.conversations for s in c.sessions
    ]
    assert ids == [
        (s.id, s.date_time, [t.id for t in s.turns]) for c in data.conversations for s in c.sessions
    ]
    # c2 names Rosalind too, but only c1 was asked for.
    assert _texts(out, "c2") == ["Rosalind never visits the pier."]
    assert out.questions[1].answer == "Rosalind"
    # Over the whole dataset, c2's mention is renamed as well.
    everywhere = rename_speakers(data, {"Rosalind": "Marguerite"})
    assert _texts(everywhere, "c2") == ["Marguerite never visits the pier."]
    assert everywhere.questions[1].answer == "Marguerite"


def test_a_short_form_longer_than_the_new_name_becomes_the_whole_new_name() -> None:
    out = rename_speakers(Dataset.model_validate(_data()), {"Rosalind": "Ida"}, "c1")
    assert _texts(out)[1] == "Nice, Ida! Will it grow fast? I will water it."
    assert _texts(out)[2] == "Ida's mum says Ida's tree will thrive."


def test_short_forms_are_capitalised_proper_prefixes_of_one_speaker_only() -> None:
    speakers = ["Annabel", "Annika", "Bartholomew"]
    turns = [
        "Bart and Barth met Ann, Anna and Annab at the bar.",
        "Bartholomew said bart. Ba agreed; Annika nodded.",
    ]
    # "Ann" starts both Annabel and Annika: whose it is cannot be told. "Ba" is too
    # short, "bart" not capitalised, "Bartholomew" and "Annika" whole names.
    assert short_forms(speakers, turns) == {
        "Bart": "Bartholomew",
        "Barth": "Bartholomew",
        "Anna": "Annabel",
        "Annab": "Annabel",
    }


def test_a_speaker_whose_name_is_another_speakers_prefix_keeps_it() -> None:
    data = Dataset.model_validate(
        {
            "conversations": [
                _conversation(
                    "c",
                    ["Jon", "Jonathan"],
                    ("s", "2025-01-01T00:00:00Z"),
                    [
                        _turn("1", "Jon", "Jonathan, call me Jon."),
                        _turn("2", "Jonathan", "Jonat is what Jon calls me."),
                    ],
                )
            ],
            "questions": [
                {
                    "conversation_id": "c",
                    "question": "What does Jon call Jonathan?",
                    "evidence": ["2"],
                }
            ],
        }
    )
    out = rename_speakers(data, {"Jonathan": "Fredericka"})
    assert _texts(out, "c") == ["Fredericka, call me Jon.", "Frede is what Jon calls me."]
    assert out.questions[0].question == "What does Jon call Fredericka?"


def test_refusals_say_what_is_wrong() -> None:
    data = Dataset.model_validate(_data())
    with pytest.raises(InvalidInput, match=r"'Quentin'.*not a speaker.*'Rosalind', 'Will'"):
        rename_speakers(data, {"Quentin": "Tobias"}, "c1")
    with pytest.raises(InvalidInput, match=r"'Rosalind', 'Will' would all be renamed 'Tobias'"):
        rename_speakers(data, {"Rosalind": "Tobias", "Will": "Tobias"})
    # "Rose" is a word of the dataset already, and so is the other speaker's name.
    with pytest.raises(InvalidInput, match=r"'Rose' already occurs in the dataset as a word"):
        rename_speakers(data, {"Rosalind": "Rose"})
    with pytest.raises(InvalidInput, match="already occurs"):
        rename_speakers(data, {"Rosalind": "Will", "Will": "Rosalind"})
    with pytest.raises(InvalidInput, match="names no speaker"):
        rename_speakers(data, {})
    with pytest.raises(InvalidInput, match="no leading or trailing spaces"):
        rename_speakers(data, {"Will": " Tobias"})
    with pytest.raises(InvalidInput, match=r"no conversation 'c9'.*'c1', 'c2'"):
        rename_speakers(data, {"Will": "Tobias"}, "c9")


def test_a_word_that_merely_contains_a_new_name_does_not_refuse_it() -> None:
    # "Willow" contains "Will" and "Rosa's" contains "Rosa": neither is the word itself.
    data = Dataset.model_validate(_data())
    out = rename_speakers(data, {"Will": "Pat"}, "c1")
    assert _texts(out)[0] == "Pat, I planted a Willow by the canal."


@given(st.sampled_from([n for pair in NAME_PAIRS for n in pair if n != "Will"]))
def test_renaming_and_renaming_back_gives_the_dataset_again(new: str) -> None:
    raw = _data()
    raw["conversations"][0]["sessions"][0]["turns"][3]["text"] = "The canal club meets on Sunday."
    data = Dataset.model_validate(raw)
    there = rename_speakers(data, {"Will": new}, "c1")
    back = rename_speakers(there, {new: "Will"}, "c1")
    assert back.model_dump() == data.model_dump()


def test_variants_take_the_pairs_in_order_and_pass_over_names_already_words() -> None:
    raw = _data()
    raw["conversations"][1]["speakers"] = ["Quentin", "Yusuf", "Zelda"]
    # "June" starts a turn of c2 as a month: it cannot name one of c2's speakers.
    raw["conversations"][1]["sessions"][0]["turns"].append(
        _turn("b2", "Yusuf", f"{NAME_PAIRS[1][0]} was wet; Zelda stayed in.")
    )
    data = Dataset.model_validate(raw)
    first = variant_names(data, 1)
    assert first["c1"] == dict(zip(["Rosalind", "Will"], NAME_PAIRS[0], strict=True))
    # Three speakers take the first name of the next pair as well; that one is a word of
    # c2 already, so the first spare name takes its place.
    assert list(first["c2"].values()) == [*NAME_PAIRS[0], SPARE_NAMES[0]]
    second = variant_names(data, 2)
    # "Will" is c1's own speaker: a spare name takes its place, from the second on.
    assert list(second["c1"].values()) == [NAME_PAIRS[1][0], SPARE_NAMES[1]]
    assert list(second["c2"].values()) == [SPARE_NAMES[1], NAME_PAIRS[1][1], NAME_PAIRS[2][0]]
    last = variant_names(data, len(NAME_PAIRS))
    assert list(last["c2"].values())[2] == NAME_PAIRS[0][0]  # wraps around the list
    assert variant_names(data, 3) == variant_names(data, 3)
    renamed, names = renamed_variant(data, 1)
    assert names == first
    assert renamed.conversations[1].speakers == list(first["c2"].values())


def test_variant_counts_outside_the_list_are_refused() -> None:
    assert check_variant_count(0) == 0
    assert check_variant_count(len(NAME_PAIRS)) == len(NAME_PAIRS)
    for bad in (-1, len(NAME_PAIRS) + 1):
        with pytest.raises(InvalidInput, match=f"give 1 to {len(NAME_PAIRS)}"):
            check_variant_count(bad)
    with pytest.raises(InvalidInput, match="no renaming variant 0"):
        variant_names(Dataset.model_validate(_data()), 0)


def _report(hits: list[bool]) -> RetrievalReport:
    return RetrievalReport(
        questions=[
            QuestionResult(
                "c1",
                f"q{i}",
                "single-hop" if i % 2 else "temporal",
                ["a1"],
                ranked={"polyg": ["a1"] if hit else ["a2"]},
            )
            for i, hit in enumerate(hits)
        ]
    )


def test_the_comparison_has_the_given_run_each_variant_their_mean_min_and_the_gap() -> None:
    given = _report([True, True, True, True])
    runs = [
        RenamedRun(
            1, {"c1": {"Rosalind": "Talia", "Will": "Bram"}}, _report([True, False, True, True])
        ),
        RenamedRun(
            2, {"c1": {"Rosalind": "June", "Will": "Mark"}}, _report([False, False, True, True])
        ),
    ]
    rows = comparison_table(given, runs)
    overall = {r["run"]: r for r in rows if r["category"] == "overall"}
    assert list(overall) == ["as given", "variant 1", "variant 2", "mean", "min", "as given - mean"]
    assert overall["variant 1"]["speakers"] == "Talia, Bram"
    assert overall["variant 1"]["R@10"] == 0.75 and overall["variant 2"]["R@10"] == 0.5
    assert overall["mean"]["R@1"] == 0.625 and overall["min"]["R@1"] == 0.5
    assert overall["as given - mean"]["R@20"] == 0.375
    temporal = {r["run"]: r for r in rows if r["category"] == "temporal"}
    assert temporal["variant 2"]["R@5"] == 0.5 and temporal["as given"]["n"] == 2
    assert [r["category"] for r in rows][-1] == "overall"
    data = json.loads(json.dumps(renamed_data(given, runs)))
    assert [v["variant"] for v in data["variants"]] == [1, 2]
    assert data["variants"][1]["names"] == {"c1": {"Rosalind": "June", "Will": "Mark"}}
    assert {r["system"] for r in data["variants"][0]["table"]} == {"polyg"}
    assert data["comparison"] == rows
