"""Round-trip helpers: a namespace's database state read with Cypher, compared whole.

A round trip (export, then import into an empty namespace) is checked on the
database state: the count of every label and relationship type, and every node's
and edge's properties (uuids and times included; embeddings aside, an import
recomputes them). Never one export compared with another.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from polyg_core.storage.store import FalkorStore
from polyg_core.testing.hashing import HashEmbedder

__all__ = ["HashEmbedder", "State", "assert_same", "read_state"]


class State:
    """What a namespace holds, read back with Cypher (the bookkeeping `P_Meta` node aside)."""

    def __init__(self, labels: Counter[str], types: Counter[str], nodes: Any, edges: Any) -> None:
        self.labels = labels
        self.types = types
        self.nodes: dict[str, tuple[str, dict[str, Any]]] = nodes
        self.edges: Counter[str] = edges


async def _paged(store: FalkorStore, ns: str, match: str, var: str, ret: str) -> list[Any]:
    """Rows of `match RETURN ret`, 5,000 ids of `var` per query (big namespaces)."""
    top = await store.query(ns, f"{match} RETURN max(id({var}))", read_only=True)
    last = top.rows[0][0] if top.rows else None
    rows: list[Any] = []
    for low in range(0, -1 if last is None else int(last) + 1, 5000):
        res = await store.query(
            ns,
            f"{match} WHERE id({var}) >= $lo AND id({var}) < $hi RETURN {ret}",
            {"lo": low, "hi": low + 5000},
            read_only=True,
        )
        rows += res.rows
    return rows


async def read_state(store: FalkorStore, ns: str) -> State:
    """What `ns` holds: counts per label and relationship type, node and edge properties."""
    labels = await store.query(
        ns, "MATCH (n) WHERE NOT n:P_Meta RETURN labels(n)[0], count(n)", read_only=True
    )
    types = await store.query(ns, "MATCH ()-[r]->() RETURN type(r), count(r)", read_only=True)
    nodes = await _paged(store, ns, "MATCH (n)", "n", "labels(n)[0], n {.*, embedding: null}")
    edges = await _paged(
        store, ns, "MATCH (a)-[r]->(b)", "r", "type(r), a.uuid, b.uuid, properties(r)"
    )
    node_map: dict[str, tuple[str, dict[str, Any]]] = {}
    for label, props in nodes:
        if label == "P_Meta":
            continue
        clean = {k: v for k, v in dict(props).items() if k != "embedding"}
        node_map[str(clean["uuid"])] = (str(label), clean)
    edge_keys = Counter(
        json.dumps([t, a, b, dict(p or {})], sort_keys=True) for t, a, b, p in edges
    )
    return State(
        Counter({str(k): int(v) for k, v in labels.rows}),
        Counter({str(k): int(v) for k, v in types.rows}),
        node_map,
        edge_keys,
    )


def assert_same(source: State, target: State, name: str) -> None:
    """Check that `target` (the copy called `name`) holds exactly what `source` holds.

    Raises:
        AssertionError: naming the first differences.
    """
    problems: list[str] = []
    if target.labels != source.labels:
        problems.append(f"labels {dict(source.labels)} became {dict(target.labels)}")
    if target.types != source.types:
        problems.append(f"relationship types {dict(source.types)} became {dict(target.types)}")
    missing = sorted(source.nodes.keys() - target.nodes.keys())[:3]
    extra = sorted(target.nodes.keys() - source.nodes.keys())[:3]
    if missing or extra:
        problems.append(f"nodes missing {missing}, nodes added {extra}")
    diffs = [
        (uuid, source.nodes[uuid], target.nodes[uuid])
        for uuid in source.nodes.keys() & target.nodes.keys()
        if source.nodes[uuid] != target.nodes[uuid]
    ]
    if diffs:
        problems.append(f"node properties differ: {diffs[:3]}")
    if target.edges != source.edges:
        lost = list((source.edges - target.edges).items())[:3]
        gained = list((target.edges - source.edges).items())[:3]
        problems.append(f"edges lost {lost}, edges gained {gained}")
    if problems:
        raise AssertionError(f"{name}: " + "; ".join(problems))
