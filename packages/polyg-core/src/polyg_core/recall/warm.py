"""Loading what a process's first recall would otherwise load mid-question.

Recall imports its heavier parts on first use so that a process that never recalls (a
CLI command, an import) starts fast: scipy's sparse matrices for personalized PageRank
and dateparser's language data for a date no rule reads. A server that will answer
questions runs `warm_recall` in a worker thread once it is up, so its first question pays
for neither (at load they cost the first multi-hop question seconds).
"""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["warm_recall"]


def warm_recall() -> None:
    """Import PageRank's scipy and read one date through dateparser (its language data)."""
    import polyg_core.algorithms.centrality  # noqa: F401  # pyright: ignore[reportUnusedImport]
    from polyg_core.text.timeparse import match_times

    match_times("on 03/04/2024", datetime(2024, 1, 1, tzinfo=UTC))  # a numeric date: dateparser
