"""`recall.concurrency.both`: two waits side by side, results in order, failures as themselves."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest
from polyg_core.recall.concurrency import both


class PantryEmpty(Exception):
    """An invented failure of one of the two waits."""


@pytest.mark.anyio
async def test_both_returns_each_result_in_the_order_given() -> None:
    async def slow_name() -> str:
        await anyio.sleep(0.01)
        return "Marisol"

    async def quick_count() -> int:
        return 7

    assert await both(slow_name(), quick_count()) == ("Marisol", 7)
    assert await both(quick_count(), slow_name()) == (7, "Marisol")


@pytest.mark.anyio
async def test_both_run_at_the_same_time_and_the_first_starts_first() -> None:
    started: list[str] = []
    second_waiting = anyio.Event()

    async def first() -> str:
        started.append("first")
        with anyio.fail_after(5):
            await second_waiting.wait()  # only ends if the second runs meanwhile
        return "kettle"

    async def second() -> str:
        started.append("second")
        second_waiting.set()
        return "teapot"

    assert await both(first(), second()) == ("kettle", "teapot")
    assert started == ["first", "second"]


@pytest.mark.anyio
@pytest.mark.parametrize("failing", ["first", "second"])
async def test_a_failure_is_raised_as_itself_and_cancels_the_other(failing: str) -> None:
    cancelled: list[str] = []

    async def fails() -> None:
        await anyio.lowlevel.checkpoint()
        raise PantryEmpty("no flour left in the pantry")

    async def waits() -> str:
        try:
            with anyio.fail_after(5):
                await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            cancelled.append("waits")
            raise
        return "never"

    pair = (fails(), waits()) if failing == "first" else (waits(), fails())
    with pytest.raises(PantryEmpty, match="no flour"):
        await both(*pair)
    assert cancelled == ["waits"]
