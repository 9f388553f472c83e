"""causal_probability over the stored causal graph (incident-response scenario)."""

from __future__ import annotations

import anyio
import pytest
from polyg_core.errors import NodeNotFound
from polyg_core.memory import Memory
from polyg_core.recall.probability import causal_probability
from polyg_core.storage.store import FalkorStore

pytestmark = pytest.mark.anyio


async def test_one_chain_is_the_product_and_parallel_chains_combine(memory: Memory) -> None:
    ns = memory.namespace
    c = memory.causal
    with anyio.fail_after(60):
        await c.add_link(ns, "cache flush", "cold cache", 0.9)
        await c.add_link(ns, "cold cache", "database overload", 0.8)
        await c.add_link(ns, "cache flush", "retry storm", 0.5)
        await c.add_link(ns, "retry storm", "database overload", 0.6)
        await c.add_link(ns, "database overload", "cache flush", 0.4)  # a cycle back
        chain = await memory.causal_probability("cache flush", "cold cache")
        both = await memory.causal_probability("cache flush", "database overload")
    assert chain.estimate.probability == pytest.approx(0.9)
    assert both.estimate.probability == pytest.approx(1 - (1 - 0.72) * (1 - 0.3))
    assert both.estimate.method == "exact" and both.estimate.relevant_links == 4
    assert "noisy-OR over independent links" in both.explanation
    assert both.paths[0] == (
        ["cache flush", "cold cache", "database overload"],
        pytest.approx(0.72),
    )


async def test_unknown_cause_is_not_found(memory: Memory) -> None:
    ns = memory.namespace
    await memory.causal.add_link(ns, "cache flush", "cold cache", 0.9)
    with pytest.raises(NodeNotFound):
        await causal_probability(memory.store, ns, "no-such-uuid", "other")


async def _stored(store: FalkorStore, ns: str, links: list[tuple[str, str, float]]) -> None:
    await store.ensure_schema(ns)
    names = sorted({n for u, v, _ in links for n in (u, v)})
    await store.query(
        ns,
        "UNWIND $names AS n CREATE (:C_Node {uuid: n, description: 'event ' + n})",
        {"names": names},
    )
    await store.query(
        ns,
        "UNWIND $links AS l MATCH (a:C_Node {uuid: l[0]}), (b:C_Node {uuid: l[1]}) "
        "CREATE (a)-[:C_CAUSES {confidence: l[2]}]->(b)",
        {"links": [list(link) for link in links]},
    )


async def test_a_chain_longer_than_eight_hops_is_exact_over_the_stored_graph(
    store: FalkorStore, namespace: str
) -> None:
    # 40 hops, plus a shortcut from the 3rd node to the 30th: a search that stopped
    # after 8 hops missed most of it and still said "exact".
    links = [(f"n{i}", f"n{i + 1}", 0.97) for i in range(40)] + [("n3", "n30", 0.5)]
    await _stored(store, namespace, links)
    with anyio.fail_after(60):
        got = await causal_probability(store, namespace, "n0", "n40")
    head, middle, tail = 0.97**3, 0.97**27, 0.97**10
    expected = head * (1 - (1 - middle) * (1 - 0.5)) * tail
    assert not got.truncated and got.exact
    assert got.estimate.method == "exact" and got.estimate.relevant_links == 41
    assert got.estimate.probability == pytest.approx(expected, rel=1e-9)


async def test_a_search_cut_by_its_cap_is_not_called_exact(
    store: FalkorStore, namespace: str
) -> None:
    links = [(f"n{i}", f"n{i + 1}", 0.9) for i in range(30)]
    await _stored(store, namespace, links)
    with anyio.fail_after(60):
        got = await causal_probability(store, namespace, "n0", "n30", max_edges=10)
    assert got.truncated and not got.exact
    assert "lower bound" in got.explanation
