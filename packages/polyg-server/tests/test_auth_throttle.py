"""The wait after failed authentications: per address, doubling, bounded, forgotten."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from polyg_server.auth_throttle import AuthThrottle, retry_after_header


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_wait_doubles_past_the_free_failures_up_to_the_bound() -> None:
    clock = Clock()
    throttle = AuthThrottle(free_failures=3, max_delay_s=10.0, clock=clock)
    delays: list[float] = []
    for _ in range(9):
        delays.append(throttle.failed("10.0.0.7"))
        clock.now += 100  # past every wait, but not long enough to be forgotten
    assert delays == [0, 0, 0, 1, 2, 4, 8, 10, 10]


def test_the_wait_runs_out_and_is_per_address() -> None:
    clock = Clock()
    throttle = AuthThrottle(free_failures=1, max_delay_s=60.0, clock=clock)
    throttle.failed("10.0.0.7")
    assert throttle.failed("10.0.0.7") == 1.0
    assert throttle.wait_s("10.0.0.7") == 1.0
    assert throttle.wait_s("10.0.0.8") == 0.0
    clock.now += 0.4
    assert throttle.wait_s("10.0.0.7") == pytest.approx(0.6)
    clock.now += 0.6
    assert throttle.wait_s("10.0.0.7") == 0.0


def test_a_right_key_clears_the_address() -> None:
    clock = Clock()
    throttle = AuthThrottle(free_failures=1, max_delay_s=60.0, clock=clock)
    throttle.failed("10.0.0.7")
    throttle.failed("10.0.0.7")
    throttle.succeeded("10.0.0.7")
    assert throttle.wait_s("10.0.0.7") == 0.0
    assert throttle.failed("10.0.0.7") == 0.0  # free again


def test_old_addresses_are_forgotten_and_the_table_is_bounded() -> None:
    clock = Clock()
    throttle = AuthThrottle(
        free_failures=0, max_delay_s=5.0, forget_after_s=60.0, max_addresses=100, clock=clock
    )
    for i in range(1000):
        throttle.failed(f"10.0.{i // 256}.{i % 256}")
    assert len(throttle) == 100
    assert throttle.wait_s("10.0.3.231") > 0  # the most recent is kept
    assert throttle.wait_s("10.0.0.0") == 0  # the oldest went first
    clock.now += 61
    throttle.failed("192.0.2.1")
    assert len(throttle) == 1


def test_a_zero_max_delay_turns_the_throttle_off() -> None:
    throttle = AuthThrottle(free_failures=0, max_delay_s=0.0)
    assert not throttle.enabled
    assert [throttle.failed("10.0.0.7") for _ in range(5)] == [0.0] * 5
    assert throttle.wait_s("10.0.0.7") == 0.0


def test_bad_parameters_are_refused() -> None:
    with pytest.raises(ValueError, match="free_failures >= 0"):
        AuthThrottle(free_failures=-1)


@given(st.integers(min_value=0, max_value=10_000), st.floats(min_value=0.1, max_value=3600))
def test_the_wait_never_exceeds_the_bound(failures: int, bound: float) -> None:
    clock = Clock()
    throttle = AuthThrottle(free_failures=2, max_delay_s=bound, clock=clock)
    delay = 0.0
    for _ in range(min(failures, 200)):
        delay = throttle.failed("10.0.0.7")
    assert 0.0 <= delay <= bound
    assert throttle.wait_s("10.0.0.7") <= bound


@pytest.mark.parametrize(("seconds", "header"), [(0.01, "1"), (1.0, "1"), (1.2, "2"), (60, "60")])
def test_retry_after_is_whole_seconds_at_least_one(seconds: float, header: str) -> None:
    assert retry_after_header(seconds) == header
