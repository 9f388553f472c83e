"""Turning saq's stored jobs into the `JobInfo` users see."""

from __future__ import annotations

import time
from typing import Any, cast

from polyg_shared.jobs import JobInfo, JobStatus
from polyg_shared.retrieval import UsageReport
from polyg_shared.timeutil import from_epoch_ms, iso
from saq.job import Job, Status

PREVIEW_CHARS = 120
SWEPT = "swept"

_STATUS: dict[Status, JobStatus] = {
    Status.NEW: "queued",
    Status.QUEUED: "queued",
    Status.ACTIVE: "running",
    Status.ABORTING: "running",
    Status.ABORTED: "cancelled",
    Status.FAILED: "failed",
    Status.COMPLETE: "done",
}

SAQ_STATUSES: dict[JobStatus, list[Status]] = {}
for _saq, _ours in _STATUS.items():
    SAQ_STATUSES.setdefault(_ours, []).append(_saq)


def job_status(job: Job) -> JobStatus:
    """The user-facing status of a saq job."""
    return _STATUS[job.status]


def _iso_ms(value: int | float | None) -> str | None:
    return iso(from_epoch_ms(int(value))) if value else None


def _friendly(error: str) -> str:
    if error.strip() == SWEPT:
        return (
            "the worker running this job stopped responding (killed or lost its heartbeat); "
            "the job was put back in the queue"
        )
    lines = [line for line in error.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else error


def last_error(job: Job) -> str | None:
    """The error of the job's last failed attempt, without the traceback."""
    errors: list[Any] = list(job.meta.get("errors") or [])
    if job.status in (Status.QUEUED, Status.ACTIVE, Status.COMPLETE) and not errors:
        return None
    if job.error and (not errors or job.error.strip() == SWEPT):
        return _friendly(job.error)
    return str(errors[-1]) if errors else None


def to_info(job: Job, *, include_result: bool = True, retry_at: float | None = None) -> JobInfo:
    """A saq job as a `JobInfo`; `retry_at` (epoch seconds) when it waits for a retry."""
    kwargs: dict[str, Any] = job.kwargs or {}
    content = str(kwargs.get("content") or "")
    stored: Any = job.result
    result: Any = cast(dict[str, Any], stored) if isinstance(stored, dict) else None
    status = job_status(job)
    return JobInfo(
        job_id=job.key,
        kind=str(job.meta.get("kind") or job.function),
        graph=str(kwargs.get("graph") or ""),
        status=status,
        progress=min(max(float(job.progress or 0.0), 0.0), 1.0),
        stage=_stage(job, status),
        attempts=job.attempts,
        max_attempts=job.retries,
        error=last_error(job),
        errors=[str(e) for e in job.meta.get("errors") or ()],
        result=result if include_result else None,
        usage=_usage(result),
        content_hash=str(kwargs.get("content_hash") or "") or None,
        content_preview=content[:PREVIEW_CHARS] or None,
        enqueued_at=_iso_ms(job.queued),
        started_at=_iso_ms(job.started),
        finished_at=_iso_ms(job.completed),
        next_attempt_at=_next_attempt(status, retry_at),
        wait_ms=job.duration("start"),
        run_ms=job.duration("process"),
        worker_id=job.worker_id,
    )


def _usage(result: dict[str, Any] | None) -> UsageReport | None:
    if result is not None and isinstance(result.get("usage"), dict):
        return UsageReport.model_validate(result["usage"])
    return None


def _stage(job: Job, status: str) -> str | None:
    """What a running job is doing now (none once it stopped running)."""
    return str(job.meta["stage"]) if job.meta.get("stage") and status == "running" else None


def _next_attempt(status: str, retry_at: float | None) -> str | None:
    """When a queued job that failed is tried again, if that is still to come."""
    if status != "queued" or not retry_at or retry_at <= time.time():
        return None
    return iso(from_epoch_ms(int(retry_at * 1000)))
