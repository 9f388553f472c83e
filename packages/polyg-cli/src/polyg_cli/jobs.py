"""`polyg jobs` (list, live view, show, cancel, retry) and `polyg worker` (a worker process)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any

import anyio
import typer
from rich.console import Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from polyg_cli.runtime import CliState, print_json, run, state

jobs_app = typer.Typer(
    name="jobs",
    help="Background jobs (queued remember calls): list, watch, show, cancel, retry.",
    invoke_without_command=True,
    no_args_is_help=False,
    rich_markup_mode=None,
)

_STYLE = {
    "queued": "yellow",
    "running": "cyan",
    "done": "green",
    "failed": "bold red",
    "cancelled": "dim",
}


@asynccontextmanager
async def job_queue(st: CliState) -> AsyncGenerator[Any]:
    """The job queue on the configured store, for the length of a block."""
    from polyg_core.jobs import JobQueue
    from polyg_core.storage.store import FalkorStore

    store = await FalkorStore(st.settings.storage).connect()
    try:
        queue = await JobQueue.open(store)
        try:
            yield queue
        finally:
            await queue.close()
    finally:
        await store.close()


def _table(jobs: list[Any], stats: Any) -> Group:
    head = Text.assemble(
        *[
            (f"{name} {getattr(stats, name)}  ", _STYLE[name])
            for name in ("queued", "running", "done", "failed", "cancelled")
        ],
        (f"workers {stats.workers}", "bold"),
    )
    table = Table(expand=True)
    for col in ("job", "graph", "status", "try", "progress", "ms", "content / error"):
        table.add_column(col, overflow="fold" if col == "content / error" else "ellipsis")
    for j in jobs:
        detail = j.error if j.status == "failed" and j.error else (j.content_preview or "")
        table.add_row(
            j.job_id.rsplit(":", 1)[-1][:12],
            j.graph,
            Text(j.status, style=_STYLE[j.status]),
            f"{j.attempts}/{j.max_attempts}",
            f"{j.progress:.0%}",
            str(j.run_ms or ""),
            detail,
        )
    return Group(head, table)


@jobs_app.callback()
def jobs_command(
    ctx: typer.Context,
    graph: Annotated[str | None, typer.Option("--graph", "-g", help="Only this graph.")] = None,
    status: Annotated[
        list[str] | None,
        typer.Option("--status", "-s", help="queued, running, done, failed, cancelled."),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", help="At most this many jobs.")] = 30,
    watch: Annotated[
        bool, typer.Option("--watch", "-w", help="Live view, refreshed every second.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """List jobs (newest first) with counts per status; --watch keeps the view live."""
    if ctx.invoked_subcommand is not None:
        return
    st = state(ctx)
    statuses: list[Any] = list(status or [])

    async def snapshot(queue: Any) -> tuple[list[Any], Any]:
        jobs, _ = await queue.list_jobs(graph=graph, statuses=statuses, limit=limit)
        return jobs, await queue.stats(graph)

    async def go() -> tuple[list[Any], Any]:
        async with job_queue(st) as queue:
            jobs, stats = await snapshot(queue)
            if not watch:
                return jobs, stats
            with Live(_table(jobs, stats), console=st.out, refresh_per_second=4) as live:
                while True:
                    await anyio.sleep(1.0)
                    jobs, stats = await snapshot(queue)
                    live.update(_table(jobs, stats))

    try:
        jobs, stats = run(st, go)
    except KeyboardInterrupt:
        raise typer.Exit(0) from None
    if as_json:
        print_json({"jobs": [j.model_dump(mode="json") for j in jobs], "stats": stats.model_dump()})
    else:
        st.out.print(_table(jobs, stats))


JobId = Annotated[str, typer.Argument(help="The job id.")]


def _on_queue(st: CliState, call: Callable[[Any], Awaitable[Any]]) -> Any:
    """Run one call on the job queue of the configured store."""

    async def go() -> Any:
        async with job_queue(st) as queue:
            return await call(queue)

    return run(st, go)


@jobs_app.command("show")
def show_command(ctx: typer.Context, job_id: JobId) -> None:
    """Everything about one job, as JSON (result, error of each attempt, timings, tokens)."""
    st = state(ctx)
    print_json(_on_queue(st, lambda queue: queue.get(job_id)).model_dump(mode="json"))


@jobs_app.command("cancel")
def cancel_command(ctx: typer.Context, job_id: JobId) -> None:
    """Cancel a queued or running job."""
    st = state(ctx)
    info = _on_queue(st, lambda queue: queue.cancel(job_id))
    st.out.print(f"job {info.job_id}: {info.status}")


@jobs_app.command("retry")
def retry_command(ctx: typer.Context, job_id: JobId) -> None:
    """Queue a failed or cancelled job again with fresh attempts."""
    st = state(ctx)
    info = _on_queue(st, lambda queue: queue.retry(job_id))
    st.out.print(f"job {info.job_id}: {info.status}")


def worker_command(
    ctx: typer.Context,
    concurrency: Annotated[
        int, typer.Option("--concurrency", "-c", min=1, max=256, help="Jobs run at once.")
    ] = 4,
    sweep: Annotated[
        int, typer.Option("--sweep", min=1, help="Seconds between looks for dead workers' jobs.")
    ] = 10,
    burst: Annotated[bool, typer.Option("--burst", help="Stop when the queue is empty.")] = False,
) -> None:
    """Run a worker process for queued jobs until Ctrl-C / SIGTERM (scale out with more)."""
    from polyg_core.jobs.process import run_worker_process

    st = state(ctx)
    st.err.print(f"polyg worker: concurrency {concurrency}; Ctrl-C stops it", highlight=False)

    async def go() -> None:
        await run_worker_process(st.settings, concurrency=concurrency, sweep_s=sweep, burst=burst)

    run(st, go)
