"""Loading what a process's first recall would otherwise load mid-question.

Recall imports its heavier parts on first use so that a process that never recalls (a
CLI command, an import) starts fast: scipy's sparse matrices for personalized PageRank
and dateparser's language data for a date no rule reads. A server that will answer
questions runs `warm_recall` in a worker thread once it is up, so its first question pays
for neither (at load they cost the first multi-hop question seconds).

Once warm, `freeze_heap` takes what the process holds by then (modules, the model's and
dateparser's tables, the questions' imports) out of the garbage collector's full passes:
each such pass walked all of it, 70-120 ms on the dev conversation's process, and landed
in whichever recall was running, about one in twelve: they were recall's p95.
"""

from __future__ import annotations

import gc
from datetime import UTC, datetime

__all__ = ["YOUNG_COLLECTION_EVERY", "freeze_heap", "warm_recall"]

YOUNG_COLLECTION_EVERY = 10_000
"""Allocations between two passes over the youngest generation once the heap is frozen
(CPython's default: 700). A recall makes a few thousand objects that outlive the next
few hundred allocations (replies being read, nodes being built): at 700 the collector ran
8-9 young passes per recall on the dev conversation, and a full pass (15-20 ms, walking
what the process kept since the freeze) in about one recall out of ten, whichever was
running. At 10,000: ~0.1 young passes per recall, full passes a hundred times rarer, and
2.8 -> 0.9 ms of the collector's CPU per recall. Garbage cycles wait for at most that many
allocations, as they waited for 700."""


def warm_recall() -> None:
    """Import PageRank's scipy and read one date through dateparser (its language data)."""
    import polyg_core.algorithms.centrality  # noqa: F401  # pyright: ignore[reportUnusedImport]
    from polyg_core.text.timeparse import match_times

    match_times("on 03/04/2024", datetime(2024, 1, 1, tzinfo=UTC))  # a numeric date: dateparser


def freeze_heap() -> None:
    """Collect what is garbage now, then move every object alive out of the collector's
    full passes (`gc.freeze`): a process calls it once, when it has loaded what it keeps
    for its life and before it serves. Objects made later are collected as before; what
    is frozen is never freed (the startup's own objects, which live as long anyway).
    From then on the youngest generation is collected every `YOUNG_COLLECTION_EVERY`
    allocations (the older generations' thresholds are kept)."""
    gc.collect()
    gc.freeze()
    _young, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_EVERY, middle, old)
