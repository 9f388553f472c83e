"""The calibrated confidence: a table per answer group, read monotonically, with caps."""

from __future__ import annotations

from polyg_core.recall.answer.calibration import (
    calibrated,
    calibrated_confidence,
    calibrated_from_factors,
    group_keys,
)
from polyg_core.recall.answer.confidence import CONTRADICTED_CAP, Evidence, factors_of

TABLE = {
    "when/q/s": ((0.2, 0.1), (0.6, 0.5), (0.9, 0.9)),
    "who_what": ((0.0, 0.02), (1.0, 0.3)),
    "all": ((0.0, 0.05), (1.0, 0.6)),
}


def test_the_most_specific_group_with_a_table_answers() -> None:
    assert calibrated(0.6, group_keys("when", True, True), TABLE) == 0.5
    # No table for quoted, unshaped WHO/WHAT answers: the route's table.
    assert calibrated(0.5, group_keys("who_what", True, False), TABLE) == 0.16
    # No table for the route: the pooled one.
    assert calibrated(1.0, group_keys("why", False, True), TABLE) == 0.6


def test_between_knots_is_interpolated_and_outside_is_the_nearest() -> None:
    keys = group_keys("when", True, True)
    assert calibrated(0.4, keys, TABLE) == 0.3
    assert calibrated(0.05, keys, TABLE) == 0.1
    assert calibrated(0.99, keys, TABLE) == 0.9


def test_an_empty_table_leaves_the_raw_confidence() -> None:
    assert calibrated(0.42, ["when", "all"], {}) == 0.42


def test_evidence_about_another_time_stays_capped() -> None:
    strong = Evidence(match=1.0, margin=1.0, agreement=4, time=0.0, route="when", quoted=True)
    high = {"all": ((0.0, 0.9), (1.0, 0.99))}
    assert calibrated_confidence(strong, high) == CONTRADICTED_CAP
    # The benches' refit reads the same rule from the reported factors.
    assert calibrated_from_factors(factors_of(strong), high) == CONTRADICTED_CAP


def test_the_factors_carry_the_raw_confidence_and_route() -> None:
    factors = factors_of(Evidence(match=0.5, route="at_time"))
    assert factors["route_at_time"] == 1.0
    assert 0.0 < factors["raw"] < 1.0
