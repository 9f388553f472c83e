"""Named graphs of the thinking tool: creation on first use, listing, deletion, idle expiry.

Each named scratch graph is its own FalkorDB graph key whose metadata node has
kind "scratch". Memory namespaces (kind "memory") can be listed and analysed
but are never expired.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import anyio
from polyg_shared.engine import DEFAULT_SCRATCH_GRAPH, ScratchGraphSummary
from polyg_shared.timeutil import from_epoch_ms, iso

from polyg_core.errors import InvalidInput
from polyg_core.providers.embeddings.base import Embedder, dimension_of
from polyg_core.storage.namespace import validate_namespace
from polyg_core.storage.schema import META
from polyg_core.storage.store import FalkorStore

logger = logging.getLogger(__name__)

GraphKindName = Literal["memory", "scratch"]

DEFAULT_TTL_S = 7200.0
"""Scratch graphs idle longer than this are removed (0 = never)."""

_PARALLEL = 8


def _iso_ms(value: object) -> str | None:
    return iso(from_epoch_ms(int(value))) if isinstance(value, int | float) else None


def _kind(value: object) -> GraphKindName:
    return "scratch" if value == "scratch" else "memory"


@dataclass
class GraphManager:
    """Creates, lists, deletes and expires named graphs.

    Args:
        store: the FalkorDB store.
        embedder: gives the model name and dimension recorded on new scratch graphs.
        ttl_s: idle time after which a scratch graph is removed (0 = never).
        check_interval_s: `use` runs the expiry at most this often.
    """

    store: FalkorStore
    embedder: Embedder | None = None
    ttl_s: float = DEFAULT_TTL_S
    check_interval_s: float = 60.0
    _last_check: float = field(default=float("-inf"), init=False, repr=False)

    @staticmethod
    def name(graph: str | None) -> str:
        """The graph a call works on: `graph`, or `default` when omitted.

        Raises:
            InvalidNamespace: not a valid graph name.
        """
        return validate_namespace(graph or DEFAULT_SCRATCH_GRAPH)

    async def use(self, graph: str | None) -> tuple[str, GraphKindName]:
        """Open a graph for a call: create it (as scratch) if new, record the use, expire idle ones.

        Returns:
            The graph name and its kind.
        """
        ns = self.name(graph)
        await self.store.ensure_schema(ns, kind="scratch")
        now = int(time.time() * 1000)
        res = await self.store.query(
            ns,
            f"MERGE (m:{META} {{key: 'meta'}}) "
            "ON CREATE SET m.kind = 'scratch', m.created_at = $now "
            "SET m.last_used_at = $now RETURN m.kind",
            {"now": now},
        )
        kind = _kind(res.scalar())
        if kind == "scratch" and self.embedder is not None:
            model, dim = self.embedder.model_name, await dimension_of(self.embedder)
            await self.store.ensure_vectors(ns, model, dim)
        # A short TTL is checked as often as it needs (half of it), a long one every minute.
        interval = min(self.check_interval_s, self.ttl_s / 2) if self.ttl_s > 0 else None
        if interval is not None and time.monotonic() - self._last_check >= interval:
            self._last_check = time.monotonic()
            await self.expire_idle()
        return ns, kind

    async def use_scratch(self, graph: str | None) -> str:
        """Like `use`, for calls that change nodes or edges: memory graphs are refused.

        Raises:
            InvalidInput: the graph is a memory graph.
        """
        ns, kind = await self.use(graph)
        if kind != "scratch":
            raise InvalidInput(
                f"graph {ns!r} is a memory graph; the thinking-tool node and edge tools only "
                "change scratch graphs. Use the memory tools (add_entity, link_entities, ...) "
                "for it, or pass another graph name to work in a scratch graph."
            )
        return ns

    async def kind(self, ns: str) -> GraphKindName | None:
        """The kind of an existing graph, or None when there is no such graph."""
        if ns not in await self.store.list_graphs():
            return None
        meta = await self.store.metadata(ns)
        return _kind(meta.get("kind"))

    async def summary(self, ns: str) -> ScratchGraphSummary:
        """Kind, node and edge counts, created and last-used times of one graph."""
        res = await self.store.query(
            ns,
            "CALL db.meta.stats() YIELD labels, nodeCount, relCount "
            f"OPTIONAL MATCH (m:{META} {{key: 'meta'}}) "
            "RETURN labels, nodeCount, relCount, m.kind, m.created_at, m.last_used_at",
            read_only=True,
        )
        if not res.rows:
            return ScratchGraphSummary(name=ns, kind="memory", node_count=0, edge_count=0)
        labels, nodes, rels, kind, created, used = res.rows[0]
        meta_nodes = (
            int(cast(dict[str, Any], labels).get(META, 0)) if isinstance(labels, dict) else 0
        )
        return ScratchGraphSummary(
            name=ns,
            kind=_kind(kind),
            node_count=int(nodes or 0) - meta_nodes,
            edge_count=int(rels or 0),
            created_at=_iso_ms(created),
            last_used_at=_iso_ms(used),
        )

    async def list_graphs(self) -> list[ScratchGraphSummary]:
        """Every graph on the server with kind, counts and times, by name."""
        names = await self.store.list_graphs()
        found: dict[str, ScratchGraphSummary] = {}
        limiter = anyio.CapacityLimiter(_PARALLEL)

        async def one(ns: str) -> None:
            async with limiter:
                try:
                    found[ns] = await self.summary(ns)
                except Exception:  # a graph deleted meanwhile is simply not listed
                    logger.debug("graph %s vanished while listing", ns, exc_info=True)

        async with anyio.create_task_group() as tg:
            for ns in names:
                tg.start_soon(one, ns)
        return [found[n] for n in names if n in found]

    async def delete_graph(self, graph: str | None) -> bool:
        """Delete a graph and everything in it; False when it did not exist."""
        return await self.store.delete_graph(self.name(graph))

    async def expire_idle(self, ttl_s: float | None = None, now: float | None = None) -> list[str]:
        """Remove scratch graphs idle longer than `ttl_s` seconds; memory graphs are never removed.

        Args:
            ttl_s: idle limit (default: the manager's `ttl_s`); 0 or less keeps everything.
            now: the current time in epoch seconds (default: the clock).

        Returns:
            The names of the removed graphs.
        """
        ttl = self.ttl_s if ttl_s is None else ttl_s
        if ttl <= 0:
            return []
        cutoff_ms = int(((time.time() if now is None else now) - ttl) * 1000)
        removed: list[str] = []
        for ns in await self.store.list_graphs():
            try:
                res = await self.store.query(
                    ns,
                    f"MATCH (m:{META} {{key: 'meta'}}) RETURN m.kind, m.last_used_at, m.created_at",
                    read_only=True,
                )
            except Exception:  # not a polyg graph, or gone meanwhile
                logger.debug("cannot read metadata of %s", ns, exc_info=True)
                continue
            if not res.rows:
                continue
            kind, used, created = res.rows[0]
            last = used if isinstance(used, int | float) else created
            idle = kind == "scratch" and isinstance(last, int | float) and last < cutoff_ms
            if idle and await self.store.delete_graph(ns):
                logger.info("removed scratch graph %s (idle longer than %.0f s)", ns, ttl)
                removed.append(ns)
        return removed
