"""Names that are also ordinary words, months or modals ("June", "Will", "Hope") stand
for the person only where they are written as a name."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from polyg_core.recall.classifier import RuleClassifier
from polyg_core.remember.rule_extractor import RuleExtractor
from polyg_core.text.names import (
    EntityMatcher,
    as_name,
    find_names,
    guess_entity_type,
    is_word_name,
    named_in_text,
)

REF = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
KNOWN = EntityMatcher.from_known(["June", "Will", "Hope", "Tamsin"])


def _at(text: str, word: str) -> tuple[int, int]:
    start = text.index(word)
    return start, start + len(word)


@pytest.mark.parametrize(
    ("text", "word", "expected"),
    [
        ("Thanks, June!", "June", True),
        ("June: I repainted the shed.", "June", True),
        ("What is June's job?", "June's", True),
        ("June said the shed is done.", "June", True),
        ("I moved here in June.", "June", False),
        ("We met on June 5.", "June", False),
        ("It was mid-June already.", "June", False),
        ("Will you come along?", "Will", False),
        ("I will come along.", "will", False),
        ("Ask Will about the shed.", "Will", True),
        ("I hope so.", "hope", False),
    ],
)
def test_a_word_is_a_name_only_where_it_is_written_as_one(
    text: str, word: str, expected: bool
) -> None:
    assert as_name(text, *_at(text, word)) is expected


def test_which_names_are_also_words() -> None:
    assert is_word_name("june") and is_word_name("will") and is_word_name("hope")
    assert not is_word_name("tamsin")


def test_named_in_text_reads_word_names_by_how_they_are_written() -> None:
    assert named_in_text("What will Tamsin bring?", "Tamsin")
    assert not named_in_text("What will Tamsin bring?", "Will")
    assert named_in_text("What did Will's brother bring?", "Will")
    # An ordinary name is found in any case, as before.
    assert named_in_text("tamsin brought soup", "Tamsin")


def test_the_matcher_skips_a_known_word_name_used_as_a_word() -> None:
    text = "June: Thanks, Will! I will call you in June, I hope."
    found = [(m.name, text[m.span[0] : m.span[1]]) for m in find_names(text, KNOWN)]
    assert found == [("June", "June"), ("Will", "Will")]


def test_a_question_about_june_names_june_and_no_month() -> None:
    intent = RuleClassifier().classify("What country is June's grandmother from?", KNOWN, REF)
    assert intent.entities == ["June"]
    assert intent.timeframe is None


def test_a_month_after_a_time_word_is_still_a_month() -> None:
    intent = RuleClassifier().classify("What did Tamsin plant in June?", KNOWN, REF)
    assert intent.entities == ["Tamsin"]
    frame = intent.timeframe
    assert frame is not None and frame.start is not None
    assert frame.start.month == 6


def test_a_modal_does_not_name_will() -> None:
    intent = RuleClassifier().classify("Will Tamsin bring the soup?", KNOWN, REF)
    assert intent.entities == ["Tamsin"]


def test_a_note_that_speaks_to_june_is_not_dated_in_june() -> None:
    # "to June" reads as a month on its own; June is known, so here it is her.
    ex = RuleExtractor().extract("Tamsin: I gave the keys to June.", KNOWN, REF)
    assert {"Tamsin", "June"} <= {e.name for e in ex.entities}
    assert all(ev.occurred_at.month != 6 for ev in ex.events)


def test_june_opening_a_sentence_with_and_i_is_june() -> None:
    ex = RuleExtractor().extract("Tamsin: June and I finished the shed.", KNOWN, REF)
    assert {"Tamsin", "June"} <= {e.name for e in ex.entities}


def test_a_note_that_says_in_june_keeps_its_month() -> None:
    ex = RuleExtractor().extract("Tamsin: We finished the shed in June 2025.", KNOWN, REF)
    assert [(ev.occurred_at.year, ev.occurred_at.month) for ev in ex.events] == [(2025, 6)]


def test_a_question_naming_hope_and_june_asks_no_month() -> None:
    intent = RuleClassifier().classify("What did Hope say to June?", KNOWN, REF)
    assert intent.entities == ["Hope", "June"]
    assert intent.timeframe is None


@pytest.mark.parametrize("name", ["Fennick Garage", "Brackley Motors", "Greenmere Energy"])
def test_a_name_ending_in_a_business_word_is_an_organisation(name: str) -> None:
    assert guess_entity_type(name) == "organization"
