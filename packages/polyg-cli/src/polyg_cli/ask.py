"""`polyg recall` and `polyg remember`."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from polyg_cli import render
from polyg_cli.runtime import open_memory, print_json, run, show, state

GraphOpt = Annotated[
    str | None, typer.Option("--graph", "-g", help="Memory graph (default FALKORDB_GRAPH).")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the full result as JSON.")]
WhenOpt = Annotated[
    str | None,
    typer.Option("--at", help="Reference time for relative phrases (ISO 8601; default now)."),
]


def recall_command(
    ctx: typer.Context,
    question: Annotated[str, typer.Argument(help="The question, e.g. 'Why did the deploy fail?'")],
    graph: GraphOpt = None,
    at: WhenOpt = None,
    retrievers: Annotated[
        str | None,
        typer.Option(
            "--retrievers",
            help="Memory retrievers to fuse, comma-separated (default all): lexical, dense, "
            "entity, time, neighbours, graph.",
        ),
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", min=1, max=200, help="How many ranked memories to list.")
    ] = 10,
    as_json: JsonOpt = False,
) -> None:
    """Answer a question from memory: answer, the memories that answer it, causal chain,
    timeline and sources."""
    st = state(ctx)
    chosen = [r for r in retrievers.split(",")] if retrievers is not None else None

    async def go() -> Any:
        async with open_memory(st, graph) as memory:
            return await memory.recall(
                question, reference_time=at, retrievers=chosen, memory_limit=limit
            )

    show(st, run(st, go), as_json, render.recall_result)


def remember_command(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(help="What to remember, in plain language.")],
    graph: GraphOpt = None,
    at: WhenOpt = None,
    as_json: JsonOpt = False,
    no_wait: Annotated[
        bool,
        typer.Option(
            "--no-wait",
            help="Queue it as a background job and print the job id (a polyg-mcp server "
            "or `polyg worker` runs it; `polyg jobs show ID` follows it).",
        ),
    ] = False,
) -> None:
    """Remember a text: entities, events, facts and causal links are extracted and linked."""
    st = state(ctx)
    if no_wait:
        _enqueue(st, text, graph, at, as_json)
        return

    async def go() -> Any:
        async with open_memory(st, graph) as memory:
            return await memory.remember(text, reference_time=at)

    show(st, run(st, go), as_json, render.remember_result)


def _enqueue(st: Any, text: str, graph: str | None, at: str | None, as_json: bool) -> None:
    from polyg_cli.jobs import job_queue

    async def go() -> Any:
        async with job_queue(st) as queue:
            return await queue.enqueue_remember(
                text, graph=graph or st.settings.namespace, reference_time=at
            )

    ref = run(st, go)
    if as_json:
        print_json(ref.model_dump(mode="json"))
        return
    again = " (already queued: the same text is pending)" if ref.deduplicated else ""
    st.out.print(f"queued as job {ref.job_id} ({ref.status}){again}")
    st.out.print(
        f"follow it with: polyg jobs show {ref.job_id}  (a running polyg-mcp server or "
        "`polyg worker` runs it)"
    )
