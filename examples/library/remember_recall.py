"""polyg as a Python library: remember a few notes, then ask why something failed.

    pip install "polyg-core[embedded,local]"    # once published on PyPI
    python remember_recall.py
    uv run python examples/library/remember_recall.py    # or, from a clone of this repository

No server and no LLM needed: the embedded FalkorDB starts under POLYG_DATA_DIR
(default ~/.polyg) and, with LLM_MODEL unset, the rule-based extractor and synthesizer
answer. Set LLM_MODEL (any litellm model) for LLM extraction and answers.
"""

from __future__ import annotations

import asyncio

from polyg_core import Memory

NOTES = [
    ("2026-03-14T09:55:00Z", "deploy-v2.3.1 was rolled out to production by Alice."),
    (
        "2026-03-14T10:00:00Z",
        "The deploy of deploy-v2.3.1 led to a missing AUTH_SECRET in the auth-service config.",
    ),
    (
        "2026-03-14T10:02:00Z",
        "auth-service crashed at startup because AUTH_SECRET was missing.",
    ),
]


async def run(memory: Memory, graph: str = "library_example") -> str:
    """Remember the notes in `graph`, recall why the auth service failed, return the report."""
    lines: list[str] = []
    for when, text in NOTES:
        written = await memory.remember(text, graph=graph, reference_time=when)
        names = ", ".join(e.name for e in written.entities)
        lines.append(f"remembered: {text!r} -> entities [{names}]")
    result = await memory.recall("Why did the auth service fail?", graph=graph)
    lines.append(f"answer: {result.answer}")
    for step in result.reasoning.causal_chain:
        lines.append(f"  {step.cause} -> {step.effect} (confidence {step.confidence:.2f})")
    if result.degraded:
        lines.append(f"(rule-based path: {'; '.join(result.degraded_reasons)})")
    return "\n".join(lines)


async def main() -> None:
    async with await Memory.open() as memory:
        print(await run(memory))


if __name__ == "__main__":
    asyncio.run(main())
