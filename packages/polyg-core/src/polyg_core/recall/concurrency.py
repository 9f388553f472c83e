"""Two reads awaited side by side, their failures raised as themselves.

Recall's steps wait on FalkorDB (and the embedder's thread) more than they compute: two
reads that do not depend on each other are sent together, so one round trip's wait
hides the other's.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, TypeVar, cast

import anyio

__all__ = ["both"]

_T = TypeVar("_T")
_U = TypeVar("_U")


async def both(first: Awaitable[_T], second: Awaitable[_U]) -> tuple[_T, _U]:
    """Both results, the two run concurrently; the first failure is raised as itself."""
    out: list[Any] = [None, None]

    async def other(work: Awaitable[Any]) -> None:
        out[1] = await work

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(other, second)
            # The first runs in this task (one task fewer to start: a recall awaits a dozen
            # pairs) and still goes first: the second starts at its first wait. A failure
            # of either cancels the other.
            out[0] = await first
    except BaseExceptionGroup as group:
        # Callers expect polyg's own error (storage down, timeout), not a group of them.
        raise group.exceptions[0] from group
    return cast(_T, out[0]), cast(_U, out[1])
