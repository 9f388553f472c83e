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

    async def one(i: int, work: Awaitable[Any]) -> None:
        out[i] = await work

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(one, 0, first)
            tg.start_soon(one, 1, second)
    except BaseExceptionGroup as group:
        # Callers expect polyg's own error (storage down, timeout), not a group of them.
        raise group.exceptions[0] from group
    return cast(_T, out[0]), cast(_U, out[1])
