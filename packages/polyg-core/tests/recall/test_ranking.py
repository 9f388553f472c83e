"""Hybrid ranking: weights, threshold, near-duplicates and mode budgets."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polyg_core.errors import InvalidInput
from polyg_core.recall.hybrid_scores import (
    BUDGETS,
    RankingWeights,
    check_mode,
    detect_mode,
    hybrid_rank,
)
from polyg_shared.retrieval import ContextNode


def node(uuid: str, score: float, label: str = "E_Entity") -> ContextNode:
    return ContextNode(uuid=uuid, label=label, graph="entity", text=uuid, score=score)


def unit(*xs: float) -> np.ndarray:
    v = np.asarray(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


@pytest.mark.parametrize(
    ("question", "mode"),
    [
        ("What is the payments-api?", "execution"),
        ("Why did the deploy fail?", "execution"),
        ("How should we roll out the new pool size?", "planning"),
        ("What steps prevent another outage?", "planning"),
        ("What if we dropped pgbouncer entirely?", "brainstorming"),
        ("Give me ideas for cheaper caching", "brainstorming"),
    ],
)
def test_mode_is_detected_from_the_wording(question: str, mode: str) -> None:
    assert detect_mode(question) == mode


def test_a_given_mode_wins_and_an_unknown_one_is_refused() -> None:
    assert check_mode("planning", "What is X?") == "planning"
    assert check_mode("auto", "What if X?") == "brainstorming"
    with pytest.raises(InvalidInput, match="use one of execution, planning, brainstorming"):
        check_mode("fast", "What is X?")


@pytest.mark.parametrize(
    ("mode", "core", "extended"),
    [("execution", 5, 0), ("planning", 5, 15), ("brainstorming", 5, 25)],
)
def test_mode_budgets_cap_core_and_extended(mode: str, core: int, extended: int) -> None:
    nodes = [node(f"n{i:02d}", 1.0) for i in range(60)]
    ranked = hybrid_rank(nodes, mode=mode, query_vector=None, embeddings={})  # type: ignore[arg-type]
    assert (len(ranked.core), len(ranked.extended)) == (core, extended)
    assert BUDGETS[mode].core == core and BUDGETS[mode].extended == extended  # type: ignore[index]


def test_final_score_is_the_weighted_sum_of_vector_graph_and_causal() -> None:
    q = unit(1, 0)
    nodes = [node("a", 2.0), node("b", 1.0)]
    emb = {"a": unit(0, 1), "b": unit(1, 0)}
    ranked = hybrid_rank(nodes, mode="planning", query_vector=q, embeddings=emb, causal={"a": 1.0})
    scores = {n.uuid: n.score for n in [*ranked.core, *ranked.extended]}
    assert scores["a"] == pytest.approx(0.4 * 0.0 + 0.4 * 1.0 + 0.2 * 1.0)
    assert scores["b"] == pytest.approx(0.4 * 1.0 + 0.4 * 0.5 + 0.0)
    b = next(n for n in ranked.core if n.uuid == "b")
    assert b.attributes["vector"] == 1.0 and b.attributes["graph"] == 0.5


def test_nodes_below_the_threshold_are_dropped() -> None:
    q = unit(1, 0)
    nodes = [node("strong", 1.0), node("weak", 0.1)]
    emb = {"strong": unit(1, 0), "weak": unit(0, 1)}
    ranked = hybrid_rank(nodes, mode="planning", query_vector=q, embeddings=emb)
    assert [n.uuid for n in ranked.core] == ["strong"]
    assert ranked.below_threshold == 1


def test_near_duplicates_keep_only_the_better_ranked_node() -> None:
    q = unit(1, 0, 0)
    nodes = [node("orig", 1.0), node("copy", 0.9), node("other", 0.8)]
    emb = {"orig": unit(1, 0.1, 0), "copy": unit(1, 0.11, 0), "other": unit(1, 0, 1)}
    ranked = hybrid_rank(nodes, mode="planning", query_vector=q, embeddings=emb)
    assert [n.uuid for n in ranked.core] == ["orig", "other"]
    assert ranked.duplicates == 1


def test_weights_are_configurable() -> None:
    q = unit(1, 0)
    nodes = [node("a", 1.0), node("b", 0.2)]
    emb = {"a": unit(0, 1), "b": unit(1, 0)}
    vector_only = RankingWeights(vector=1.0, graph=0.0, causal=0.0, threshold=0.0)
    ranked = hybrid_rank(
        nodes, mode="planning", query_vector=q, embeddings=emb, weights=vector_only
    )
    assert [n.uuid for n in ranked.core] == ["b", "a"]
    with pytest.raises(InvalidInput, match="weights must be >= 0"):
        RankingWeights(vector=-1.0)


@settings(max_examples=50)
@given(
    scores=st.lists(st.floats(0.0, 5.0), min_size=0, max_size=40),
    mode=st.sampled_from(["execution", "planning", "brainstorming"]),
)
def test_ranked_output_is_sorted_bounded_and_above_threshold(
    scores: list[float], mode: str
) -> None:
    nodes = [node(f"n{i}", s) for i, s in enumerate(scores)]
    ranked = hybrid_rank(nodes, mode=mode, query_vector=None, embeddings={})  # type: ignore[arg-type]
    out = [*ranked.core, *ranked.extended]
    assert len(out) <= BUDGETS[mode].core + BUDGETS[mode].extended  # type: ignore[index]
    assert all(n.score >= 0.3 for n in out)
    assert [n.score for n in out] == sorted((n.score for n in out), reverse=True)
