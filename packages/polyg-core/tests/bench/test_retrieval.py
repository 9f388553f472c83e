"""The retrieval harness: dataset validation, scoring, and a tiny end-to-end run."""

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from polyg_core.bench.dataset import Dataset, load_dataset
from polyg_core.bench.retrieval import recall_at, run_retrieval, text_matches
from polyg_core.errors import InvalidInput
from polyg_core.memory import Memory
from polyg_core.storage.store import FalkorStore

pytestmark = pytest.mark.anyio

SHIPPED = Path(__file__).parents[4] / "scripts" / "retrieval_dataset.json"

TINY: dict[str, Any] = {
    "conversations": [
        {
            "id": "c",
            "speakers": ["Ann", "Bo"],
            "sessions": [
                {
                    "id": "s1",
                    "date_time": "2025-01-05T10:00:00Z",
                    "turns": [
                        {"id": "t1", "speaker": "Ann", "text": "I adopted a dog named Pixel."},
                        {"id": "t2", "speaker": "Bo", "text": "I moved to Oslo for work."},
                    ],
                },
                {
                    "id": "s2",
                    "date_time": "2025-03-01T10:00:00Z",
                    "turns": [
                        {
                            "id": "t3",
                            "speaker": "Ann",
                            "text": "Pixel got sick because he ate chocolate.",
                        }
                    ],
                },
            ],
        }
    ],
    "questions": [
        {
            "conversation_id": "c",
            "question": "Why did Pixel get sick?",
            "answer": "he ate chocolate",
            "evidence": ["t3"],
            "category": "causal",
        },
        {
            "conversation_id": "c",
            "question": "Where did Bo move?",
            "answer": "Oslo",
            "evidence": ["t2"],
            "category": "single-hop",
        },
    ],
}


def test_shipped_dataset_is_valid_and_covers_every_category() -> None:
    data = load_dataset(SHIPPED)
    assert len(data.conversations) >= 3
    cats = {q.category for q in data.questions}
    assert {"single-hop", "multi-hop", "temporal", "causal"} <= cats
    dates = [s.date_time for c in data.conversations for s in c.sessions]
    assert min(dates)[:7] != max(dates)[:7]  # spans months


def test_evidence_naming_an_unknown_turn_is_rejected(tmp_path: Path) -> None:
    bad = json.loads(json.dumps(TINY))
    bad["questions"][0]["evidence"] = ["t9"]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(InvalidInput, match="t9"):
        load_dataset(path)


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


def test_node_text_is_matched_to_the_turn_that_contains_it() -> None:
    turns = {"t1": "Ann: I adopted a dog named Pixel.", "t2": "Bo: I moved to Oslo."}
    assert text_matches("Pixel", turns) == ["t1"]
    assert text_matches("something unrelated", turns) == []


async def test_tiny_dataset_scores_all_three_systems(store: FalkorStore, embedder: Any) -> None:
    memory = Memory(store=store, embedder=embedder)
    with anyio.fail_after(120):
        report = await run_retrieval(
            memory, Dataset.model_validate(TINY), namespace_prefix="test_bench_ret"
        )
    assert report.turns == 3
    assert len(report.questions) == 2
    table = report.table()
    systems = {row["system"] for row in table}
    assert systems == {"polyg", "bm25", "dense"}
    overall = {r["system"]: r for r in table if r["category"] == "overall"}
    # three turns only: every system finds every evidence turn within its top 5
    assert all(overall[s]["R@5"] == 1.0 for s in systems)
    assert report.remember_usage["llm_calls"] == 0
    assert "test_bench_ret_0" not in await store.list_graphs()
