"""FalkorDB memory figures for a graph: GRAPH.MEMORY USAGE and INFO memory."""

from __future__ import annotations

import logging
from typing import Any, cast

import redis.asyncio as aredis
import redis.exceptions as rexc

logger = logging.getLogger(__name__)


def _as_dict(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        items = list(cast(dict[Any, Any], value).items())
    elif isinstance(value, list):
        seq = cast(list[Any], value)
        items = list(zip(seq[::2], seq[1::2], strict=False))
    else:
        return {}
    out: dict[str, Any] = {}
    for k, v in items:
        key = k.decode() if isinstance(k, bytes) else str(k)
        out[key] = _as_dict(v) if isinstance(v, dict | list) else v
    return out


async def graph_memory_mb(client: aredis.Redis, namespace: str) -> float | None:
    """`total_graph_sz_mb` from GRAPH.MEMORY USAGE (whole MB), or None if unsupported."""
    try:
        raw = await client.execute_command("GRAPH.MEMORY", "USAGE", namespace)
    except rexc.ResponseError as exc:
        logger.info("GRAPH.MEMORY USAGE not supported: %s", exc)
        return None
    value = _as_dict(raw).get("total_graph_sz_mb")
    return float(value) if value is not None else None


async def used_memory(client: aredis.Redis) -> int:
    """The server's `used_memory` in bytes (INFO memory)."""
    info: dict[str, Any] = await client.info("memory")
    return int(info["used_memory"])
