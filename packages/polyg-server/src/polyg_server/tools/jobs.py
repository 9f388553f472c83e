"""Job tools: follow, list, cancel and retry background jobs (queued remember calls).

The queue lives in the FalkorDB server's Redis (see polyg_core.jobs); it is opened
once per server context on first use and kept in `ctx.services`. `background_jobs`
runs the context's in-process worker for the server's lifespan.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
from polyg_core.errors import PolygError
from polyg_core.storage.namespace import validate_namespace
from polyg_shared.jobs import JobInfo, JobList, JobStatus
from polyg_shared.pages import PageInput
from pydantic import BaseModel, ConfigDict, Field, field_validator

from polyg_server.context import ServerContext
from polyg_server.paging import Page
from polyg_server.registry import READ_ONLY, WRITE, WRITE_IDEMPOTENT, ToolSpec

if TYPE_CHECKING:
    # The queue brings saq and the Redis client: imported when a queue is opened.
    from polyg_core.jobs import JobQueue, JobWorker

logger = logging.getLogger(__name__)

_KEY = "jobs.queue"
_LOCK = "jobs.queue.lock"
_RUNNER = "jobs.runner"
_OPEN_RETRY_MAX_S = 30.0
_STOP_MARGIN_S = 10.0

JobId = Field(
    min_length=1,
    max_length=200,
    description="The job id a queued call answered with (list_jobs shows them).",
)


class JobArgs(BaseModel):
    """Arguments of a tool that acts on one job."""

    model_config = ConfigDict(extra="forbid")

    job_id: str = JobId


class ListJobsArgs(PageInput):
    """Filters of list_jobs, and the page."""

    graph: str | None = Field(
        default=None, description="Only jobs of this graph (namespace); omit for every graph."
    )
    status: list[JobStatus] = Field(
        default_factory=list[JobStatus],
        description="Only jobs in these states: queued, running, done, failed, cancelled.",
    )
    limit: int = Field(default=50, ge=1, le=500, description="At most this many jobs.")

    @field_validator("graph")
    @classmethod
    def _valid_graph(cls, value: str | None) -> str | None:
        return None if value is None else validate_namespace(value)


async def job_queue(ctx: ServerContext) -> JobQueue:
    """The context's job queue, opened on first use."""
    from polyg_core.jobs import JobQueue

    queue = ctx.services.get(_KEY)
    if isinstance(queue, JobQueue):
        return queue
    lock = ctx.services.setdefault(_LOCK, anyio.Lock())
    async with lock:
        queue = ctx.services.get(_KEY)
        if not isinstance(queue, JobQueue):
            queue = await JobQueue.open(ctx.store, name=ctx.jobs.queue_name, policy=ctx.jobs.policy)
            ctx.services[_KEY] = queue
    return queue


async def close_job_queue(ctx: ServerContext) -> None:
    """Close the context's job queue if it was opened (a later call opens it again)."""
    from polyg_core.jobs import JobQueue

    queue = ctx.services.pop(_KEY, None)
    if isinstance(queue, JobQueue):
        await queue.close()


@dataclass
class _WorkerRun:
    """The in-process worker of one context, shared by every session of its server."""

    users: int = 0
    task: asyncio.Task[None] | None = None
    worker: JobWorker | None = None


async def _run_worker(ctx: ServerContext, run: _WorkerRun) -> None:
    from polyg_core.jobs import JobWorker

    opts = ctx.jobs
    memory = ctx.require_memory()
    delay = 1.0
    while True:
        try:
            queue = await job_queue(ctx)
            break
        except (PolygError, OSError) as exc:
            # The store may come back (a restarted FalkorDB): keep trying, quietly.
            logger.warning("job queue unavailable (%s); retrying in %.0f s", exc, delay)
            await anyio.sleep(delay)
            delay = min(delay * 2, _OPEN_RETRY_MAX_S)
    run.worker = JobWorker(
        queue,
        memory,
        concurrency=opts.workers,
        sweep_s=opts.sweep_s,
        shutdown_grace_s=opts.shutdown_grace_s,
        dequeue_timeout_s=opts.dequeue_timeout_s,
    )
    try:
        await run.worker.run()
    except Exception:  # a background task: nobody else would see it
        logger.exception("the job worker stopped on an error; queued jobs wait for a worker")
        raise


async def _stop(ctx: ServerContext, run: _WorkerRun) -> None:
    task = run.task
    run.task = None
    if task is not None:
        # Cancelling the worker's run stops it: running jobs get the grace period, then
        # go back to the queue; an idle worker stops at once.
        task.cancel()
        # Its errors were logged where they happened.
        await asyncio.gather(task, return_exceptions=True)
    if run.worker is not None:
        logger.info("job worker %s stopped", run.worker.worker_id)
        run.worker = None
    await close_job_queue(ctx)


@asynccontextmanager
async def background_jobs(ctx: ServerContext) -> AsyncGenerator[None]:
    """Run the context's in-process job worker while the block runs (the server's lifespan).

    The worker starts in the background (the queue is opened there, so serving does
    not wait for it) and takes `ctx.jobs.workers` jobs at a time; nested or
    concurrent blocks on one context share it, and the last one to leave stops it:
    running jobs get `ctx.jobs.shutdown_grace_s`, then go back to the queue and run
    again on the next start. Nothing runs when `ctx.jobs.workers` is 0 or the
    server has no memory (no embedding model).
    """
    if ctx.jobs.workers == 0:
        yield
        return
    if ctx.embedder is None and ctx.memory is None:
        logger.warning("no job worker: the server has no memory (no embedding model)")
        yield
        return
    run = ctx.services.setdefault(_RUNNER, _WorkerRun())
    assert isinstance(run, _WorkerRun)
    run.users += 1
    if run.task is None:
        run.task = asyncio.create_task(_run_worker(ctx, run), name="polyg-job-worker")
    try:
        yield
    finally:
        run.users -= 1
        if run.users == 0:
            with (
                anyio.CancelScope(shield=True),
                anyio.move_on_after(ctx.jobs.shutdown_grace_s + _STOP_MARGIN_S) as scope,
            ):
                await _stop(ctx, run)
            if scope.cancelled_caught:
                logger.warning("the job worker did not stop in time; its jobs will be swept")


async def get_job(ctx: ServerContext, inp: JobArgs) -> JobInfo:
    """One job: status, progress, attempts, result or error, timings, tokens."""
    return await (await job_queue(ctx)).get(inp.job_id)


async def list_jobs(ctx: ServerContext, inp: ListJobsArgs) -> JobList:
    """Jobs matching the filters, newest first, with counts per status."""
    page = Page.open(inp, limit=inp.limit)
    queue = await job_queue(ctx)
    jobs, _ = await queue.list_jobs(graph=inp.graph, statuses=inp.status, limit=page.fetch)
    stats = await queue.stats(inp.graph)
    return page.fill(page.window(jobs), lambda part: JobList(jobs=part, stats=stats))


async def cancel_job(ctx: ServerContext, inp: JobArgs) -> JobInfo:
    """Cancel a queued or running job."""
    return await (await job_queue(ctx)).cancel(inp.job_id)


async def retry_job(ctx: ServerContext, inp: JobArgs) -> JobInfo:
    """Queue a failed or cancelled job again with fresh attempts."""
    return await (await job_queue(ctx)).retry(inp.job_id)


TOOLS: tuple[ToolSpec[Any, Any], ...] = (
    ToolSpec(
        name="get_job",
        description=(
            "Follow a queued remember: status (queued, running, done, failed, cancelled), "
            "progress, and the result when done or the error when failed."
        ),
        input_model=JobArgs,
        output_model=JobInfo,
        handler=get_job,
        annotations=READ_ONLY,
        profile="memory",
    ),
    ToolSpec(
        name="list_jobs",
        description=(
            "List background jobs, newest first, filtered by graph and status, with counts "
            "per status (queued, running, done, failed, cancelled) and live workers."
        ),
        input_model=ListJobsArgs,
        output_model=JobList,
        handler=list_jobs,
        annotations=READ_ONLY,
        profile="admin",
    ),
    ToolSpec(
        name="cancel_job",
        description=(
            "Cancel a queued or running background job. A job that already finished cannot "
            "be cancelled; writes a running job already made stay (they are idempotent)."
        ),
        input_model=JobArgs,
        output_model=JobInfo,
        handler=cancel_job,
        annotations=WRITE_IDEMPOTENT,
        profile="admin",
    ),
    ToolSpec(
        name="retry_job",
        description=(
            "Run a failed or cancelled background job again with a fresh set of attempts "
            "(safe: remember never writes the same content twice)."
        ),
        input_model=JobArgs,
        output_model=JobInfo,
        handler=retry_job,
        annotations=WRITE,
        profile="admin",
    ),
)
