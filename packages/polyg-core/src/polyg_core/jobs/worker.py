"""Workers: run queued jobs in-process (bounded concurrency) or as `polyg worker` processes."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

import anyio
from saq.job import Job
from saq.worker import Worker

from polyg_core.errors import EmbeddingMismatch, InvalidInput
from polyg_core.jobs.queue import QUEUE_SOCKET_TIMEOUT_S, REMEMBER, JobQueue
from polyg_core.jobs.ratelimit import ProviderRateLimiter, RateLimitedLLM
from polyg_core.memory import Memory

logger = logging.getLogger(__name__)

MAX_ERRORS_KEPT = 10
_IDLE_STOP_ROUNDS = 20
_IDLE_STOP_WAIT_S = 0.05
PERMANENT_ERRORS: tuple[type[Exception], ...] = (InvalidInput, EmbeddingMismatch)
"""Errors a retry cannot fix: the job fails at once."""


@dataclass(frozen=True)
class JobRuntime:
    """What a job function needs, handed to it in the worker context."""

    memory: Memory
    heartbeat_s: float
    running_here: set[str]


def job_memory(memory: Memory, limiter: ProviderRateLimiter, max_wait_s: float) -> Memory:
    """The memory jobs use: the same store and embedder, the LLM behind the rate limiter."""
    llm = RateLimitedLLM(memory.llm, limiter, max_wait_s) if memory.llm is not None else None
    return Memory(
        store=memory.store,
        embedder=memory.embedder,
        llm=llm,
        settings=memory.settings,
        namespace=memory.namespace,
    )


def _describe(exc: BaseException) -> str:
    text = str(exc).strip() or "no message"
    return f"{type(exc).__name__}: {text}"


async def _heartbeat(job: Job, every_s: float) -> None:
    while True:
        await anyio.sleep(every_s)
        try:
            await job.update()
        except Exception:  # a missed beat is retried on the next one
            logger.debug("heartbeat of job %s failed", job.key, exc_info=True)


async def remember_job(
    ctx: dict[str, Any],
    *,
    graph: str,
    content: str,
    content_hash: str,
    reference_time: str | None = None,
    category: str | None = None,
    tags: list[str] | None = None,
    source_id: str | None = None,
) -> dict[str, Any]:
    """The `remember` job: `Memory.remember` with heartbeats and recorded errors."""
    runtime: JobRuntime = ctx["polyg"]
    job: Job = ctx["job"]
    job.meta["stage"] = "extracting and writing"
    await job.update(progress=0.1)
    result: dict[str, Any] | None = None
    failure: Exception | None = None
    runtime.running_here.add(job.key)
    try:
        async with anyio.create_task_group() as tg:
            beat = job.heartbeat or runtime.heartbeat_s
            tg.start_soon(_heartbeat, job, max(beat / 3, 0.2))
            try:
                remembered = await runtime.memory.remember(
                    content,
                    graph=graph,
                    reference_time=reference_time,
                    category=category,
                    tags=tags,
                    source_id=source_id,
                )
                result = remembered.model_dump(mode="json")
                result["content_hash"] = content_hash
            except Exception as exc:  # recorded on the job, then re-raised for saq's retries
                failure = exc
            tg.cancel_scope.cancel()
    finally:
        runtime.running_here.discard(job.key)
    if failure is not None:
        errors = [*list(job.meta.get("errors") or []), _describe(failure)]
        job.meta["errors"] = errors[-MAX_ERRORS_KEPT:]
        if isinstance(failure, PERMANENT_ERRORS):
            job.retries = job.attempts  # saq then finishes it as failed instead of retrying
        logger.warning("job %s attempt %d failed: %s", job.key, job.attempts, failure)
        raise failure
    assert result is not None
    job.meta.pop("stage", None)
    return result


class _Worker(Worker[Any]):
    """saq's worker, stopping at once when idle.

    saq waits up to the grace period for every slot, and an idle slot is blocked in
    its dequeue wait; with no job running the slots are cancelled instead. A job
    handed over just as its wait is cancelled stays in the active list, and the
    sweep of a live worker puts it back.
    """

    async def stop(self) -> None:
        if not self.job_task_contexts:
            self.event.set()
            pending = list(self.tasks)
            # A cancel landing inside a Redis call can be swallowed by the client (the
            # upkeep loop then sleeps out its period): cancel again until all are done.
            for _ in range(_IDLE_STOP_ROUNDS):
                pending = [t for t in pending if not t.done()]
                if not pending:
                    break
                for task in pending:
                    task.cancel()
                await asyncio.wait(pending, timeout=_IDLE_STOP_WAIT_S)
        await super().stop()


@dataclass
class JobWorker:
    """Runs queued jobs with bounded concurrency.

    In-process (the server's default): `async with worker.running(): ...`.
    As its own process (`polyg worker`): `await worker.run()` until SIGTERM/SIGINT.

    Args:
        queue: the job queue.
        memory: the memory jobs write to (its LLM is put behind the rate limiter).
        concurrency: jobs run at the same time by this worker.
        limiter: the per-provider rate limiter (one sharing pauses through Redis by default).
        sweep_s: how often this worker looks for jobs of dead workers.
        rate_limit_wait_s: how long one attempt waits out 429s before being retried.
        handle_signals: stop gracefully on SIGTERM/SIGINT (only for a worker process).
        burst: stop once the queue is empty (benchmarks).
        shutdown_grace_s: on stop, how long running jobs may finish before they are
            cancelled and put back in the queue.
        dequeue_timeout_s: how long each idle slot blocks waiting for a job before it
            looks again (a queued job wakes it at once; longer = fewer idle round trips);
            below the queue connection's socket timeout (`QUEUE_SOCKET_TIMEOUT_S`).
    """

    queue: JobQueue
    memory: Memory
    concurrency: int = 4
    limiter: ProviderRateLimiter | None = None
    sweep_s: int = 10
    rate_limit_wait_s: float = 120.0
    handle_signals: bool = False
    burst: bool = False
    shutdown_grace_s: int = 2
    dequeue_timeout_s: float = 1.0
    worker: Worker[Any] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise InvalidInput(f"worker concurrency must be at least 1, got {self.concurrency}")
        if not 0 < self.dequeue_timeout_s < QUEUE_SOCKET_TIMEOUT_S:
            raise InvalidInput(
                f"dequeue_timeout_s must be above 0 and below {QUEUE_SOCKET_TIMEOUT_S:g} s "
                f"(the queue connection's socket timeout), got {self.dequeue_timeout_s:g}"
            )
        if self.limiter is None:
            self.limiter = ProviderRateLimiter(
                redis=self.queue.redis, max_concurrency=self.concurrency
            )
        memory = job_memory(self.memory, self.limiter, self.rate_limit_wait_s)
        self.worker = _Worker(
            self.queue.queue,
            functions=[(REMEMBER, remember_job)],
            concurrency=self.concurrency,
            timers={"sweep": self.sweep_s, "abort": 1, "schedule": 1, "worker_info": 10},
            dequeue_timeout=self.dequeue_timeout_s,
            burst=self.burst,
            shutdown_grace_period_s=self.shutdown_grace_s,
            metadata={"concurrency": self.concurrency},
        )
        if not self.handle_signals:
            # In-process workers leave signals to the host (the MCP server).
            self.worker.SIGNALS = []
        self.worker.context["polyg"] = JobRuntime(
            memory=memory,
            heartbeat_s=float(self.queue.policy.heartbeat_s),
            running_here=self.queue.queue.running_here,
        )

    @property
    def worker_id(self) -> str:
        """This worker's id (shown as `worker_id` of the jobs it runs)."""
        return str(self.worker.id)

    async def run(self) -> None:
        """Process jobs until `stop()` (or a signal when `handle_signals`)."""
        logger.info(
            "job worker %s started (concurrency %d, queue %s)",
            self.worker_id,
            self.concurrency,
            self.queue.queue.name,
        )
        await self.worker.start()

    @property
    def busy(self) -> int:
        """Jobs this worker is running now."""
        return len(self.worker.job_task_contexts)

    async def stop(self) -> None:
        """Stop taking jobs; running ones get the grace period, then go back to the queue.

        An idle worker stops at once (its slots only wait for the next job).
        """
        await self.worker.stop()

    @asynccontextmanager
    async def running(self) -> AsyncGenerator[JobWorker]:
        """Run in the background of the current event loop while the block runs."""
        task = asyncio.create_task(self.run(), name=f"polyg-worker-{self.worker_id}")
        try:
            yield self
        finally:
            await self.stop()
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task
