"""History questions: recall tells how a subject's facts changed, oldest first, each
value with its interval."""

from __future__ import annotations

import anyio
import pytest
from polyg_core.memory import Memory
from polyg_core.recall.classifier import asks_history
from polyg_shared.retrieval import RecallResult

pytestmark = pytest.mark.anyio

REF = "2026-01-15T12:00:00Z"


@pytest.mark.parametrize(
    "question",
    [
        "How has the on-call rotation changed?",
        "What was Yara Belden's team before?",
        "Show me the history of the billing pager",
        "How did Yara's skills evolve over time?",
    ],
)
def test_history_questions_are_recognised(question: str) -> None:
    assert asks_history(question)


@pytest.mark.parametrize(
    "question", ["Which team is Yara Belden on?", "Why did the pager fail?", "Who owns billing?"]
)
def test_other_questions_are_not_history_questions(question: str) -> None:
    assert not asks_history(question)


async def recall_history(
    memory: Memory,
    subject: str,
    predicate: str,
    values: list[tuple[str, str]],
    other: tuple[str, str, str],
    question: str,
) -> RecallResult:
    """Write the subject's dated values of one predicate and one fact of another
    (predicate, value, since), then recall the question."""
    ns = memory.namespace
    with anyio.fail_after(120):
        for value, since in values:
            await memory.temporal.add_fact(ns, subject, predicate, value, valid_from=since)
        await memory.temporal.add_fact(ns, subject, *other)
        return await memory.recall(question, reference_time=REF)


async def test_recall_tells_a_history_in_order_with_intervals(memory: Memory) -> None:
    result = await recall_history(
        memory,
        "on-call rotation",
        "lead",
        [
            ("Corin Hale", "2024-01-08"),
            ("Dessa Morrow", "2025-03-03"),
            ("Elio Varga", "2025-09-01"),
        ],
        ("tool", "PagerBell", "2024-01-01"),
        "How has the on-call rotation lead changed?",
    )
    assert result.answer == (
        "on-call rotation lead: Corin Hale, 2024-01 to 2025-03; "
        "Dessa Morrow, 2025-03 to 2025-09; Elio Varga, since 2025-09."
    )
    assert result.intent["history"] is True


async def test_recall_tells_the_history_of_a_multi_valued_predicate(memory: Memory) -> None:
    result = await recall_history(
        memory,
        "Yara Belden",
        "skills",
        [("Python", "2023-02-01"), ("Go", "2024-01-01"), ("Rust", "2025-03-01")],
        ("team", "Atlas", "2024-01-01"),
        "What was Yara Belden's skills history over time?",
    )
    assert result.answer == (
        "Yara Belden skills: Python, since 2023-02; Go, since 2024-01; Rust, since 2025-03."
    )
