"""Batched writes for bulk loading: many relations or events in a few queries.

The graph classes write one record per call and resolve every name on the way
(uuid, exact, normalised name), several queries per record. An import
writes thousands of records whose names almost always match an entity exactly,
so these functions resolve the names of a whole batch in one query, write the
batch in one UNWIND query, and leave only the names that need the full resolver
(uuids, ambiguity, new names) to it. The stored result is the same as
writing the records one by one.
"""

from __future__ import annotations

import logging
import re
import uuid as uuidlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from polyg_core.errors import AmbiguousName, InvalidInput, NodeNotFound, StorageUnavailable
from polyg_core.graphs.base import (
    check_properties,
    check_text,
    name_key,
    prepare,
    type_key,
)
from polyg_core.graphs.entity import EntityGraph
from polyg_core.graphs.entity_refs import ensure_entity_uuids, epoch_ms
from polyg_core.graphs.relation_time import RelationDates, relation_dates
from polyg_core.graphs.temporal_queries import TimeInput, parse_time, repair_chains
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.resolve import NameResolver
from polyg_core.storage.cypher import each_linked
from polyg_core.storage.schema import ENTITY, EVENT, R_RELATES, X_INVOLVES
from polyg_core.storage.store import FalkorStore

logger = logging.getLogger(__name__)

_UUID = re.compile(r"^[0-9a-f]{32}$|^[0-9a-f-]{36}$")

Ref = tuple[str, str | None]
"""An entity reference: a name (or uuid) and, optionally, its entity type."""

WRITE_EVENTS = f"""
UNWIND $rows AS row
MERGE (ev:{EVENT} {{description: row.desc, occurred_at: row.t}})
ON CREATE SET ev.uuid = row.uuid, ev.duration_ms = row.dur, ev.recorded_at = $now
{each_linked("ev", "row", "eids", "eid", "x", ENTITY, f"MERGE (ev)-[:{X_INVOLVES}]->(x)")}
RETURN row.desc, row.t, ev.uuid
"""

# Events not stored yet, each created whole in one CREATE: a MERGE with ON CREATE SET
# writes a new node twice, so FalkorDB indexes it (range and full-text) twice. Rows
# whose event exists already are left out and written by `WRITE_EVENTS`. `s`: the exact
# stored properties of an export's event (an import), written in this same CREATE (the
# event's uuid is `row.uuid`); `x` any other stored property, set after (none for
# polyg's own exports). An event stores its times as epoch ms only: readers format
# them (`recall/context_nodes.py`), and the ISO strings older versions wrote beside
# them (`LEGACY_EVENT_KEYS`) are not written again.
CREATE_EVENTS = f"""
UNWIND $rows AS row
OPTIONAL MATCH (old:{EVENT} {{description: row.desc, occurred_at: row.t}})
WITH row, old WHERE old IS NULL
CREATE (ev:{EVENT} {{description: row.desc, occurred_at: row.t, uuid: row.uuid,
    duration_ms: CASE WHEN row.s IS NULL THEN row.dur ELSE row.s.duration_ms END,
    recorded_at: CASE WHEN row.s IS NULL THEN $now ELSE row.s.recorded_at END}})
FOREACH (_ IN CASE WHEN size(keys(row.x)) > 0 THEN [1] ELSE [] END | SET ev += row.x)
{each_linked("ev", "row", "eids", "eid", "x", ENTITY, f"CREATE (ev)-[:{X_INVOLVES}]->(x)")}
RETURN row.desc, row.t, ev.uuid
"""

LEGACY_EVENT_KEYS: Final = frozenset({"occurred_at_iso", "recorded_at_iso"})
"""ISO-string copies of an event's epoch times that older versions stored; readers
derive them, an import of an older export leaves them out."""

_EVENT_KEYS: Final = frozenset({"description", "occurred_at", "uuid", "duration_ms", "recorded_at"})
"""The properties `CREATE_EVENTS` writes by name."""


def event_row(
    description: str,
    t: int,
    duration_ms: int | None,
    eids: Sequence[str],
    stored: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One row of `CREATE_EVENTS` / `WRITE_EVENTS`: a checked description, its instant
    (epoch ms), duration and entity uuids.

    `stored`: the properties an event this row creates is written with instead of the
    ones the graph would give it (an import restoring an export's event; a None value
    leaves the property out), its `uuid` included. Its description and instant are the
    row's, which are the stored ones read back."""
    uid = stored.get("uuid") if stored else None
    kept = {k: v for k, v in (stored or {}).items() if k not in LEGACY_EVENT_KEYS}
    return {
        "desc": description,
        "t": t,
        "dur": duration_ms,
        "uuid": uid if isinstance(uid, str) and uid else uuidlib.uuid4().hex,
        "eids": sorted(set(eids)),
        "s": {**dict.fromkeys(_EVENT_KEYS), **kept} if stored else None,
        "x": {k: v for k, v in kept.items() if k not in _EVENT_KEYS and v is not None},
    }


async def write_event_rows(
    store: FalkorStore,
    namespace: str,
    rows: Sequence[Mapping[str, Any]],
    *,
    created: set[tuple[str, int]] | None = None,
) -> dict[tuple[str, int], str]:
    """Write event rows (new ones created whole, stored ones merged: one query each),
    then repair the `T_BEFORE` chain of each entity they involve from its earliest new
    event on; the stored uuid of each (description, instant). `created` is given the
    keys of the events this write created (the others were stored already)."""
    if not rows:
        return {}
    params = {"now": epoch_ms(datetime.now(UTC))}
    res = await store.query(namespace, CREATE_EVENTS, {"rows": list(rows), **params})
    stored = {(str(d), int(t)): str(u) for d, t, u in res.rows}
    if created is not None:
        created.update(stored)
    rest = [r for r in rows if (r["desc"], r["t"]) not in stored]
    if rest:
        res = await store.query(namespace, WRITE_EVENTS, {"rows": rest, **params})
        stored.update({(str(d), int(t)): str(u) for d, t, u in res.rows})
    earliest: dict[str, int] = {}
    written: dict[str, int] = {}
    for row in rows:
        for eid in row["eids"]:
            earliest[eid] = min(earliest.get(eid, row["t"]), row["t"])
            written[eid] = written.get(eid, 0) + 1
    if earliest:
        await repair_chains(
            store, namespace, [{"x": x, "t": t} for x, t in earliest.items()], written=written
        )
    return stored


@dataclass
class BulkResult:
    """Per input item: created (True), matched something stored (False), or an error;
    and what was written: the event's uuid, or a relation's (source uuid, target uuid,
    relation key)."""

    outcomes: list[bool | Exception] = field(default_factory=list[bool | Exception])
    keys: list[Any] = field(default_factory=list[Any])

    @property
    def created(self) -> int:
        """Items that created something new."""
        return sum(1 for o in self.outcomes if o is True)


async def exact_entity_uuids(
    store: FalkorStore, namespace: str, refs: Sequence[Ref]
) -> dict[Ref, str]:
    """The entity uuid of each reference whose normalised name (and type) matches one entity.

    References matching no entity, or several, and uuid-shaped names are left out:
    they need the full resolver.
    """
    wanted: dict[Ref, list[Any]] = {}
    for name, etype in refs:
        text = name.strip()
        if (name, etype) in wanted or not text or _UUID.match(text.casefold()):
            continue
        wanted[(name, etype)] = [name, name_key(text), type_key(etype) if etype else None]
    if not wanted:
        return {}
    res = await store.query(
        namespace,
        f"UNWIND $refs AS r MATCH (n:{ENTITY} {{name_key: r[1]}}) "
        "WHERE r[2] IS NULL OR n.entity_type = r[2] "
        "RETURN r[0], r[2], collect(n.uuid)",
        {"refs": list(wanted.values())},
        read_only=True,
    )
    refs_of: dict[tuple[str, Any], list[Ref]] = {}
    for ref, row in wanted.items():
        refs_of.setdefault((row[0], row[2]), []).append(ref)
    out: dict[Ref, str] = {}
    for name, etype, uuids in res.rows:
        if len(uuids) == 1:
            for ref in refs_of.get((str(name), etype), []):
                out[ref] = str(uuids[0])
    return out


async def _ensure_each(
    entities: EntityGraph,
    store: FalkorStore,
    resolver: NameResolver,
    embedder: Embedder,
    namespace: str,
    refs: Sequence[Ref],
    created: dict[str, str] | None = None,
) -> dict[Ref, str | Exception]:
    """Resolve (or create) references the exact match left out, one at a time."""
    out: dict[Ref, str | Exception] = {}
    for name, etype in dict.fromkeys(refs):
        try:
            if etype:
                typed = await entities.get(namespace, name, type_key(etype), exact=True)
                out[(name, etype)] = typed.uuid
            else:
                got = await ensure_entity_uuids(
                    store, resolver, embedder, namespace, [name], created=created
                )
                out[(name, etype)] = got[name.strip()]
        except StorageUnavailable:
            raise
        except (InvalidInput, NodeNotFound, AmbiguousName) as exc:
            out[(name, etype)] = exc
    return out


async def resolve_refs(
    entities: EntityGraph,
    store: FalkorStore,
    resolver: NameResolver,
    embedder: Embedder,
    namespace: str,
    refs: Sequence[Ref],
    *,
    created: dict[str, str] | None = None,
) -> dict[Ref, str | Exception]:
    """Map every reference to an entity uuid, or to the error that resolving it raised.

    Untyped names follow the rule of every write (`graphs/entity_refs.py`): names that
    match nothing become plain entities (added to `created`, uuid to name, when given);
    typed references must exist (`NodeNotFound` otherwise).
    """
    exact = await exact_entity_uuids(store, namespace, refs)
    rest = [r for r in dict.fromkeys(refs) if r not in exact]
    out: dict[Ref, str | Exception] = dict(exact)
    if rest:
        out.update(
            await _ensure_each(entities, store, resolver, embedder, namespace, rest, created)
        )
    return out


@dataclass(frozen=True)
class RelationItem:
    """A relation to write: ends by name (and optional type), relation name, properties,
    and when it held (`graphs/relation_time.py`)."""

    source: Ref
    target: Ref
    relation: str
    properties: Mapping[str, Any] | None = None
    valid_from: TimeInput | None = None
    valid_to: TimeInput | None = None


async def add_relations(
    entities: EntityGraph,
    namespace: str,
    items: Sequence[RelationItem],
    *,
    known: Mapping[Ref, str] | None = None,
) -> BulkResult:
    """Relate many entity pairs: ends resolved for the whole batch, links in one query.

    A relation whose end cannot be resolved, or whose ends are one entity, fails on
    its own; the others are written. `True` means the relation did not exist before.
    `known`: ends the caller has just resolved or created (their uuids), not looked up
    again.
    """
    store, resolver, embedder = entities.store, entities.resolver, entities.embedder
    result = BulkResult([False] * len(items), [None] * len(items))
    if not items:
        return result
    given = dict(known or {})
    uuids: dict[Ref, str | Exception] = dict(given)
    rest = [r for it in items for r in (it.source, it.target) if r not in given]
    if rest:
        uuids.update(await resolve_refs(entities, store, resolver, embedder, namespace, rest))
    rows: list[tuple[int, str, str, RelationItem]] = []
    for i, it in enumerate(items):
        a, b = uuids[it.source], uuids[it.target]
        if isinstance(a, Exception) or isinstance(b, Exception):
            result.outcomes[i] = a if isinstance(a, Exception) else b  # type: ignore[assignment]
        elif a == b:
            result.outcomes[i] = InvalidInput(
                f"{it.source[0]!r} and {it.target[0]!r} are the same entity; an entity "
                "cannot be related to itself — link two different entities"
            )
        else:
            rows.append((i, a, b, it))
    if not rows:
        return result
    keys = [[a, b, name_key(it.relation)] for _, a, b, it in rows]
    res = await store.query(
        namespace,
        f"UNWIND $keys AS k MATCH (:{ENTITY} {{uuid: k[0]}})-[r:{R_RELATES}]->"
        f"(:{ENTITY} {{uuid: k[1]}}) WHERE r.rel_key = k[2] RETURN DISTINCT k",
        {"keys": keys},
        read_only=True,
    )
    existing = {(str(k[0]), str(k[1]), str(k[2])) for (k,) in res.rows}
    good: list[tuple[str, str, str, Mapping[str, Any] | None]] = []
    dates: list[RelationDates] = []
    for (i, a, b, it), key in zip(rows, keys, strict=True):
        try:
            check_text(it.relation, "relationship type")
            if it.properties is not None:
                check_properties(it.properties)
            when = relation_dates(it.valid_from, it.valid_to)
        except InvalidInput as exc:
            result.outcomes[i] = exc
            continue
        good.append((a, b, it.relation, it.properties))
        dates.append(when)
        k = (str(key[0]), str(key[1]), str(key[2]))
        result.outcomes[i] = k not in existing
        result.keys[i] = k
        existing.add(k)
    await entities.link_many(namespace, good, dates)
    return result


@dataclass(frozen=True)
class EventItem:
    """An event to write: description, time, optional duration, entity names."""

    description: str
    occurred_at: TimeInput
    duration_ms: int | None = None
    entities: Sequence[str] = ()
    stored: Mapping[str, Any] | None = None
    """The exact properties an event this item creates is written with (an import of an
    export, see `event_row`)."""


async def add_events(
    entities: EntityGraph,
    namespace: str,
    items: Sequence[EventItem],
    *,
    created: dict[str, str] | None = None,
) -> BulkResult:
    """Record many events: names resolved per batch, events and links in one query each,
    then each touched entity's `T_BEFORE` chain repaired from the earliest new event on.

    The same description at the same instant is one event, as with `add_event`; an
    event whose entity names cannot be resolved fails on its own. The entities created
    for names nothing matched are added to `created` (uuid to name) when given.
    """
    store, resolver, embedder = entities.store, entities.resolver, entities.embedder
    result = BulkResult([False] * len(items), [None] * len(items))
    if not items:
        return result
    await prepare(store, namespace, embedder)
    parsed: dict[int, tuple[str, int]] = {}
    for i, it in enumerate(items):
        try:
            desc = check_text(it.description, "description", 4096)
            when = epoch_ms(parse_time(it.occurred_at, "occurred_at"))
            if it.duration_ms is not None and (
                isinstance(it.duration_ms, bool) or it.duration_ms < 0
            ):
                raise InvalidInput(
                    f"duration_ms must be a whole number >= 0, got {it.duration_ms!r}"
                )
        except InvalidInput as exc:
            result.outcomes[i] = exc
            continue
        parsed[i] = (desc, when)
    refs = [(n, None) for i in parsed for n in items[i].entities]
    uuids = await resolve_refs(
        entities, store, resolver, embedder, namespace, refs, created=created
    )
    rows: dict[tuple[str, int], dict[str, Any]] = {}
    slots: list[tuple[int, tuple[str, int]]] = []
    for i, key in parsed.items():
        eids: list[str] = []
        for name in items[i].entities:
            got = uuids[(name, None)]
            if isinstance(got, Exception):
                result.outcomes[i] = got
                break
            eids.append(got)
        if isinstance(result.outcomes[i], Exception):
            continue
        row = rows.get(key)
        if row is None:
            rows[key] = event_row(key[0], key[1], items[i].duration_ms, eids, items[i].stored)
        else:
            row["eids"] = sorted(set(row["eids"]) | set(eids))
        slots.append((i, key))
    if not rows:
        return result
    # What the write creates is new; what it merged into was stored (or written by
    # another writer since), so no read beforehand tells them apart.
    made: set[tuple[str, int]] = set()
    stored = await write_event_rows(store, namespace, list(rows.values()), created=made)
    seen: set[tuple[str, int]] = set()
    for i, key in slots:
        result.outcomes[i] = key in made and key not in seen
        result.keys[i] = stored.get(key, rows[key]["uuid"])
        seen.add(key)
    return result
