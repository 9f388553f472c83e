"""cProfile of recall and remember on a generated namespace: where the time goes."""

from __future__ import annotations

import cProfile
import io
import pstats
from dataclasses import dataclass

from polyg_core.memory import Memory

from polyg_bench.generate import START_MS, YEAR_MS, Generated
from polyg_bench.scale import when


@dataclass
class Profile:
    """The top functions by own time and by cumulative time, as pstats text."""

    operation: str
    calls: int
    by_tottime: str
    by_cumtime: str


def _render(prof: cProfile.Profile, key: str, top: int) -> str:
    out = io.StringIO()
    pstats.Stats(prof, stream=out).strip_dirs().sort_stats(key).print_stats(top)
    return out.getvalue()


async def profile_operations(
    memory: Memory, gen: Generated, *, calls: int = 20, top: int = 25
) -> list[Profile]:
    """Profile `calls` recalls and `calls` remembers (rule-based path) on `gen`'s namespace."""
    ns = gen.namespace
    ref = when(START_MS + YEAR_MS)
    names = gen.entity_names
    out: list[Profile] = []
    await memory.recall(f"What happened to {names[0]}?", graph=ns, reference_time=ref)  # warm-up
    prof = cProfile.Profile()
    prof.enable()
    for i in range(calls):
        name = names[(i * 7919) % len(names)]
        await memory.recall(f"Why did {name} fail?", graph=ns, reference_time=ref)
    prof.disable()
    out.append(
        Profile("recall", calls, _render(prof, "tottime", top), _render(prof, "cumulative", top))
    )
    prof = cProfile.Profile()
    prof.enable()
    for i in range(calls):
        a, b = names[(i * 104729) % len(names)], names[(i * 7) % len(names)]
        await memory.remember(
            f"Profile note {i}: {a} deployed {b}, which caused a latency spike in {a}.",
            graph=ns,
            reference_time=ref,
        )
    prof.disable()
    out.append(
        Profile("remember", calls, _render(prof, "tottime", top), _render(prof, "cumulative", top))
    )
    return out
