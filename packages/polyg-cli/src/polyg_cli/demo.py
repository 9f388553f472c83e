"""`polyg demo`: load two scenarios into a fresh `demo` graph and ask why/when/who/what."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from polyg_cli import render
from polyg_cli.runtime import CliState, open_memory, print_json, run, state

SCENARIOS = ("deployment_failure", "incident_response")
REFERENCE_TIME = "2026-01-14T12:00:00Z"
"""'Now' for the demo's questions, two days after the scenarios' incidents."""
QUESTIONS = (
    "Why did the auth service crash?",
    "When did the auth service crash?",
    "Who owns the auth service?",
    "What happened to payments-api during incident INC-4521?",
    "Why did payments-api time out?",
)


async def run_demo(st: CliState, console: Console, graph: str) -> dict[str, Any]:
    """Clear `graph`, load the scenarios, ask the questions; print as it goes."""
    from polyg_core.scenarios import load_scenario, read_scenario

    out: dict[str, Any] = {"graph": graph, "scenarios": [], "answers": []}
    t0 = time.perf_counter()
    async with open_memory(st, graph) as memory:
        deleted = await memory.store.delete_graph(graph)
        console.print(
            f"[bold]polyg demo[/] — FalkorDB {memory.store.where}, graph {graph!r}"
            f"{' (cleared)' if deleted else ''}, embeddings {memory.embedder.model_name}, "
            f"LLM {st.settings.llm_model or 'none (rule-based)'}",
            highlight=False,
        )
        for name in SCENARIOS:
            scenario = read_scenario(name)
            t1 = time.perf_counter()
            report = await load_scenario(memory, name, graph)
            ms = (time.perf_counter() - t1) * 1000
            counts = ", ".join(
                f"{c.created + c.merged} {k}"
                for k, c in report.kinds.items()
                if c.created + c.merged
            )
            console.print(
                f"loaded [bold]{scenario.name}[/]: {counts} in {ms:.0f} ms", highlight=False
            )
            out["scenarios"].append({"name": scenario.name, **report.to_dict(), "ms": round(ms, 1)})
        for question in QUESTIONS:
            console.print()
            result = await memory.recall(question, reference_time=REFERENCE_TIME)
            render.recall_result(console, result)
            out["answers"].append(result.model_dump(mode="json"))
    out["total_s"] = round(time.perf_counter() - t0, 2)
    console.print(f"\n[dim]demo finished in {out['total_s']:.1f} s[/]")
    return out


def demo_command(
    ctx: typer.Context,
    graph: Annotated[str, typer.Option("--graph", "-g", help="Graph to (re)build.")] = "demo",
    record: Annotated[
        Path | None, typer.Option("--record", help="Also save the output as plain text here.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the answers as JSON.")] = False,
) -> None:
    """Load the deployment-failure and incident-response scenarios into a fresh graph and
    answer why / when / who / what questions with causal chains, confidences and timings."""
    st = state(ctx)
    console = Console(record=True, width=110) if record else st.out
    if as_json:
        console = Console(quiet=True)
    result = run(st, lambda: run_demo(st, console, graph))
    if record:
        record.write_text(console.export_text(), encoding="utf-8")
    if as_json:
        print_json(result)
