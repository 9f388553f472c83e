"""The job queue: saq on the Redis server FalkorDB runs on, so jobs need nothing new.

Jobs live in Redis next to the graphs, so with the append-only file on they
survive restarts of polyg and of the server. Delivery is at least once: a job
whose worker dies is put back by the sweep of any live worker, and every job
is idempotent (remember keys its memory on the content hash, entities, events,
facts, causal nodes and concepts are merged), so running a job twice writes
nothing twice. The job id is derived from the graph and the content hash, so
queuing the same content while it is pending returns the pending job.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import anyio
from polyg_shared.jobs import (
    FINISHED_STATUSES,
    JOB_STATUSES,
    JobInfo,
    JobRef,
    JobStats,
    JobStatus,
)
from polyg_shared.timeutil import iso, parse_timestamp, utc_now
from polyg_shared.types import MAX_CONTENT, control_char_error
from redis.asyncio import Redis
from saq.job import Job, Status
from saq.queue.redis import RedisQueue

from polyg_core.errors import InvalidInput, StorageError
from polyg_core.graphs.semantic import content_hash
from polyg_core.jobs.info import SWEPT, job_status, to_info
from polyg_core.storage.namespace import validate_namespace
from polyg_core.storage.store import FalkorStore

logger = logging.getLogger(__name__)

QUEUE_NAME = "polyg"
QUEUE_SOCKET_TIMEOUT_S = 30.0
"""Socket timeout of the queue's Redis connections: above any worker's dequeue wait (a
blocking BLMOVE), so an idle worker's wait never times out into a reconnect."""
REMEMBER = "remember"
CANCELLED = "cancelled by request"


class JobNotFound(InvalidInput, LookupError):
    """No job has this id (it never existed or its record expired)."""


@dataclass(frozen=True)
class JobPolicy:
    """How jobs are retried, timed out and kept.

    Attributes:
        max_attempts: attempts before a job ends as failed.
        retry_delay_s: wait before the first retry; doubles per retry (with jitter).
        max_retry_delay_s: the longest wait between retries.
        timeout_s: the longest one attempt may run (rate-limit waits included).
        heartbeat_s: a running job whose worker has not reported for this long is
            taken back by another worker's sweep (a killed worker loses no job).
        keep_s: how long finished jobs stay visible to get_job / list_jobs.
    """

    max_attempts: int = 5
    retry_delay_s: float = 1.0
    max_retry_delay_s: float = 60.0
    timeout_s: int = 900
    heartbeat_s: int = 30
    keep_s: int = 7 * 24 * 3600

    def job(self, function: str, kwargs: dict[str, Any], key: str, meta: dict[str, Any]) -> Job:
        """A saq job of `function` run under this policy."""
        return Job(
            function=function, kwargs=kwargs, key=key, meta=meta,
            timeout=self.timeout_s, heartbeat=self.heartbeat_s, retries=self.max_attempts,
            ttl=self.keep_s, retry_delay=self.retry_delay_s, retry_backoff=self.max_retry_delay_s,
        )  # fmt: skip


async def open_redis(store: FalkorStore) -> Redis:
    """A Redis client on the server the store uses (the embedded one's unix socket by default).

    The queue has its own connections: workers block on the queue and must not
    hold the connections graph queries need. With read replicas
    (`FALKORDB_REPLICAS`) it is the primary (`FALKORDB_HOST`/`FALKORDB_URL`): the
    queue writes on every call, and a replica is read-only.

    Raises:
        StorageUnavailable: the server cannot be reached.
        StorageError: `FALKORDB_CLUSTER` is set. saq's keys carry no hash tag, so one
            queue's keys fall on several shards and its multi-key scripts would fail
            there (CROSSSLOT); a queue on one cluster node would get MOVED answers.
    """
    s = store.settings
    if s.cluster:
        raise StorageError(
            "the job queue needs one Redis server and FALKORDB_CLUSTER is set, so nothing "
            "can be queued: call remember with wait: true (it writes before it answers), "
            "or run polyg on one primary (FALKORDB_HOST, with FALKORDB_REPLICAS for reads)"
        )
    timeout = QUEUE_SOCKET_TIMEOUT_S
    if s.url:
        return Redis.from_url(s.url, socket_timeout=timeout)
    if s.host:
        password = s.password.get_secret_value() if s.password else None
        return Redis(host=s.host, port=s.port, password=password, socket_timeout=timeout)
    if store.embedded is None:
        await store.connect()
    assert store.embedded is not None
    embedded = store.embedded
    sock = await anyio.to_thread.run_sync(embedded.running_socket)
    return Redis(unix_socket_path=sock or embedded.socket_path, socket_timeout=timeout)


class PolygRedisQueue(RedisQueue):
    """saq's Redis queue with a sweep that takes back only jobs whose worker is gone.

    saq's own sweep treats every job in the active list that is not marked active as
    orphaned, from a snapshot; a job a worker has just dequeued (and not yet marked)
    is then run twice, and each such job holds the sweep for seconds. Here a running
    job is taken back when its heartbeat has lapsed (or it ran past its timeout), and
    a dequeued-but-unmarked job only when it is still unmarked one sweep later.
    """

    def __init__(self, redis: Redis, name: str = QUEUE_NAME) -> None:
        super().__init__(redis, name=name, swept_error_message=SWEPT)
        self._suspects: set[str] = set()
        self.running_here: set[str] = set()
        """Keys of jobs running in this process: never swept from here, even when a
        blocked event loop delayed their heartbeat."""

    async def sweep(self, lock: int = 60, abort: float = 5.0) -> list[str]:
        """Put jobs of dead workers back in the queue (or fail them when out of attempts)."""
        del abort  # nothing is aborted: the worker of a swept job is gone
        if not await self.redis.set(self.namespace("sweep"), b"1", ex=max(lock, 1), nx=True):
            return []
        active = self.namespace("active")
        swept: list[str] = []
        suspects: set[str] = set()
        for raw in await self.redis.lrange(active, 0, -1):
            job_id = raw.decode() if isinstance(raw, bytes) else str(raw)
            job = await self._get_job_by_id(job_id)
            if job is None:
                await self.redis.lrem(active, 0, job_id)
                await self.redis.zrem(self.namespace("incomplete"), job_id)
                swept.append(job_id)
                continue
            if job.status in (Status.QUEUED, Status.NEW) and job_id not in self._suspects:
                suspects.add(job_id)  # maybe just dequeued: look again next sweep
                continue
            if job.key in self.running_here or (job.status == Status.ACTIVE and not job.stuck):
                continue
            if job.status not in (Status.QUEUED, Status.NEW, Status.ACTIVE):
                continue
            logger.warning("taking back job %s: its worker stopped responding", job.key)
            swept.append(job_id)
            if job.retryable:
                await self.retry(job, error=SWEPT)
            else:
                await self.finish(job, Status.FAILED, error=SWEPT)
        self._suspects = suspects
        return swept


def remember_job_id(graph: str, digest: str) -> str:
    """The id of the remember job of some content in a graph (stable: the idempotency key)."""
    return f"{REMEMBER}:{graph}:{digest[:32]}"


@dataclass
class JobQueue:
    """Enqueue, inspect, cancel and retry polyg's background jobs.

    Args:
        queue: the saq queue (see `JobQueue.open`).
        policy: retries, timeouts, heartbeat and retention of new jobs.
    """

    queue: PolygRedisQueue
    policy: JobPolicy = field(default_factory=JobPolicy)

    @classmethod
    async def open(
        cls, store: FalkorStore, *, name: str = QUEUE_NAME, policy: JobPolicy | None = None
    ) -> JobQueue:
        """The queue on the store's server.

        Raises:
            StorageUnavailable: the server cannot be reached.
        """
        queue = PolygRedisQueue(await open_redis(store), name=name)
        await queue.connect()
        return cls(queue, policy or JobPolicy())

    @property
    def redis(self) -> Redis:
        """The queue's Redis client (shared with the rate limiter)."""
        return self.queue.redis

    async def close(self) -> None:
        """Close the queue's connections."""
        await self.queue.disconnect()

    # -- enqueue ------------------------------------------------------------------------------

    async def enqueue_remember(
        self,
        content: str,
        *,
        graph: str,
        reference_time: datetime | str | None = None,
        category: str | None = None,
        tags: Sequence[str] = (),
        source_id: str | None = None,
    ) -> JobRef:
        """Queue a `Memory.remember` call; answers at once with the job.

        The reference time is fixed now (relative phrases in the text mean the same
        thing on every attempt). The same content queued again for the same graph
        while its job is pending returns that job (`deduplicated: true`).

        Raises:
            InvalidInput: empty or too long content, bad graph name or time, or a control
                character (NUL...) in a field.
            StorageUnavailable: the server cannot be reached.
        """
        validate_namespace(graph)
        # A value the write would refuse must be refused now, not after "queued".
        bad = control_char_error(
            {"content": content, "category": category, "tags": list(tags), "source_id": source_id}
        )
        if bad is not None:
            where = ".".join(str(p) for p in bad[0])
            raise InvalidInput(f"nothing queued: {where} {bad[2]}")
        if not content or not content.strip():
            raise InvalidInput("nothing to remember: the content is empty")
        if len(content) > MAX_CONTENT:
            raise InvalidInput(
                f"the content has {len(content)} characters; the limit is {MAX_CONTENT}: "
                "split it into several remember calls"
            )
        try:
            ref = parse_timestamp(reference_time) if reference_time is not None else utc_now()
        except ValueError as exc:
            raise InvalidInput(
                f"reference_time {reference_time!r} is not a time: use ISO 8601 "
                "such as 2026-01-14T12:00:00Z"
            ) from exc
        digest = content_hash(content)
        job = self.policy.job(
            REMEMBER,
            {
                "graph": graph,
                "content": content,
                "content_hash": digest,
                "reference_time": iso(ref),
                "category": category,
                "tags": list(tags),
                "source_id": source_id,
            },
            remember_job_id(graph, digest),
            {"kind": REMEMBER},
        )
        queued = await self.queue.enqueue(job)
        if queued is not None:
            return JobRef(
                job_id=job.key, kind=REMEMBER, graph=graph, status="queued", content_hash=digest
            )
        existing = await self.queue.job(job.key)
        status: JobStatus = job_status(existing) if existing is not None else "queued"
        return JobRef(
            job_id=job.key,
            kind=REMEMBER,
            graph=graph,
            status=status,
            content_hash=digest,
            deduplicated=True,
        )

    # -- inspect ------------------------------------------------------------------------------

    async def _job(self, job_id: str) -> Job:
        job = await self.queue.job(job_id)
        if job is None:
            raise JobNotFound(
                f"there is no job {job_id!r}: it never existed or finished more than "
                f"{self.policy.keep_s // 3600} hours ago; list_jobs shows the jobs kept"
            )
        return job

    async def _retry_at(self, job: Job) -> float | None:
        if job.status != Status.QUEUED:
            return None
        score = await self.redis.zscore(self.queue.namespace("incomplete"), job.id)
        return float(score) if score else None

    async def get(self, job_id: str) -> JobInfo:
        """One job with its result or error.

        Raises:
            JobNotFound: no job has this id.
        """
        job = await self._job(job_id)
        return to_info(job, retry_at=await self._retry_at(job))

    async def _all(self) -> list[Job]:
        return [job async for job in self.queue.iter_jobs()]

    async def list_jobs(
        self,
        *,
        graph: str | None = None,
        statuses: Sequence[JobStatus] = (),
        limit: int = 50,
        include_results: bool = False,
    ) -> tuple[list[JobInfo], bool]:
        """Jobs (newest first) filtered by graph and status; and whether more matched.

        Raises:
            InvalidInput: an unknown status or a bad graph name.
        """
        if graph is not None:
            validate_namespace(graph)
        unknown = sorted(set(statuses) - set(JOB_STATUSES))
        if unknown:
            raise InvalidInput(
                f"unknown job status(es) {', '.join(unknown)}: use {', '.join(JOB_STATUSES)}"
            )
        wanted = set(statuses) or set(JOB_STATUSES)
        matched = [
            job
            for job in await self._all()
            if job_status(job) in wanted
            and (graph is None or (job.kwargs or {}).get("graph") == graph)
        ]
        matched.sort(key=lambda j: j.queued, reverse=True)
        out = [
            to_info(j, include_result=include_results, retry_at=await self._retry_at(j))
            for j in matched[:limit]
        ]
        return out, len(matched) > limit

    async def stats(self, graph: str | None = None) -> JobStats:
        """Counts per status of the jobs kept (of one graph, or all), and live workers."""
        counts: dict[str, int] = dict.fromkeys(JOB_STATUSES, 0)
        for job in await self._all():
            if graph is None or (job.kwargs or {}).get("graph") == graph:
                counts[job_status(job)] += 1
        info = await self.queue.info()
        return JobStats(**counts, total=sum(counts.values()), workers=len(info["workers"]))

    async def wait(self, job_ids: Sequence[str], *, poll_s: float = 0.2) -> list[JobInfo]:
        """Wait until every job has finished (bound it with `anyio.fail_after`).

        Raises:
            JobNotFound: a job does not exist.
        """
        while True:
            jobs = await self.queue.jobs(job_ids)
            for job_id, job in zip(job_ids, jobs, strict=True):
                if job is None:
                    raise JobNotFound(f"there is no job {job_id!r}; list_jobs shows the jobs kept")
            if all(job is not None and job_status(job) in FINISHED_STATUSES for job in jobs):
                return [to_info(job) for job in jobs if job is not None]
            await anyio.sleep(poll_s)

    # -- control ------------------------------------------------------------------------------

    async def cancel(self, job_id: str, *, settle_s: float = 3.0) -> JobInfo:
        """Cancel a queued or running job (a running one stops within about a second).

        Raises:
            JobNotFound: no job has this id.
            InvalidInput: the job has already finished.
        """
        job = await self._job(job_id)
        status = job_status(job)
        if status in FINISHED_STATUSES:
            raise InvalidInput(
                f"job {job_id!r} has already finished ({status}); nothing to cancel. "
                "retry_job runs a failed or cancelled job again"
            )
        await self.queue.abort(job, CANCELLED)
        with anyio.move_on_after(settle_s):
            # The job's state is in Redis, changed by another worker: polling is the way.
            while job_status(job := await self._job(job_id)) not in FINISHED_STATUSES:  # noqa: ASYNC110
                await anyio.sleep(0.1)
        return to_info(job)

    async def retry(self, job_id: str) -> JobInfo:
        """Run a failed or cancelled job again, with a fresh set of attempts.

        Raises:
            JobNotFound: no job has this id.
            InvalidInput: the job is pending or done.
        """
        old = await self._job(job_id)
        status = job_status(old)
        if status not in ("failed", "cancelled"):
            raise InvalidInput(
                f"job {job_id!r} is {status}: only failed or cancelled jobs can be retried"
                + ("; it is still pending" if status in ("queued", "running") else "")
            )
        job = self.policy.job(
            old.function,
            dict(old.kwargs or {}),
            old.key,
            {"kind": old.meta.get("kind", old.function), "retried_from": status},
        )
        await self.redis.delete(old.abort_id)  # a recent cancel blocks re-enqueueing the key
        if await self.queue.enqueue(job) is None:
            logger.info("job %s was queued again by someone else meanwhile", job_id)
        return await self.get(job_id)

    async def raw(self, job_id: str) -> dict[str, Any]:
        """The stored saq record of a job (for debugging and tests)."""
        return (await self._job(job_id)).to_dict()
