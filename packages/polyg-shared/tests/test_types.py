"""The constrained field types every tool input uses, checked where a caller meets them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st
from polyg_shared.intents import ExtractedFact, Intent, IntentType, Timeframe, default_depth_hints
from polyg_shared.types import (
    MAX_NAME,
    Confidence,
    Name,
    Timestamp,
    control_char_error,
    reject_control_chars,
)
from pydantic import TypeAdapter, ValidationError

names = TypeAdapter(Name)
confidences = TypeAdapter(Confidence)
timestamps = TypeAdapter(Timestamp)


def test_a_name_is_stripped() -> None:
    assert names.validate_python("  auth-service \n") == "auth-service"


@pytest.mark.parametrize("bad", ["", "   ", "\t\n", "x" * (MAX_NAME + 1), "a\x00b"])
def test_a_blank_overlong_or_nul_name_is_refused(bad: str) -> None:
    with pytest.raises(ValidationError):
        names.validate_python(bad)


@pytest.mark.parametrize("bad", [-0.01, 1.01, float("nan"), float("inf")])
def test_a_confidence_outside_zero_to_one_is_refused(bad: float) -> None:
    with pytest.raises(ValidationError):
        confidences.validate_python(bad)


def test_a_timestamp_field_serialises_as_utc_iso() -> None:
    value = timestamps.validate_python("2024-03-15T16:30:00+02:00")
    assert value == datetime(2024, 3, 15, 14, 30, tzinfo=UTC)
    assert timestamps.dump_python(value, mode="json") == "2024-03-15T14:30:00.000Z"


def test_a_timestamp_field_refuses_other_types_with_the_expected_form() -> None:
    with pytest.raises(ValidationError, match="ISO 8601"):
        timestamps.validate_python(["2024-03-15"])


def test_control_characters_are_found_with_their_location() -> None:
    found = control_char_error({"entities": [{"name": "ok"}, {"name": "bad\x1bname"}]})
    assert found is not None
    loc, value, message = found
    assert loc == ("entities", 1, "name")
    assert value == "bad\x1bname"
    assert "ESC" in message and "position 3" in message


def test_tab_newline_and_carriage_return_are_allowed() -> None:
    assert control_char_error({"text": "a\tb\nc\rd"}) is None


def test_a_bad_key_is_reported_as_the_key() -> None:
    found = control_char_error({"properties": {"k\x00": 1}})
    assert found is not None
    assert found[0] == ("properties", "k\x00")


def test_deep_nesting_is_walked_without_recursion() -> None:
    data: object = "x\x01"
    for _ in range(10_000):
        data = [data]
    found = control_char_error(data)
    assert found is not None
    assert len(found[0]) == 10_000


def test_reject_control_chars_raises_a_validation_error_naming_the_field() -> None:
    with pytest.raises(ValidationError, match="description"):
        reject_control_chars({"description": "a\x07b"}, "AddEvent")
    reject_control_chars({"description": "fine"}, "AddEvent")


@given(st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs")), max_size=50))
def test_text_without_control_characters_always_passes(text: str) -> None:
    assert control_char_error({"t": text, "l": [text]}) is None


def test_a_timeframe_whose_start_is_after_its_end_says_swap() -> None:
    with pytest.raises(ValidationError, match="swap"):
        Timeframe(start="2024-05-01", end="2024-04-01")  # pyright: ignore[reportArgumentType]


def test_an_open_timeframe_is_fine() -> None:
    assert Timeframe(start="2024-05-01").end is None  # pyright: ignore[reportArgumentType]


def test_a_fact_that_ends_before_it_starts_is_refused() -> None:
    with pytest.raises(ValidationError, match="valid_to is before its valid_from"):
        ExtractedFact(
            subject="Mira",
            predicate="lives_in",
            object="Oslo",
            valid_from="2024-05-01",  # pyright: ignore[reportArgumentType]
            valid_to="2024-01-01",  # pyright: ignore[reportArgumentType]
        )


@pytest.mark.parametrize("kind", list(IntentType))
def test_every_question_type_has_default_depths_within_bounds(kind: IntentType) -> None:
    hints = default_depth_hints(kind)
    assert all(1 <= d <= 5 for d in (hints.semantic, hints.entity, hints.temporal, hints.causal))


def test_why_goes_deepest_on_the_causal_graph_and_when_on_the_temporal_one() -> None:
    assert default_depth_hints(IntentType.WHY).causal == 3
    assert default_depth_hints(IntentType.WHEN).temporal == 3


def test_an_intent_refuses_unknown_fields() -> None:
    with pytest.raises(ValidationError, match="extra"):
        Intent.model_validate({"type": "WHY", "mood": "curious"})
