"""Recording which memories the read tools answered with, after the answer.

Decay (`polyg_core.recall.decay`) restarts a memory's clock when it is used. The read
tools (`recall`) stay read-only: they only note the memories they answered with here;
a background task of the server writes them afterwards, batched per namespace, through
`Memory.mark_accessed` — the separate, explicit write CONVENTIONS.md asks for.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

import anyio
from polyg_shared.timeutil import utc_now

from polyg_server.context import ContextOpening, ServerContext

logger = logging.getLogger(__name__)

BATCH_WINDOW_S = 0.2
"""How long the writer waits after the first noted read, so reads close together make
one write per namespace."""


@dataclass
class AccessLog:
    """Memories used by answers and not yet recorded: namespace -> uuid -> when used."""

    pending: dict[str, dict[str, datetime]] = field(default_factory=lambda: {})
    _wake: anyio.Event = field(default_factory=anyio.Event)

    def note(self, namespace: str, memory_uuids: Iterable[str]) -> None:
        """Remember that these memories answered a read now (no I/O, never fails)."""
        uuids = list(memory_uuids)
        if not uuids:
            return
        now = utc_now()
        batch = self.pending.setdefault(namespace, {})
        for uuid in uuids:
            batch[uuid] = now
        self._wake.set()

    def take(self) -> dict[str, dict[str, datetime]]:
        """Everything noted so far; the log is empty afterwards."""
        taken, self.pending = self.pending, {}
        self._wake = anyio.Event()
        return taken

    async def wait(self) -> None:
        """Until something is noted."""
        await self._wake.wait()


def access_log(ctx: ServerContext) -> AccessLog:
    """The context's access log (one per server context)."""
    log = ctx.services.get("access_log")
    if not isinstance(log, AccessLog):
        log = ctx.services["access_log"] = AccessLog()
    return log


async def flush(ctx: ServerContext) -> int:
    """Write what the log holds: one `mark_accessed` per namespace and time; how many
    memories were marked. A failed write is logged and dropped (decay is a hint)."""
    memory = ctx.memory_or_none()
    taken = access_log(ctx).take()
    if memory is None:
        return 0
    marked = 0
    for namespace, used in taken.items():
        if not used:
            continue
        try:
            marked += await memory.mark_accessed(list(used), graph=namespace, at=max(used.values()))
        except Exception as exc:  # the answers are out already; the next use marks again
            logger.warning("could not record memory access in %r: %s", namespace, exc)
    return marked


async def record_access(ctx: ServerContext | ContextOpening) -> None:
    """Run for the server's lifetime: write noted accesses shortly after each answer,
    and what is left when the server stops."""
    opened = ctx if isinstance(ctx, ServerContext) else await ctx.wait_opened()
    log = access_log(opened)
    try:
        while True:
            await log.wait()
            await anyio.sleep(BATCH_WINDOW_S)
            await _flush_logged(opened)
    finally:
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            await _flush_logged(opened)


async def _flush_logged(ctx: ServerContext) -> None:
    """`flush`, never failing: the server's other tasks share this one's task group."""
    try:
        await flush(ctx)
    except Exception:
        logger.exception("recording memory access failed")
