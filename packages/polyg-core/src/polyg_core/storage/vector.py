"""k-nearest-neighbour search through FalkorDB's HNSW vector indexes (never a scan)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from polyg_core.storage.cypher import NodeHit, clean, props
from polyg_core.storage.schema import EMBEDDED_LABELS

K = TypeVar("K", bound=Hashable)

if TYPE_CHECKING:
    from polyg_core.storage.store import FalkorStore

MAX_FETCH = 1000


@dataclass(frozen=True)
class Neighbour(NodeHit):
    """A node found by vector search; `similarity` is 1 - cosine distance, clipped to [0, 1]."""

    similarity: float


async def knn(
    store: FalkorStore,
    namespace: str,
    label: str,
    vector: Sequence[float],
    k: int,
    *,
    min_similarity: float = 0.0,
    fields: Sequence[str] = (),
) -> list[Neighbour]:
    """The `k` nodes of `label` closest to `vector`, best first, at or above `min_similarity`.

    `fields`: the properties to read (with `uuid`); default all. Every value read is
    parsed in Python: a caller that ranks by uuid alone reads only that.

    FalkorDB's HNSW index keeps a stale entry for a node each time the node is
    written (FalkorDB/FalkorDB#2197); stale entries take result slots without being
    returned, so the index is asked for 2k+16 and the best `k` live nodes are kept
    (once more for 8 times that when the index answered short of `k`).
    Returns an empty list when the namespace has no vector index yet.
    """
    values = [float(x) for x in vector]
    return await _search(
        store, namespace, label, k, min_similarity, "", "vecf32($v)", {"v": values}, fields
    )


async def knn_of_node(
    store: FalkorStore,
    namespace: str,
    label: str,
    uuid: str,
    k: int,
    *,
    min_similarity: float = 0.0,
    fields: Sequence[str] = (),
) -> list[Neighbour]:
    """Like `knn`, searching with the stored vector of the `label` node `uuid`.

    Nothing is embedded and no vector travels in the query. The node itself is among
    the answers (at similarity 1). Empty when the node is missing or has no vector.
    `fields`: the properties to read (with `uuid`); default all.
    """
    return await _search(
        store,
        namespace,
        label,
        k,
        min_similarity,
        f"MATCH (source:{label} {{uuid: $u}}) WHERE source.embedding IS NOT NULL ",
        "source.embedding",
        {"u": uuid},
        fields,
    )


async def knn_of_nodes(
    store: FalkorStore,
    namespace: str,
    label: str,
    uuids: Sequence[str],
    k: int,
    *,
    fields: Sequence[str] = (),
) -> dict[str, list[Neighbour]]:
    """`knn_of_node` for many nodes in one query: node uuid to its `k` nearest live nodes,
    best first (each node among its own answers). Nodes missing or without a vector are
    left out; the index is asked for 2k+16 each, as `knn` does first."""
    if label not in EMBEDDED_LABELS:
        raise ValueError(f"label {label!r} has no vector index")
    wanted = list(dict.fromkeys(uuids))
    if k <= 0 or not wanted:
        return {}
    cypher = (
        f"UNWIND $us AS u MATCH (source:{label} {{uuid: u}}) WHERE source.embedding IS NOT NULL "
        f"CALL db.idx.vector.queryNodes('{label}', 'embedding', $k, source.embedding) "
        f"YIELD node, score RETURN u, {_returned(fields)}, score"
    )
    try:
        res = await store.query(
            namespace, cypher, {"us": wanted, "k": min(2 * k + 16, MAX_FETCH)}, read_only=True
        )
    except Exception as exc:  # no index yet for this label: nothing to find
        if "index" in str(exc).lower():
            return {}
        raise
    return _nearest_per_query(res.rows, str, label, k)


def _returned(fields: Sequence[str]) -> str:
    """The Cypher map a search returns for `node`: `fields` (with `uuid`), default all."""
    for name in fields:
        if not name.isidentifier():
            raise ValueError(f"not a property name: {name!r}")
    # Each returned property is parsed in Python: a caller that needs two reads two.
    if not fields:
        return props("node")
    return "node {" + ", ".join(f".{f}" for f in dict.fromkeys(("uuid", *fields))) + "}"


async def _search(
    store: FalkorStore,
    namespace: str,
    label: str,
    k: int,
    min_similarity: float,
    head: str,
    query_vector: str,
    params: dict[str, Any],
    fields: Sequence[str] = (),
) -> list[Neighbour]:
    if label not in EMBEDDED_LABELS:
        raise ValueError(f"label {label!r} has no vector index")
    if k <= 0:
        return []
    fetch = min(2 * k + 16, MAX_FETCH)
    node = _returned(fields)
    cypher = (
        f"{head}CALL db.idx.vector.queryNodes('{label}', 'embedding', $k, {query_vector}) "
        f"YIELD node, score RETURN {node}, score ORDER BY score ASC"
    )
    try:
        res = await store.query(namespace, cypher, {**params, "k": fetch}, read_only=True)
        if len(res.rows) < k and fetch < MAX_FETCH:
            fetch = min(fetch * 8, MAX_FETCH)
            res = await store.query(namespace, cypher, {**params, "k": fetch}, read_only=True)
    except Exception as exc:  # no index yet for this label: nothing to find
        if "index" in str(exc).lower():
            return []
        raise
    return _nearest(label, res.rows, k, min_similarity)


async def knn_labels(
    store: FalkorStore,
    namespace: str,
    labels: Sequence[str],
    vector: Sequence[float],
    k: int,
    *,
    min_similarity: float = 0.0,
) -> dict[str, list[Neighbour]]:
    """`knn` over several labels with one vector, in one query: label to its `k` nearest
    live nodes, best first, at or above `min_similarity` (the same as one `knn` per label).

    A label whose index answered short of `k` is asked again for 8 times as many, all
    such labels in one more query, as `knn` does. A namespace without vector indexes
    yet answers each label with an empty list.
    """
    wanted = list(dict.fromkeys(labels))
    for label in wanted:
        if label not in EMBEDDED_LABELS:
            raise ValueError(f"label {label!r} has no vector index")
    if k <= 0 or not wanted:
        return {label: [] for label in wanted}
    values = [float(x) for x in vector]
    fetch = min(2 * k + 16, MAX_FETCH)
    try:
        rows = await _labels_rows(store, namespace, wanted, values, fetch)
        short = [lb for lb in wanted if len(rows[lb]) < k]
        if short and fetch < MAX_FETCH:
            rows.update(
                await _labels_rows(store, namespace, short, values, min(fetch * 8, MAX_FETCH))
            )
    except Exception as exc:  # no index yet for a label: one query per label says which
        if "index" not in str(exc).lower():
            raise
        found = [
            await knn(store, namespace, lb, values, k, min_similarity=min_similarity)
            for lb in wanted
        ]
        return dict(zip(wanted, found, strict=True))
    return {lb: _nearest(lb, rows[lb], k, min_similarity) for lb in wanted}


async def _labels_rows(
    store: FalkorStore, namespace: str, labels: Sequence[str], vector: list[float], fetch: int
) -> dict[str, list[list[Any]]]:
    """The index's answers for each label, nearest first: label -> rows of (node, distance)."""
    parts = [
        f"CALL db.idx.vector.queryNodes('{label}', 'embedding', $k, vecf32($v)) "
        f"YIELD node, score RETURN {i} AS part, {props('node')} AS node, score "
        "ORDER BY score ASC"
        for i, label in enumerate(labels)
    ]
    res = await store.query(
        namespace, " UNION ALL ".join(parts), {"v": vector, "k": fetch}, read_only=True
    )
    out: dict[str, list[list[Any]]] = {label: [] for label in labels}
    for part, node, distance in res.rows:
        out[labels[int(part)]].append([node, distance])
    return out


def _nearest(
    label: str, rows: Sequence[Sequence[Any]], k: int, min_similarity: float
) -> list[Neighbour]:
    """The first `k` distinct nodes of an index's answer (nearest first) at or above
    `min_similarity`."""
    out: list[Neighbour] = []
    seen: set[str] = set()
    for node, distance in rows:
        if len(out) >= k:
            break  # the index asked for 2k+16: the rest cannot be among the first k
        uuid = str(node.get("uuid", ""))
        if uuid in seen:
            continue
        seen.add(uuid)
        similarity = max(0.0, min(1.0, 1.0 - float(distance)))
        if similarity >= min_similarity:
            out.append(Neighbour(label=label, properties=clean(node), similarity=similarity))
    return out[:k]


async def knn_many(
    store: FalkorStore,
    namespace: str,
    label: str,
    queries: Sequence[tuple[int, Sequence[float]]],
    k: int,
    *,
    min_similarity: float = 0.0,
) -> dict[int, list[Neighbour]]:
    """`knn` for many vectors in one query: (caller's index, vector) in, index to the `k`
    nearest live nodes out (asking the index for 2k+16 each, as `knn` does first)."""
    if label not in EMBEDDED_LABELS:
        raise ValueError(f"label {label!r} has no vector index")
    if k <= 0 or not queries:
        return {}
    res = await store.query(
        namespace,
        f"UNWIND $qs AS q CALL db.idx.vector.queryNodes('{label}', 'embedding', $k, "
        f"vecf32(q.v)) YIELD node, score RETURN q.i, {props('node')}, score",
        {"qs": [{"i": i, "v": [float(x) for x in v]} for i, v in queries], "k": 2 * k + 16},
        read_only=True,
    )
    return _nearest_per_query(res.rows, int, label, k, min_similarity)


def _nearest_per_query(
    rows: Sequence[Sequence[Any]],
    key: Callable[[Any], K],
    label: str,
    k: int,
    min_similarity: float = 0.0,
) -> dict[K, list[Neighbour]]:
    """Rows of (query, node, distance) from many index queries in one: each query's
    `_nearest`, queries that found none left out."""
    found: dict[K, list[Sequence[Any]]] = {}
    for q, node, distance in sorted(rows, key=lambda r: float(r[2])):
        found.setdefault(key(q), []).append((node, distance))
    return {
        q: hits for q, near in found.items() if (hits := _nearest(label, near, k, min_similarity))
    }
