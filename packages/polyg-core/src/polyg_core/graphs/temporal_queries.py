"""Cypher and row conversion for the temporal graph (see `polyg_core.graphs.temporal`)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime, timedelta
from typing import Any, Final, Literal

from polyg_shared.nodes import Event, Fact
from polyg_shared.timeutil import parse_timestamp

from polyg_core.errors import InvalidInput
from polyg_core.graphs.entity_refs import from_ms
from polyg_core.storage.cypher import props
from polyg_core.storage.schema import ENTITY, EVENT, FACT, R_BEFORE, X_INVOLVES
from polyg_core.storage.store import FalkorStore

TimeInput = str | datetime | date | int | float
"""ISO 8601 (any offset), a date, an aware/naive datetime (naive = UTC) or epoch ms."""

MAX_LIMIT = 1000
MAX_DEPTH = 10


def parse_time(value: TimeInput, what: str) -> datetime:
    """Parse a timestamp argument, naming the argument when it is wrong.

    Raises:
        InvalidInput: not a timestamp.
    """
    try:
        return parse_timestamp(value)
    except ValueError as exc:
        raise InvalidInput(f"{what}: {exc}") from exc


_DATE_ONLY = re.compile(r"^\s*\d{4}-\d{2}-\d{2}\s*$")
_MS = timedelta(milliseconds=1)

Bound = Literal["start", "end", "exclusive_end"]
"""How a date without a time is read: its first instant (`start`), its last millisecond
(`end`, an inclusive bound) or the next day's first instant (`exclusive_end`, as a fact's
`valid_to`, which is exclusive)."""


def is_date_only(value: TimeInput) -> bool:
    """True for a calendar date without a time: a `date` object or "YYYY-MM-DD"."""
    if isinstance(value, str):
        return _DATE_ONLY.match(value) is not None
    return isinstance(value, date) and not isinstance(value, datetime)


def parse_bound(value: TimeInput, what: str, bound: Bound) -> datetime:
    """Parse one end of a time range; a date without a time stands for the whole day.

    "2025-03-31" as a start is 2025-03-31T00:00Z; as an inclusive end it is
    2025-03-31T23:59:59.999Z; as an exclusive end (a fact's `valid_to`) it is
    2025-04-01T00:00Z, so the fact still holds on the 31st.

    Raises:
        InvalidInput: not a timestamp.
    """
    moment = parse_time(value, what)
    if bound == "start" or not is_date_only(value):
        return moment
    next_day = moment + timedelta(days=1)
    return next_day if bound == "exclusive_end" else next_day - _MS


def check_limit(limit: int, what: str = "limit") -> int:
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(f"{what} must be between 1 and {MAX_LIMIT}, got {limit}")
    return limit


def check_depth(depth: int, low: int = 0) -> int:
    if not low <= depth <= MAX_DEPTH:
        raise InvalidInput(f"depth must be between {low} and {MAX_DEPTH}, got {depth}")
    return depth


def event_from_row(node: dict[str, Any], entities: Iterable[Any] = ()) -> Event:
    """An `Event` model from stored properties (plus involved entity names)."""
    duration = node.get("duration_ms")
    return Event(
        uuid=str(node["uuid"]),
        description=str(node["description"]),
        occurred_at=from_ms(int(node["occurred_at"])),
        duration_ms=int(duration) if duration is not None else None,
        recorded_at=from_ms(int(node.get("recorded_at", node["occurred_at"]))),
        entities=sorted({str(n) for n in entities if n is not None}),
    )


def card_of_row(value: object) -> Literal["single", "multi"] | None:
    """A stored fact's cardinality (facts written before it was stored have none)."""
    if value == "single":
        return "single"
    return "multi" if value == "multi" else None


def fact_from_row(node: dict[str, Any]) -> Fact:
    """A `Fact` model from stored properties."""
    valid_to = node.get("valid_to")
    by = node.get("invalidated_by")
    at = node.get("invalidated_at")
    source = node.get("source")
    return Fact(
        uuid=str(node["uuid"]),
        subject=str(node["subject"]),
        predicate=str(node["predicate"]),
        object=str(node["object"]),
        valid_from=from_ms(int(node["valid_from"])),
        valid_to=from_ms(int(valid_to)) if valid_to is not None else None,
        recorded_at=from_ms(int(node.get("recorded_at", node["valid_from"]))),
        invalidated_by=str(by) if by else None,
        invalidated_at=from_ms(int(at)) if at is not None else None,
        source=str(source) if source else None,
        cardinality=card_of_row(node.get("cardinality")),
    )


# A new fact is created whole in one CREATE (a MERGE with ON CREATE SET writes a node
# twice, so FalkorDB indexes it twice). `$s`: the exact stored properties of an
# export's fact (an import), written in that same CREATE instead of the ones computed
# here (`FACT_KEYS`, None leaving a property out; `$x` any other, set after); None for
# every other write.
# A multi-valued predicate (`$multi`, see graphs/fact_cardinality.py) only meets
# facts with the same object: other values stay current beside the new one.
# One query decides and writes, so concurrent add_fact calls cannot interleave
# between the check and the write (FalkorDB runs writes to a graph one at a time).
# An empty validity ($vt = $vf: an imported fact that was replaced or ended the
# instant it began) is history in record time: it is created and closes nothing.
ADD_FACT = f"""
OPTIONAL MATCH (x:{ENTITY}) WHERE x.uuid IN $eids
WITH collect(DISTINCT x) AS xs
OPTIONAL MATCH (f0:{FACT})
WHERE f0.subject_key = $sk AND f0.predicate_key = $pk AND f0.valid_from <= $vf
    AND (f0.valid_to IS NULL OR f0.valid_to > $vf) AND (NOT $multi OR f0.object_key = $ok)
WITH xs, f0 ORDER BY f0.valid_from DESC, f0.recorded_at DESC LIMIT 1
OPTIONAL MATCH (nx:{FACT})
WHERE nx.subject_key = $sk AND nx.predicate_key = $pk AND nx.valid_from > $vf
    AND (nx.valid_to IS NULL OR nx.valid_to > nx.valid_from) AND (NOT $multi OR nx.object_key = $ok)
WITH xs, f0, nx ORDER BY nx.valid_from ASC LIMIT 1
WITH xs, f0,
    CASE WHEN nx IS NULL THEN $vt WHEN $vt IS NULL OR nx.valid_from < $vt
        THEN nx.valid_from ELSE $vt END AS vend,
    CASE WHEN nx IS NULL THEN $vt_iso WHEN $vt IS NULL OR nx.valid_from < $vt
        THEN nx.valid_from_iso ELSE $vt_iso END AS vend_iso
WITH xs, f0, vend, vend_iso,
    CASE WHEN f0 IS NULL OR $vt = $vf THEN 'created'
        WHEN f0.object_key <> $ok THEN 'superseded'
        WHEN f0.valid_to IS NULL THEN 'existing'
        WHEN vend IS NOT NULL AND f0.valid_to >= vend THEN 'existing'
        ELSE 'extended' END AS status
FOREACH (_ IN CASE WHEN status IN ['created', 'superseded'] THEN [1] ELSE [] END |
    CREATE (:{FACT} {{uuid: $uuid,
        subject: CASE WHEN $s IS NULL THEN $subject ELSE $s.subject END,
        subject_key: CASE WHEN $s IS NULL THEN $sk ELSE $s.subject_key END,
        predicate: CASE WHEN $s IS NULL THEN $predicate ELSE $s.predicate END,
        predicate_key: CASE WHEN $s IS NULL THEN $pk ELSE $s.predicate_key END,
        object: CASE WHEN $s IS NULL THEN $object ELSE $s.object END,
        object_key: CASE WHEN $s IS NULL THEN $ok ELSE $s.object_key END,
        valid_from: CASE WHEN $s IS NULL THEN $vf ELSE $s.valid_from END,
        valid_from_iso: CASE WHEN $s IS NULL THEN $vf_iso ELSE $s.valid_from_iso END,
        valid_to: CASE WHEN $s IS NULL THEN vend ELSE $s.valid_to END,
        valid_to_iso: CASE WHEN $s IS NULL THEN vend_iso ELSE $s.valid_to_iso END,
        recorded_at: CASE WHEN $s IS NULL THEN $now ELSE $s.recorded_at END,
        recorded_at_iso: CASE WHEN $s IS NULL THEN $now_iso ELSE $s.recorded_at_iso END,
        source: CASE WHEN $s IS NULL THEN $source ELSE $s.source END,
        cardinality: CASE WHEN $s IS NULL THEN $card ELSE $s.cardinality END,
        invalidated_by: CASE WHEN $s IS NULL THEN null ELSE $s.invalidated_by END,
        invalidated_at: CASE WHEN $s IS NULL THEN null ELSE $s.invalidated_at END}}))
WITH xs, f0, vend, vend_iso, status
MATCH (t:{FACT} {{uuid: CASE WHEN status IN ['created', 'superseded'] THEN $uuid ELSE f0.uuid END}})
FOREACH (_ IN CASE WHEN size(keys($x)) > 0 AND status IN ['created', 'superseded'] THEN [1]
    ELSE [] END | SET t += $x)
FOREACH (_ IN CASE WHEN status = 'superseded' THEN [1] ELSE [] END |
    SET f0.valid_to = $vf, f0.valid_to_iso = $vf_iso, f0.invalidated_by = $uuid,
        f0.invalidated_at = $now)
FOREACH (_ IN CASE WHEN status = 'extended' THEN [1] ELSE [] END |
    SET t.valid_to = vend, t.valid_to_iso = vend_iso, t.invalidated_by = null,
        t.invalidated_at = null)
FOREACH (x IN xs | MERGE (t)-[:{X_INVOLVES}]->(x))
RETURN {props("t")}, status, CASE WHEN status = 'superseded' THEN {props("f0")} ELSE null END
"""

FACT_KEYS: Final = frozenset(
    {
        "uuid",
        "subject",
        "subject_key",
        "predicate",
        "predicate_key",
        "object",
        "object_key",
        "valid_from",
        "valid_from_iso",
        "valid_to",
        "valid_to_iso",
        "recorded_at",
        "recorded_at_iso",
        "source",
        "cardinality",
        "invalidated_by",
        "invalidated_at",
    }
)
"""The properties `ADD_FACT` creates a fact with by name."""

# A T_BEFORE edge joins two events that follow each other directly, in (occurred_at,
# uuid) order, among the events of an entity both involve; one edge per pair, with no
# properties: whose chain it is is read from its ends (the entities both involve).
# Older versions wrote one edge per entity with the entity's uuid on it (~48 bytes an
# edge); such edges still read as chain edges and are kept or removed by the same rule.


def _after(a: str, c: str) -> str:
    """Cypher: event `c` comes after event `a` in chain order."""
    return (
        f"({c}.occurred_at > {a}.occurred_at OR "
        f"({c}.occurred_at = {a}.occurred_at AND {c}.uuid > {a}.uuid))"
    )


def held_elsewhere(keep: str) -> str:
    """Cypher that, for each chain edge `r` from event `a` to event `n` (rows carrying
    `keep` and `x`), counts in `held` the entities other than `x` that both involve
    with none of their events in between: the chains that still need the edge."""
    return f"""
OPTIONAL MATCH (a)-[:{X_INVOLVES}]->(z:{ENTITY})<-[:{X_INVOLVES}]-(n) WHERE z <> x
OPTIONAL MATCH (c:{EVENT})-[:{X_INVOLVES}]->(z) WHERE {_after("a", "c")} AND {_after("c", "n")}
WITH {keep}, r, z, count(c) AS inside
WITH {keep}, r, sum(CASE WHEN z IS NOT NULL AND inside = 0 THEN 1 ELSE 0 END) AS held
"""


# Every chain edge with the entity whose chain it is (an edge two entities' chains share
# is read once per entity): rows of `x` (the entity), `a` (the earlier event) and `n`.
CHAIN_EDGE_ROWS = f"""
MATCH (x:{ENTITY})<-[:{X_INVOLVES}]-(a:{EVENT})-[:{R_BEFORE}]->(n:{EVENT})-[:{X_INVOLVES}]->(x)
WITH DISTINCT x, a, n
OPTIONAL MATCH (c:{EVENT})-[:{X_INVOLVES}]->(x) WHERE {_after("a", "c")} AND {_after("c", "n")}
WITH x, a, n, count(c) AS inside WHERE inside = 0
"""
CHAIN_EDGES = f"{CHAIN_EDGE_ROWS}RETURN x.uuid, a.uuid, n.uuid"
"""(entity uuid, earlier event uuid, later event uuid) of every chain edge."""

# Deleting an event joins, for each entity it involved, the events just before and
# after it in that entity's chain (found along the event's own chain edges: the latest
# predecessor and the earliest successor involving the entity).
DELETE_EVENT = f"""
MATCH (ev:{EVENT} {{uuid: $u}})
OPTIONAL MATCH (ev)-[:{X_INVOLVES}]->(x:{ENTITY})
OPTIONAL MATCH (p:{EVENT})-[:{R_BEFORE}]->(ev), (p)-[:{X_INVOLVES}]->(x)
WITH ev, x, p ORDER BY p.occurred_at DESC, p.uuid DESC
WITH ev, x, collect(p)[0] AS p
OPTIONAL MATCH (ev)-[:{R_BEFORE}]->(n:{EVENT}), (n)-[:{X_INVOLVES}]->(x)
WITH ev, x, p, n ORDER BY n.occurred_at ASC, n.uuid ASC
WITH ev, x, p, collect(n)[0] AS n
WITH ev, collect(CASE WHEN p IS NULL OR n IS NULL THEN null ELSE [p.uuid, n.uuid] END) AS pairs
DETACH DELETE ev
WITH pairs
UNWIND pairs AS pair
WITH DISTINCT pair
MATCH (a:{EVENT} {{uuid: pair[0]}}), (b:{EVENT} {{uuid: pair[1]}})
MERGE (a)-[:{R_BEFORE}]->(b)
"""

# The chain edges of entity `$u`'s events that no other entity's chain needs, removed
# before the entity is (the head of a query that goes on with `x`).
UNCHAIN_ENTITY = f"""
MATCH (x:{ENTITY} {{uuid: $u}})
OPTIONAL MATCH (x)<-[:{X_INVOLVES}]-(a:{EVENT})-[r:{R_BEFORE}]->(n:{EVENT})-[:{X_INVOLVES}]->(x)
{held_elsewhere("x")}
WITH x, collect(CASE WHEN held = 0 THEN r END) AS dead
FOREACH (e IN dead | DELETE e)
WITH DISTINCT x
"""

INVALIDATE = f"""
MATCH (f:{FACT} {{uuid: $u}})
WITH f, $at < f.valid_from AS too_early,
    (f.valid_to IS NULL OR f.valid_to > $at) AND $at >= f.valid_from AS change
FOREACH (_ IN CASE WHEN change THEN [1] ELSE [] END |
    SET f.valid_to = $at, f.valid_to_iso = $at_iso, f.invalidated_at = $now)
RETURN {props("f")}, too_early
"""

# For each entity whose events changed (`$rows`: its uuid `x` and the earliest changed
# instant `t`), its chain from the last event before `t` onward: that predecessor and
# every later event, in (occurred_at, uuid) order. Edges before the predecessor are
# untouched, so appending to a long history costs only the tail.
_SEGMENT = f"""
UNWIND $rows AS row
MATCH (x:{ENTITY} {{uuid: row.x}})
OPTIONAL MATCH (p:{EVENT})-[:{X_INVOLVES}]->(x) WHERE p.occurred_at < row.t
WITH row, x, p ORDER BY p.occurred_at DESC, p.uuid DESC
WITH row, x, collect(p)[0] AS prev
MATCH (ev:{EVENT})-[:{X_INVOLVES}]->(x) WHERE ev.occurred_at >= row.t
WITH row, x, prev, ev ORDER BY ev.occurred_at ASC, ev.uuid ASC
WITH x, prev, collect(ev) AS later
WITH x, size(later) AS n_later, CASE WHEN prev IS NULL THEN later ELSE [prev] + later END AS seg
"""

# Each consecutive pair of a segment linked, once (a pair two entities share is one edge).
LINK_CHAINS = f"""{_SEGMENT}
UNWIND CASE WHEN size(seg) < 2 THEN [null] ELSE range(0, size(seg) - 2) END AS i
WITH x, n_later, seg[i] AS a, seg[i + 1] AS b
FOREACH (_ IN CASE WHEN a IS NULL THEN [] ELSE [1] END | MERGE (a)-[:{R_BEFORE}]->(b))
RETURN DISTINCT x.uuid, n_later
"""

# The edges from a segment's events to later events of the same entity that are no
# longer consecutive (an event came in between) and that no other shared entity's
# chain needs, removed.
PRUNE_CHAINS = f"""{_SEGMENT}
UNWIND range(0, size(seg) - 1) AS i
WITH x, seg[i] AS a, CASE WHEN i + 1 < size(seg) THEN seg[i + 1] ELSE null END AS b
MATCH (a)-[r:{R_BEFORE}]->(n:{EVENT})-[:{X_INVOLVES}]->(x)
WHERE b IS NULL OR n <> b
{held_elsewhere("x")}
WITH r WHERE held = 0
WITH DISTINCT r
DELETE r
RETURN count(*)
"""


async def repair_chains(
    store: FalkorStore,
    namespace: str,
    rows: Sequence[Mapping[str, Any]],
    *,
    written: Mapping[str, int] | None = None,
) -> None:
    """Bring the `T_BEFORE` chains of the entities in `rows` (`x`: uuid, `t`: the earliest
    changed instant, epoch ms) up to date: the missing consecutive pairs linked, then the
    edges no chain needs any more removed. Between the two queries a reader sees every
    edge it needs (and perhaps one stale more), never a gap; each writes only what
    changed, so re-linking a chain that is already right writes nothing.

    `written`: per entity, how many events involving it the caller has just written
    (each at or after its `t`). An entity whose events from `t` on are exactly those
    was only appended to: no event came between two it had, so no edge went stale and
    its second query is skipped (an import in time order, a conversation).
    """
    if not rows:
        return
    res = await store.query(namespace, LINK_CHAINS, {"rows": [dict(r) for r in rows]})
    later = {str(x): int(n) for x, n in res.rows}
    if written is not None:
        rows = [r for r in rows if later.get(str(r["x"]), 0) > written.get(str(r["x"]), 0)]
    if rows:
        await store.query(namespace, PRUNE_CHAINS, {"rows": [dict(r) for r in rows]})
