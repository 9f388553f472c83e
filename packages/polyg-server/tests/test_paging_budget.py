"""`within_budget` estimates an answer once and then by difference; the answer and the
fields it names are the ones re-estimating the whole answer at every step gives
(invented answers: any text, numbers, nested models, aliased fields)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from hypothesis import given, settings
from hypothesis import strategies as st
from polyg_server.paging import (
    _emptied,  # pyright: ignore[reportPrivateUsage]
    _estimate_by_piece,  # pyright: ignore[reportPrivateUsage]
    estimate_tokens,
    json_tokens,
    within_budget,
)
from pydantic import BaseModel, Field

M = TypeVar("M", bound=BaseModel)
_RESERVE = 40


class Step(BaseModel):
    label: str
    weight: float
    notes: list[str] = Field(default_factory=list[str])


class Detail(BaseModel):
    summary: str
    steps: list[Step] = Field(default_factory=list[Step])
    kind: str = "trace"


class Answer(BaseModel):
    question: str
    answer: str
    confidence: float
    detail: Detail
    scores: dict[str, float] = Field(default_factory=dict[str, float])
    tags: list[str] = Field(default_factory=list[str], serialization_alias="labels")
    count: int | None = None
    items: list[Step] = Field(default_factory=list[Step])
    sources: list[str] = Field(default_factory=list[str])


def _counted(
    answer: M, max_tokens: int, drop: Sequence[str], trim: Sequence[str]
) -> tuple[M, list[str]]:
    """The answer as `within_budget` gave it before: the whole answer estimated at every step."""
    budget = max_tokens - _RESERVE
    omitted: list[str] = []
    for field in drop:
        if json_tokens(answer) <= budget:
            return answer, omitted
        answer = answer.model_copy(update={field: _emptied(getattr(answer, field))})
        omitted.append(field)
    for field in trim:
        items: list[Any] = list(getattr(answer, field))
        cut = False
        while len(items) > 1 and json_tokens(answer) > budget:
            items = items[: len(items) // 2] if len(items) > 8 else items[:-1]
            answer = answer.model_copy(update={field: items})
            cut = True
        if cut:
            omitted.append(field)
    return answer, omitted


TEXT = st.one_of(
    st.text(max_size=80),
    st.sampled_from(
        [
            "Maren Oyelaran moved the backups to the north rack on 2031-04-02",
            "  spaced   out\ttext\n\nwith runs   of white   ",
            "Ōtautahi harbour — crane 7, 12.5 t",
            "3f2b9c1e-8d7a-4e2b-9c1d-0a1b2c3d4e5f",
            "extraordinarilylongwordwithoutanybreaksatall",
            "",
        ]
    ),
)
NUM = st.floats(allow_nan=False, allow_infinity=False, width=32)
STEP = st.builds(Step, label=TEXT, weight=NUM, notes=st.lists(TEXT, max_size=4))
ANSWER = st.builds(
    Answer,
    question=TEXT,
    answer=TEXT,
    confidence=NUM,
    detail=st.builds(Detail, summary=TEXT, steps=st.lists(STEP, max_size=5), kind=TEXT),
    scores=st.dictionaries(TEXT, NUM, max_size=5),
    tags=st.lists(TEXT, max_size=6),
    count=st.one_of(st.none(), st.integers(-(10**12), 10**12)),
    items=st.lists(STEP, max_size=20),
    sources=st.lists(TEXT, max_size=12),
)
DROP = ("detail", "scores", "tags", "count", "answer")
TRIM = ("items", "sources")


def _visited(answer: Answer) -> list[int]:
    """The estimates the whole answer passes through when every step is taken."""
    seen = [json_tokens(answer)]
    for field in DROP:
        answer = answer.model_copy(update={field: _emptied(getattr(answer, field))})
        seen.append(json_tokens(answer))
    for field in TRIM:
        items: list[Any] = list(getattr(answer, field))
        while len(items) > 1:
            items = items[: len(items) // 2] if len(items) > 8 else items[:-1]
            answer = answer.model_copy(update={field: items})
            seen.append(json_tokens(answer))
    return seen


@settings(max_examples=300)
@given(ANSWER, st.integers(41, 3_000))
def test_the_answer_is_the_one_estimating_every_step_gives(answer: Answer, max_tokens: int) -> None:
    fast, fast_omitted = within_budget(answer, max_tokens, DROP, TRIM)
    slow, slow_omitted = _counted(answer, max_tokens, DROP, TRIM)
    assert fast_omitted == slow_omitted
    assert fast.model_dump() == slow.model_dump()


@settings(max_examples=300)
@given(ANSWER, st.data())
def test_a_budget_at_a_step_s_exact_size_stops_where_estimating_every_step_does(
    answer: Answer, data: st.DataObject
) -> None:
    at = data.draw(st.sampled_from(_visited(answer)))
    max_tokens = max(41, at + _RESERVE + data.draw(st.integers(-1, 1)))
    fast, fast_omitted = within_budget(answer, max_tokens, DROP, TRIM)
    slow, slow_omitted = _counted(answer, max_tokens, DROP, TRIM)
    assert fast_omitted == slow_omitted
    assert fast.model_dump() == slow.model_dump()


def test_an_answer_over_its_budget_loses_details_first_then_list_items() -> None:
    steps = [Step(label=f"step {i} of the crane inspection", weight=i / 10) for i in range(40)]
    answer = Answer(
        question="What did the harbour crew inspect?",
        answer="Crane 7 and the north quay rails.",
        confidence=0.8,
        detail=Detail(summary="inspection trace " * 50, steps=steps[:10]),
        tags=["harbour", "inspection"],
        items=steps,
        sources=[f"note-{i}" for i in range(30)],
    )
    bounded, omitted = within_budget(answer, 300, DROP, TRIM)
    assert omitted[0] == "detail"
    assert "items" in omitted
    assert json_tokens(bounded) <= 300 - _RESERVE
    assert bounded.items == steps[: len(bounded.items)]
    assert bounded.answer == answer.answer or "answer" in omitted


def test_an_answer_within_its_budget_is_returned_whole() -> None:
    answer = Answer(
        question="Who owns the ferry timetable?",
        answer="Ilse Brandvold",
        confidence=0.9,
        detail=Detail(summary="one note"),
    )
    assert within_budget(answer, 4_000, DROP, TRIM) == (answer, [])


PIECES = st.lists(
    st.one_of(
        st.text(max_size=12),
        st.sampled_from([" ", "        ", "\t\n", "\u00a0", " \u2003 ", "é", "東京", "-1.5e-3"]),
        st.from_regex(r"[A-Za-z]{1,14}|[0-9]{1,7}|[ \t]{1,18}", fullmatch=True),
    ),
    max_size=30,
).map("".join)


@settings(max_examples=500)
@given(st.one_of(st.text(), PIECES))
def test_the_estimate_by_class_equals_the_estimate_piece_by_piece(text: str) -> None:
    assert estimate_tokens(text) == _estimate_by_piece(text)
