"""A page whose results all fit by their bytes is answered without counting each one's
tokens, and the answer is the one counting gives: every result, not truncated; a page
near or over its budget is still counted (invented results)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from polyg_server.paging import (
    Page,
    _shorten,  # pyright: ignore[reportPrivateUsage]
    estimate_tokens,
    json_tokens,
)
from polyg_shared.pages import PageOutput
from pydantic import Field

_RESERVE = 40


class Names(PageOutput):
    names: list[str] = Field(default_factory=list[str])
    note: str = ""


def _build(part: list[str]) -> Names:
    return Names(names=part, note="Owners of the harbour cranes")


def _counted(page: Page, window: list[str]) -> Names:
    """The answer as `Page.fill` gave it before: every result's tokens counted."""
    build = _build
    candidates = window[: page.limit]
    budget = page.max_tokens - json_tokens(build([])) - _RESERVE
    kept: list[str] = []
    used = 0
    shortened = False
    for item in candidates:
        cost = json_tokens(item)
        if used + cost > budget:
            if kept:
                break
            item, shortened = _shorten(item, budget), True
            cost = json_tokens(item)
        kept.append(item)
        used += cost
    answer = build(kept)
    more = len(window) > len(kept)
    return answer.model_copy(update={"truncated": more or shortened})


@settings(max_examples=300)
@given(st.text())
def test_the_estimate_never_exceeds_the_bytes(text: str) -> None:
    assert estimate_tokens(text) <= len(text.encode())


NAMES = st.lists(
    st.one_of(
        st.sampled_from(["Tavita Moana", "Grete Aalto", "crane-7 east quay", "Ōtautahi depot"]),
        st.text(min_size=0, max_size=400),
    ),
    max_size=12,
)


@settings(max_examples=300)
@given(NAMES, st.integers(min_value=50, max_value=1500), st.integers(min_value=1, max_value=12))
def test_a_page_is_what_counting_each_result_gives(
    window: list[str], max_tokens: int, limit: int
) -> None:
    page = Page(offset=0, limit=limit, max_tokens=max_tokens, query="q")
    got = page.fill(window, _build)
    want = _counted(page, window)
    assert got.names == want.names
    assert got.truncated == want.truncated
    assert (got.next_cursor is None) == (len(window) <= len(got.names))
