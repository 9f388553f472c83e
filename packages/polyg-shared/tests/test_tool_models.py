"""Tool inputs and outputs: what a caller may send, what is refused, and how answers serialise."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st
from polyg_shared.engine import EngineInput
from polyg_shared.nodes import Fact
from polyg_shared.pages import MAX_PAGE_TOKENS, MIN_PAGE_TOKENS, PageInput
from polyg_shared.tools import (
    ClearGraphInput,
    FactsOutput,
    QueryFactsInput,
    RecallInput,
)
from polyg_shared.types import GRAPH_NAME_PATTERN, is_graph_name
from pydantic import ValidationError

NAME_CHARS = st.characters(codec="ascii")


def test_the_schema_pattern_and_the_check_agree_on_ordinary_names() -> None:
    for name in ("polyg", "team-notes", "v1.2_scratch", "a" * 64):
        assert is_graph_name(name) and re.match(GRAPH_NAME_PATTERN, name)
    for name in ("", "a" * 65, "two words", "slash/name", "naïve"):
        assert not is_graph_name(name) and not re.match(GRAPH_NAME_PATTERN, name)


@given(st.text(NAME_CHARS, max_size=70))
def test_a_graph_name_passes_exactly_when_it_matches_the_pattern(name: str) -> None:
    # fullmatch: Python's `$` also matches before a final newline, the check does not.
    assert is_graph_name(name) == (re.fullmatch(GRAPH_NAME_PATTERN[1:-1], name) is not None)


@pytest.mark.parametrize("model", [RecallInput, EngineInput])
def test_a_bad_graph_name_is_refused_with_the_rule(model: type[RecallInput | EngineInput]) -> None:
    data = {"graph": "my notes", "question": "Who leads the ferry crew?"}
    if model is EngineInput:
        data.pop("question")
    with pytest.raises(ValidationError, match=r"1-64 characters from letters, digits"):
        model.model_validate(data)


def test_a_trailing_newline_is_not_a_second_name_for_a_graph() -> None:
    with pytest.raises(ValidationError):
        RecallInput.model_validate({"question": "Where is Odile?", "graph": "polyg\n"})


def test_unknown_arguments_are_refused_by_name() -> None:
    with pytest.raises(ValidationError, match="questoin"):
        RecallInput.model_validate({"questoin": "Where is Odile?"})


def test_recall_takes_query_as_another_name_for_the_question() -> None:
    assert RecallInput.model_validate({"query": "Where is Odile?"}).question == "Where is Odile?"


@pytest.mark.parametrize("flag", [True, False])
def test_true_or_false_is_not_a_number(flag: bool) -> None:
    with pytest.raises(ValidationError):
        PageInput.model_validate({"max_tokens": flag})
    with pytest.raises(ValidationError):
        RecallInput.model_validate({"question": "Where is Odile?", "max_tokens": flag})


def test_a_page_budget_outside_its_bounds_is_refused() -> None:
    assert PageInput(max_tokens=MIN_PAGE_TOKENS).max_tokens == MIN_PAGE_TOKENS
    for bad in (MIN_PAGE_TOKENS - 1, MAX_PAGE_TOKENS + 1):
        with pytest.raises(ValidationError):
            PageInput(max_tokens=bad)


def test_a_list_input_takes_both_its_filters_and_paging() -> None:
    args = QueryFactsInput.model_validate({"graph": "crew", "cursor": "abc", "max_tokens": 500})
    assert (args.graph, args.cursor, args.max_tokens) == ("crew", "abc", 500)


def test_clear_graph_reads_a_memory_graph_given_as_graph() -> None:
    args = ClearGraphInput.model_validate({"graph": "temporal", "confirm": True})
    assert args.which == "temporal" and args.graph is None
    named = ClearGraphInput.model_validate({"graph": "crew", "which": "causal"})
    assert (named.graph, named.which) == ("crew", "causal")


def _fact(valid_to: datetime | None = None) -> Fact:
    start = datetime(2025, 3, 1, tzinfo=UTC)
    return Fact(
        uuid="f-1",
        subject="Odile",
        predicate="member_of",
        object="ferry crew",
        valid_from=start,
        valid_to=valid_to,
        recorded_at=start,
    )


def test_a_fact_is_current_until_it_has_an_end() -> None:
    assert _fact().is_current
    assert not _fact(datetime(2025, 6, 1, tzinfo=UTC)).is_current


def test_a_list_answer_puts_where_it_stopped_last() -> None:
    out = FactsOutput(facts=[_fact()], count=1, next_cursor="c2", truncated=True)
    dumped = out.model_dump(mode="json")
    assert list(dumped)[-2:] == ["next_cursor", "truncated"]
    assert list(json.loads(out.model_dump_json()))[-2:] == ["next_cursor", "truncated"]
    assert dumped["facts"][0]["valid_from"].endswith("Z")
