"""Time decay of memories: retrieval weight, retention tier, and the access refresh.

A memory (`S_Memory`) carries `created_at` and `last_accessed` (epoch ms). Its
retrieval weight is `exp(-days / tau)` where `days` is the time since it was last
accessed (or created) and `tau` = 30 days by default (`DecayPolicy.tau_days`; a
half-life `h` gives `tau = h / ln 2`). Recall multiplies a memory's score by this
weight and writes nothing; `Memory.mark_accessed` marks memories as used (the MCP
server calls it after each `recall` answer, batched per namespace).

The refresh is not written on the `S_Memory` node itself: FalkorDB keeps a stale
HNSW entry each time a vector-indexed node is written (FalkorDB/FalkorDB#2197),
so a property update per recall would slowly crowd the k-NN results. The access
time lives in a small `P_Meta {key: "access:<uuid>"}` record instead (range
indexed on `key`); the effective last access is the later of the two.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, cast

from polyg_shared.timeutil import to_epoch_ms

from polyg_core.errors import InvalidInput
from polyg_core.storage.schema import MEMORY, META

if TYPE_CHECKING:
    from polyg_core.storage.store import FalkorStore

logger = logging.getLogger(__name__)

DAY_MS = 86_400_000
DEFAULT_TAU_DAYS = 30.0
ACCESS_PREFIX = "access:"

RetentionTier = Literal["short", "mid", "long"]


@dataclass(frozen=True)
class DecayPolicy:
    """How fast memories fade: weight `exp(-days / tau_days)`.

    Attributes:
        tau_days: the time constant (30 days: weight 0.37 after a month).
        short_days: below this age a memory is "short" term (1 day).
        mid_days: below this age it is "mid" term (7 days); above, "long".
    """

    tau_days: float = DEFAULT_TAU_DAYS
    short_days: float = 1.0
    mid_days: float = 7.0

    def __post_init__(self) -> None:
        if not self.tau_days > 0:
            raise InvalidInput(f"the decay time constant must be positive, got {self.tau_days}")

    @classmethod
    def from_half_life(cls, half_life_days: float) -> DecayPolicy:
        """The policy whose weight halves every `half_life_days` days.

        Raises:
            InvalidInput: a half-life that is not positive.
        """
        if not half_life_days > 0:
            raise InvalidInput(f"the half-life must be positive, got {half_life_days} days")
        return cls(tau_days=half_life_days / math.log(2))

    @property
    def half_life_days(self) -> float:
        """Days after which the weight is 0.5."""
        return self.tau_days * math.log(2)

    def weight(self, last_ms: int | None, now_ms: int) -> float:
        """`exp(-days / tau)` for a memory last touched at `last_ms` (1.0 when unknown)."""
        if last_ms is None:
            return 1.0
        days = max(0.0, (now_ms - last_ms) / DAY_MS)
        return math.exp(-days / self.tau_days)

    def tier(self, created_ms: int | None, now_ms: int) -> RetentionTier:
        """Retention tier by age since creation: short (< 1 day), mid (< 7 days) or long."""
        if created_ms is None:
            return "long"
        days = max(0.0, (now_ms - created_ms) / DAY_MS)
        if days < self.short_days:
            return "short"
        if days < self.mid_days:
            return "mid"
        return "long"


def _ms(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return int(value)
    return None


@dataclass(frozen=True)
class MemoryMeta:
    """What decay and the recall filters need of one memory."""

    created_ms: int | None
    last_ms: int | None
    category: str | None
    tags: tuple[str, ...]


async def memory_meta(
    store: FalkorStore, namespace: str, uuids: Sequence[str]
) -> dict[str, MemoryMeta]:
    """Creation time, effective last access, category and tags of memories, in one query."""
    if not uuids:
        return {}
    res = await store.query(
        namespace,
        f"MATCH (m:{MEMORY}) WHERE m.uuid IN $ids "
        f"OPTIONAL MATCH (a:{META} {{key: $prefix + m.uuid}}) "
        "RETURN m.uuid, m.created_at, m.last_accessed, a.last_accessed, m.category, m.tags",
        {"ids": list(uuids), "prefix": ACCESS_PREFIX},
        read_only=True,
    )
    out: dict[str, MemoryMeta] = {}
    for uuid, created, on_node, recorded, category, tags in res.rows:
        created_ms = _ms(created)
        times = [t for t in (_ms(on_node), _ms(recorded), created_ms) if t is not None]
        tag_list = tuple(str(t) for t in cast(list[Any], tags)) if isinstance(tags, list) else ()
        out[str(uuid)] = MemoryMeta(
            created_ms,
            max(times) if times else None,
            str(category) if category is not None else None,
            tag_list,
        )
    return out


async def refresh_access(
    store: FalkorStore, namespace: str, uuids: Sequence[str], now: datetime
) -> int:
    """Mark memories as accessed at `now` (never moves an access time back).

    Returns:
        How many memories were refreshed.
    """
    if not uuids:
        return 0
    now_ms = to_epoch_ms(now)
    res = await store.query(
        namespace,
        f"UNWIND $ids AS id MATCH (m:{MEMORY} {{uuid: id}}) "
        f"MERGE (a:{META} {{key: $prefix + id}}) "
        "ON CREATE SET a.memory_uuid = id, a.last_accessed = $now "
        "ON MATCH SET a.last_accessed = CASE WHEN a.last_accessed < $now "
        "THEN $now ELSE a.last_accessed END "
        "RETURN count(a)",
        {"ids": list(dict.fromkeys(uuids)), "prefix": ACCESS_PREFIX, "now": now_ms},
    )
    return int(res.scalar() or 0)
