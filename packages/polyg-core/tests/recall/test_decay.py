"""Time decay: weights, retention tiers, the access refresh, and recall with and without decay."""

from __future__ import annotations

import math
from datetime import timedelta

import anyio
import pytest
from polyg_core.errors import InvalidInput
from polyg_core.memory import Memory
from polyg_core.recall.decay import DAY_MS, DecayPolicy, memory_meta, refresh_access
from polyg_shared.timeutil import parse_timestamp, to_epoch_ms

pytestmark = pytest.mark.anyio

NOW = parse_timestamp("2026-03-01T12:00:00Z")


def test_weight_is_exp_minus_days_over_thirty() -> None:
    policy = DecayPolicy()
    now = to_epoch_ms(NOW)
    assert policy.weight(now, now) == 1.0
    assert policy.weight(now - 30 * DAY_MS, now) == pytest.approx(math.exp(-1))
    assert policy.weight(now - 60 * DAY_MS, now) == pytest.approx(math.exp(-2))
    assert policy.weight(None, now) == 1.0


def test_half_life_is_configurable() -> None:
    policy = DecayPolicy.from_half_life(7)
    now = to_epoch_ms(NOW)
    assert policy.weight(now - 7 * DAY_MS, now) == pytest.approx(0.5)
    assert policy.half_life_days == pytest.approx(7)
    with pytest.raises(InvalidInput, match="half-life must be positive"):
        DecayPolicy.from_half_life(0)


@pytest.mark.parametrize(
    ("hours", "tier"), [(1, "short"), (23, "short"), (30, "mid"), (24 * 8, "long")]
)
def test_retention_tier_by_age(hours: int, tier: str) -> None:
    now = to_epoch_ms(NOW)
    assert DecayPolicy().tier(now - hours * 3_600_000, now) == tier


async def test_recall_refreshes_last_access_without_moving_it_back(memory: Memory) -> None:
    ns = memory.namespace
    with anyio.fail_after(30):
        mem, _ = await memory.semantic.add_memory(
            ns,
            "The nightly backup job writes to the archive bucket.",
            created_at=NOW - timedelta(days=40),
        )
        before = (await memory_meta(memory.store, ns, [mem.uuid]))[mem.uuid]
        assert before.last_ms == to_epoch_ms(NOW - timedelta(days=40))
        await refresh_access(memory.store, ns, [mem.uuid], NOW)
        await refresh_access(memory.store, ns, [mem.uuid], NOW - timedelta(days=3))
        after = (await memory_meta(memory.store, ns, [mem.uuid]))[mem.uuid]
    assert after.last_ms == to_epoch_ms(NOW)
    assert after.created_ms == before.created_ms


async def test_age_breaks_ties_but_never_vetoes_a_match(memory: Memory) -> None:
    ns = memory.namespace
    with anyio.fail_after(60):
        old, _ = await memory.semantic.add_memory(
            ns,
            "Rotate the vault token before the quarterly audit.",
            "procedural",
            created_at=NOW - timedelta(days=90),
        )
        new, _ = await memory.semantic.add_memory(
            ns,
            "Rotate the vault token before the yearly audit.",
            "procedural",
            created_at=NOW - timedelta(hours=2),
        )
        unrelated, _ = await memory.semantic.add_memory(
            ns, "The cafeteria serves soup on Fridays.", created_at=NOW - timedelta(minutes=5)
        )
        question = "When should the vault token be rotated before the quarterly audit?"
        decayed = await memory.recall(question, reference_time=NOW, mode="planning")
        flat = await memory.recall(question, reference_time=NOW, mode="planning", decay=False)
    by_uuid = {n.uuid: n for n in decayed.nodes}
    assert by_uuid[old.uuid].attributes["decay"] == pytest.approx(math.exp(-3), abs=1e-3)
    assert by_uuid[old.uuid].attributes["retention_tier"] == "long"
    assert by_uuid[new.uuid].attributes["retention_tier"] == "short"
    # The 90-day-old memory matches best ("quarterly") and stays first despite its age;
    # the fresh unrelated one stays below both matches.
    order = [m.uuid for m in decayed.memories]
    assert order[0] == old.uuid
    assert new.uuid in order
    if unrelated.uuid in order:
        assert order.index(new.uuid) < order.index(unrelated.uuid)
    assert [m.uuid for m in flat.memories][:2] == order[:2]
    assert decayed.ranking is not None and decayed.ranking.decay is True


async def test_recall_reads_only_and_mark_accessed_records_use(memory: Memory) -> None:
    ns = memory.namespace
    with anyio.fail_after(60):
        mem, _ = await memory.semantic.add_memory(
            ns, "The archive bucket keeps backups for a year.", created_at=NOW - timedelta(days=10)
        )
        result = await memory.recall("How long are backups kept?", reference_time=NOW)
        assert [m.uuid for m in result.memories] == [mem.uuid]
        meta = await memory_meta(memory.store, ns, [mem.uuid])
        assert meta[mem.uuid].last_ms == to_epoch_ms(NOW - timedelta(days=10))
        marked = await memory.mark_accessed([m.uuid for m in result.memories], at=NOW)
        meta = await memory_meta(memory.store, ns, [mem.uuid])
    assert marked == 1
    assert meta[mem.uuid].last_ms == to_epoch_ms(NOW)
