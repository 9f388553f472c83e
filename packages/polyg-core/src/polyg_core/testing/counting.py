"""A store that keeps the queries it sends, for tests and benchmarks that count them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from polyg_core.storage.store import FalkorStore, QueryResult


@dataclass
class CountingStore(FalkorStore):
    """The real store, keeping the Cypher of every query it sends (`queries`)."""

    queries: list[str] = field(default_factory=list[str], init=False)

    async def query(
        self,
        namespace: str,
        cypher: str,
        params: Mapping[str, Any] | None = None,
        *,
        read_only: bool = False,
        timeout_ms: int | None = None,
    ) -> QueryResult:
        self.queries.append(cypher)
        return await super().query(
            namespace, cypher, params, read_only=read_only, timeout_ms=timeout_ms
        )
