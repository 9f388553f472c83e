"""The FalkorDB client polyg uses: the falkordb asyncio client on a bounded pool, no probe."""

from __future__ import annotations

import logging
from typing import Any

from falkordb.asyncio import FalkorDB
from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

logger = logging.getLogger(__name__)


def bounded_pool(
    *, max_connections: int, wait_s: float | None, url: str | None = None, **kwargs: Any
) -> BlockingConnectionPool:
    """A pool of at most `max_connections`; further callers wait up to `wait_s` for one.

    Connections do not retry on their own: polyg retries a failed call itself (with
    backoff, reconnecting, restarting the embedded server), and redis-py's retries
    underneath made an outage take ~15 s to report.
    """
    opts: dict[str, Any] = {
        "max_connections": max_connections,
        "timeout": wait_s,
        "decode_responses": True,
        "retry": Retry(NoBackoff(), 0),
        **kwargs,
    }
    if url is not None:
        if url.startswith("falkor://"):
            url = "redis://" + url[len("falkor://") :]
        elif url.startswith("falkors://"):
            url = "rediss://" + url[len("falkors://") :]
        return BlockingConnectionPool.from_url(url, **opts)
    return BlockingConnectionPool(**opts)


class FalkorClient(FalkorDB):
    """The falkordb asyncio client on a pool polyg built, without its cluster probe.

    The stock constructor probes the server with a synchronous INFO built from the
    pool's settings: it blocks the event loop, retries on its own when the server is
    down, and cannot use the pool's (async) retry policy. polyg knows the topology from
    its settings (FALKORDB_CLUSTER has its own client), so the probe is skipped.
    """

    def __init__(self, pool: BlockingConnectionPool) -> None:  # pyright: ignore[reportMissingSuperCall]
        conn = Redis(connection_pool=pool)
        self.connection = conn
        self.flushdb = conn.flushdb
        self.execute_command = conn.execute_command


async def close_dropped(db: FalkorDB | None, what: str) -> None:
    """Close a client that was dropped after an error; the connection is already broken,
    so closing is best effort (a failure is only logged, as "closing `what` failed")."""
    if db is None:
        return
    try:
        await db.connection.aclose()
    except Exception:
        logger.debug("closing %s failed", what, exc_info=True)
