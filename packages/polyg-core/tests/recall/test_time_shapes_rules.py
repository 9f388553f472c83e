"""The rules behind time questions' shapes: before / after / since, durations, frequencies."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from polyg_core.recall.answer.shapes import (
    asks_previous,
    frequency_in,
    held,
    relation_of,
    spoken_duration,
)
from polyg_shared.intents import Timeframe
from polyg_shared.timeutil import to_epoch_ms

JUNE = datetime(2025, 6, 1, tzinfo=UTC)


def _ms(y: int, m: int, d: int) -> int:
    return to_epoch_ms(datetime(y, m, d, tzinfo=UTC))


def test_before_is_strict_and_after_keeps_what_still_held() -> None:
    before = Timeframe(end=JUNE, phrase="before June 2025")
    after = Timeframe(start=JUNE, phrase="after May 2025")
    assert relation_of(before) == "before" and relation_of(after) == "after"
    assert not held(_ms(2025, 6, 1), None, before, "before")  # began on the day itself
    assert held(_ms(2024, 3, 1), _ms(2025, 6, 1), before, "before")
    assert held(_ms(2024, 3, 1), None, after, "after")  # still held after
    assert not held(_ms(2024, 3, 1), _ms(2025, 2, 1), after, "after")  # ended before


@pytest.mark.parametrize(
    ("sentence", "frequency"),
    [
        ("Kofi waters the ferns every three days.", "every three days"),
        ("The choir meets twice a month.", "twice a month"),
        ("Backups of the wiki run nightly.", "nightly"),
        ("We do retros every other Friday.", "every other Friday"),
        ("Dara swims on Mondays.", "on Mondays"),
    ],
)
def test_a_stated_frequency_is_found(sentence: str, frequency: str) -> None:
    assert frequency_in(sentence) == frequency


def test_no_frequency_in_a_plain_sentence() -> None:
    assert frequency_in("Dara swam across the lake in June.") is None


@pytest.mark.parametrize(
    ("ms", "spoken"),
    [
        (9_000_000, "2 hours 30 minutes"),
        (3_600_000, "1 hour"),
        (400 * 86_400_000, "1 year 1 month"),
        (30_000, "less than a minute"),
    ],
)
def test_durations_are_spoken_in_two_units(ms: int, spoken: str) -> None:
    assert spoken_duration(ms) == spoken


@pytest.mark.parametrize(
    ("question", "previous"),
    [
        ("How did Ines take her tea before?", True),
        ("Which car Ines used to drive?", True),
        ("Which tool is used to deploy the wiki?", False),
        ("Which was Ines's previous team?", True),
        ("What did Ines work on before June 2025?", False),
        ("How does Ines take her tea?", False),
        # "before" a named change, not a time: the value before the change.
        ("Who did Ines report to before the reorg?", True),
        ("Before the merger, who led the choir?", True),
        ("Where did Ines live prior to her move to Tarn?", True),
        ("What did Ines do before the race to warm up her legs and arms properly?", False),
    ],
)
def test_the_previous_value_is_asked_without_a_time(question: str, previous: bool) -> None:
    assert asks_previous(question) is previous
