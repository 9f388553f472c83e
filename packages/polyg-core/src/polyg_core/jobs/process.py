"""A worker process: open the memory and the queue from settings, run jobs until stopped."""

from __future__ import annotations

import logging

from polyg_core.config import Settings
from polyg_core.jobs.queue import QUEUE_NAME, JobPolicy, JobQueue
from polyg_core.jobs.worker import JobWorker
from polyg_core.memory import Memory

logger = logging.getLogger(__name__)


async def run_worker_process(
    settings: Settings,
    *,
    concurrency: int = 4,
    sweep_s: int = 10,
    burst: bool = False,
    queue_name: str = QUEUE_NAME,
    policy: JobPolicy | None = None,
) -> None:
    """Run a worker until SIGTERM/SIGINT (or, with `burst`, until the queue is empty).

    Jobs of any graph are run; the memory's default graph is only a fallback.

    Raises:
        StorageUnavailable: FalkorDB cannot be reached.
        EmbeddedServerError: the embedded server cannot start.
    """
    memory = await Memory.open(settings)
    try:
        queue = await JobQueue.open(memory.store, name=queue_name, policy=policy)
        try:
            worker = JobWorker(
                queue,
                memory,
                concurrency=concurrency,
                sweep_s=sweep_s,
                handle_signals=True,
                burst=burst,
            )
            await worker.run()
        finally:
            await queue.close()
    finally:
        await memory.close()
