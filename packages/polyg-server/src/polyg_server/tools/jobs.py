"""Job tools: follow, list, cancel and retry background jobs (queued remember calls).

The queue lives in the FalkorDB server's Redis (see polyg_core.jobs); it is opened
once per server context on first use and kept in `ctx.services`.
"""

from __future__ import annotations

from typing import Any

import anyio
from polyg_core.jobs import JobQueue
from polyg_core.storage.namespace import validate_namespace
from polyg_shared.jobs import JobInfo, JobList, JobStatus
from pydantic import BaseModel, ConfigDict, Field, field_validator

from polyg_server.context import ServerContext
from polyg_server.registry import READ_ONLY, WRITE, WRITE_IDEMPOTENT, ToolSpec

_KEY = "jobs.queue"
_LOCK = "jobs.queue.lock"

JobId = Field(
    min_length=1,
    max_length=200,
    description="The job id a queued call answered with (list_jobs shows them).",
)


class JobArgs(BaseModel):
    """Arguments of a tool that acts on one job."""

    model_config = ConfigDict(extra="forbid")

    job_id: str = JobId


class ListJobsArgs(BaseModel):
    """Filters of list_jobs."""

    model_config = ConfigDict(extra="forbid")

    graph: str | None = Field(
        default=None, description="Only jobs of this graph (namespace); omit for every graph."
    )
    status: list[JobStatus] = Field(
        default_factory=list,
        description="Only jobs in these states: queued, running, done, failed, cancelled.",
    )
    limit: int = Field(default=50, ge=1, le=500, description="At most this many jobs.")

    @field_validator("graph")
    @classmethod
    def _valid_graph(cls, value: str | None) -> str | None:
        return None if value is None else validate_namespace(value)


async def job_queue(ctx: ServerContext) -> JobQueue:
    """The context's job queue, opened on first use."""
    queue = ctx.services.get(_KEY)
    if isinstance(queue, JobQueue):
        return queue
    lock = ctx.services.setdefault(_LOCK, anyio.Lock())
    async with lock:
        queue = ctx.services.get(_KEY)
        if not isinstance(queue, JobQueue):
            queue = await JobQueue.open(ctx.store)
            ctx.services[_KEY] = queue
    return queue


async def get_job(ctx: ServerContext, inp: JobArgs) -> JobInfo:
    """One job: status, progress, attempts, result or error, timings, tokens."""
    return await (await job_queue(ctx)).get(inp.job_id)


async def list_jobs(ctx: ServerContext, inp: ListJobsArgs) -> JobList:
    """Jobs matching the filters, newest first, with counts per status."""
    queue = await job_queue(ctx)
    jobs, truncated = await queue.list_jobs(graph=inp.graph, statuses=inp.status, limit=inp.limit)
    return JobList(jobs=jobs, stats=await queue.stats(inp.graph), truncated=truncated)


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
            "Follow a background job (e.g. a queued remember): status queued/running/done/"
            "failed/cancelled, progress, attempts, the result when done or the error when "
            "failed, timings and LLM tokens used."
        ),
        input_model=JobArgs,
        output_model=JobInfo,
        handler=get_job,
        annotations=READ_ONLY,
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
    ),
)
