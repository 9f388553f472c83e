"""`polyg recall` and `polyg remember`."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from polyg_cli import render
from polyg_cli.runtime import open_memory, print_json, run, state

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
    as_json: JsonOpt = False,
) -> None:
    """Answer a question from memory: answer, causal chain, timeline and sources."""
    st = state(ctx)

    async def go() -> Any:
        async with open_memory(st, graph) as memory:
            return await memory.recall(question, reference_time=at)

    result = run(st, go)
    if as_json:
        print_json(result.model_dump(mode="json"))
    else:
        render.recall_result(st.out, result)


def remember_command(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(help="What to remember, in plain language.")],
    graph: GraphOpt = None,
    at: WhenOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Remember a text: entities, events, facts and causal links are extracted and linked."""
    st = state(ctx)

    async def go() -> Any:
        async with open_memory(st, graph) as memory:
            return await memory.remember(text, reference_time=at)

    result = run(st, go)
    if as_json:
        print_json(result.model_dump(mode="json"))
    else:
        render.remember_result(st.out, result)
