"""Background jobs on the FalkorDB server's Redis (saq): queue, workers, rate limiter."""

from polyg_core.jobs.queue import (
    QUEUE_NAME,
    REMEMBER,
    JobNotFound,
    JobPolicy,
    JobQueue,
    open_redis,
    remember_job_id,
)
from polyg_core.jobs.ratelimit import (
    ProviderRateLimiter,
    ProviderUnavailable,
    RateLimited,
    RateLimitedLLM,
)
from polyg_core.jobs.worker import JobWorker, job_memory, remember_job

__all__ = [
    "QUEUE_NAME",
    "REMEMBER",
    "JobNotFound",
    "JobPolicy",
    "JobQueue",
    "JobWorker",
    "ProviderRateLimiter",
    "ProviderUnavailable",
    "RateLimited",
    "RateLimitedLLM",
    "job_memory",
    "open_redis",
    "remember_job",
    "remember_job_id",
]
