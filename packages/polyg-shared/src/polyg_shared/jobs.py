"""Background jobs: what a queued call answers, what get_job / list_jobs show."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from polyg_shared.pages import PageOutput
from polyg_shared.retrieval import UsageReport

JobStatus = Literal["queued", "running", "done", "failed", "cancelled"]
"""Where a job is: waiting (also between retries), running, or finished one way or another."""

JOB_STATUSES: tuple[JobStatus, ...] = ("queued", "running", "done", "failed", "cancelled")
FINISHED_STATUSES: frozenset[JobStatus] = frozenset({"done", "failed", "cancelled"})


class JobRef(BaseModel):
    """The answer of a queued call: the job to follow with get_job."""

    model_config = ConfigDict(extra="forbid")

    job_id: str = Field(description="Pass it to get_job, cancel_job or retry_job.")
    kind: str = Field(description="What the job does, e.g. 'remember'.")
    graph: str
    status: JobStatus
    content_hash: str = Field(description="sha256 of the content; the job's idempotency key.")
    deduplicated: bool = Field(
        default=False,
        description="True when the same content was already queued or running for this graph: "
        "no second job was made and this is the existing one.",
    )


class JobInfo(BaseModel):
    """One job: status, progress, attempts, result or error, timings and tokens."""

    model_config = ConfigDict(extra="forbid")

    job_id: str
    kind: str
    graph: str
    status: JobStatus
    progress: float = Field(ge=0.0, le=1.0, description="0 = not started, 1 = finished.")
    stage: str | None = Field(default=None, description="What a running job is doing now.")
    attempts: int = Field(description="Attempts started so far (a retry adds one).")
    max_attempts: int
    error: str | None = Field(
        default=None, description="Why the job failed (or why the last attempt failed)."
    )
    errors: list[str] = Field(
        default_factory=list, description="The error of every failed attempt, oldest first."
    )
    result: dict[str, Any] | None = Field(
        default=None, description="The finished job's result (for remember: a RememberResult)."
    )
    usage: UsageReport | None = Field(default=None, description="LLM tokens the job used.")
    content_hash: str | None = None
    content_preview: str | None = Field(default=None, description="The first 120 characters.")
    enqueued_at: str | None = Field(default=None, description="ISO 8601 UTC.")
    started_at: str | None = None
    finished_at: str | None = None
    next_attempt_at: str | None = Field(
        default=None, description="When a job waiting for a retry runs again."
    )
    wait_ms: int | None = Field(default=None, description="From enqueue to the last start.")
    run_ms: int | None = Field(default=None, description="From the last start to the finish.")
    worker_id: str | None = None


class JobStats(BaseModel):
    """Counts of the jobs the queue still holds, per status, and live workers."""

    model_config = ConfigDict(extra="forbid")

    queued: int = 0
    running: int = 0
    done: int = 0
    failed: int = 0
    cancelled: int = 0
    total: int = 0
    workers: int = Field(default=0, description="Worker processes seen in the last minute.")


class JobList(PageOutput):
    """Jobs matching the filters (newest first) and the counts behind them."""

    model_config = ConfigDict(extra="forbid")

    jobs: list[JobInfo]
    stats: JobStats
