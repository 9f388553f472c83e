"""Merging views with the multi-view boost, and intent-ordered linearization."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polyg_core.recall.linearizer import estimate_tokens, linearize
from polyg_core.recall.merger import merge_views
from polyg_shared.retrieval import ContextEdge, ContextNode, MergedSubgraph, ViewName, ViewResult


def node(uuid: str, score: float, label: str = "E_Entity", **attrs: object) -> ContextNode:
    graph = {"E_Entity": "entity", "C_Node": "causal", "T_Event": "temporal"}.get(label, "semantic")
    return ContextNode(
        uuid=uuid,
        label=label,
        graph=graph,
        text=f"node {uuid}",
        score=score,
        attributes=dict(attrs),
    )


def test_node_in_two_views_is_boosted_by_one_and_a_half() -> None:
    entity = ViewResult(view="entity", nodes=[node("a", 0.8), node("b", 0.9)])
    temporal = ViewResult(view="temporal", nodes=[node("a", 0.6)])
    merged = merge_views([entity, temporal])
    scores = {n.uuid: n for n in merged.nodes}
    assert scores["a"].score == pytest.approx(0.7 * 1.5)
    assert scores["a"].views == ["entity", "temporal"]
    assert scores["b"].score == pytest.approx(0.9)
    assert merged.nodes[0].uuid == "a"  # boosted past b


def test_three_views_boost_is_two_and_a_quarter() -> None:
    views = [ViewResult(view=v, nodes=[node("x", 0.4)]) for v in ("entity", "temporal", "causal")]
    assert merge_views(views).nodes[0].score == pytest.approx(0.4 * 2.25)


def test_failed_views_are_reported_not_merged() -> None:
    ok = ViewResult(view="entity", nodes=[node("a", 0.5)])
    bad = ViewResult(view="causal", status="timeout", error="took too long", nodes=[node("z", 1.0)])
    merged = merge_views([ok, bad])
    assert [n.uuid for n in merged.nodes] == ["a"]
    assert merged.views == {"entity": "ok", "causal": "timeout"}


def test_edges_to_unknown_nodes_are_dropped_and_duplicates_merged() -> None:
    e = ContextEdge(source="a", target="b", type="E_RELATES", label="uses")
    v1 = ViewResult(view="entity", nodes=[node("a", 1), node("b", 1)], edges=[e, e])
    v2 = ViewResult(
        view="temporal",
        nodes=[node("a", 1)],
        edges=[ContextEdge(source="a", target="zz", type="X")],
    )
    assert merge_views([v1, v2]).edges == [e]


def view_of(name: ViewName, items: list[tuple[str, float]]) -> ViewResult:
    return ViewResult(view=name, nodes=[node(u, s) for u, s in items])


views_strategy = st.lists(
    st.builds(
        view_of,
        st.sampled_from(["semantic", "entity", "temporal", "causal", "ppr"]),
        st.lists(st.tuples(st.sampled_from("abcdefgh"), st.floats(0, 1)), max_size=8),
    ),
    max_size=5,
)


@given(views_strategy)
def test_merge_keeps_one_node_per_uuid_with_the_formula(views: list[ViewResult]) -> None:
    merged = merge_views(views)
    uuids = [n.uuid for n in merged.nodes]
    assert len(uuids) == len(set(uuids))
    for n in merged.nodes:
        best: dict[str, float] = {}
        for v in views:
            for m in v.nodes:
                if m.uuid == n.uuid:
                    best[v.view] = max(best.get(v.view, 0.0), m.score)
        expected = sum(best.values()) / len(best) * 1.5 ** (len(best) - 1)
        assert n.score == pytest.approx(expected)
        assert n.views == sorted(best)
    assert [n.score for n in merged.nodes] == sorted((n.score for n in merged.nodes), reverse=True)


def chain_subgraph() -> MergedSubgraph:
    # Scores put the effect first; WHY must still print causes before effects.
    nodes = [
        node("crash", 0.9, "C_Node"),
        node("missing", 0.5, "C_Node"),
        node("deploy", 0.2, "C_Node"),
        node("alice", 0.7),
    ]
    edges = [
        ContextEdge(source="missing", target="crash", type="C_CAUSES", confidence=0.95),
        ContextEdge(source="deploy", target="missing", type="C_CAUSES", confidence=0.88),
    ]
    return MergedSubgraph(nodes=nodes, edges=edges)


def test_why_is_topological_causes_before_effects() -> None:
    ctx = linearize(chain_subgraph(), "WHY")
    assert ctx.strategy == "topological"
    assert ctx.node_ids[:3] == ["deploy", "missing", "crash"]
    assert "node deploy --C_CAUSES--> node missing (confidence 0.88)" in ctx.text
    assert "node missing --C_CAUSES--> node crash (confidence 0.95)" in ctx.text


def test_when_is_chronological() -> None:
    sub = MergedSubgraph(
        nodes=[
            node("late", 0.9, "T_Event", occurred_at=3000),
            node("early", 0.1, "T_Event", occurred_at=1000),
            node("mid", 0.5, "T_Event", occurred_at=2000),
            node("timeless", 1.0),
        ]
    )
    assert linearize(sub, "WHEN").node_ids == ["early", "mid", "late", "timeless"]


def test_explore_puts_multi_view_nodes_first() -> None:
    a = node("a", 0.2).model_copy(update={"views": ["entity", "temporal"]})
    b = node("b", 0.9).model_copy(update={"views": ["entity"]})
    assert linearize(MergedSubgraph(nodes=[b, a]), "EXPLORE").node_ids == ["a", "b"]


def test_cycles_do_not_lose_nodes() -> None:
    sub = MergedSubgraph(
        nodes=[node("a", 0.5, "C_Node"), node("b", 0.4, "C_Node")],
        edges=[
            ContextEdge(source="a", target="b", type="C_CAUSES", confidence=0.5),
            ContextEdge(source="b", target="a", type="C_CAUSES", confidence=0.5),
        ],
    )
    assert sorted(linearize(sub, "WHY").node_ids) == ["a", "b"]


def test_budget_truncates_large_subgraphs() -> None:
    sub = MergedSubgraph(nodes=[node(f"n{i:03d}", 1 - i / 200) for i in range(150)])
    ctx = linearize(sub, "WHAT", max_tokens=300)
    assert ctx.truncated
    assert ctx.nodes_total == 150
    assert 0 < len(ctx.node_ids) < 150
    assert ctx.tokens <= 300


@settings(max_examples=50)
@given(
    st.lists(st.tuples(st.floats(0, 5), st.integers(0, 10**6)), max_size=40), st.integers(20, 2000)
)
def test_linearize_never_exceeds_budget(items: list[tuple[float, int]], budget: int) -> None:
    sub = MergedSubgraph(
        nodes=[node(f"u{i}", s, "T_Event", occurred_at=t) for i, (s, t) in enumerate(items)]
    )
    for intent in ("WHY", "WHEN", "WHO", "EXPLORE"):
        ctx = linearize(sub, intent, max_tokens=budget)
        assert ctx.tokens <= budget
        assert estimate_tokens(ctx.text) == ctx.tokens
        assert len(set(ctx.node_ids)) == len(ctx.node_ids)
