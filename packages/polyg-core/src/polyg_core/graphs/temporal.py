"""The temporal graph: events on a timeline and bi-temporal facts.

Events (`T_Event`) happen at a point in time and involve entities
(`X_INVOLVES`). For every entity, its events form a chain of `T_BEFORE` edges
in time order (ties broken by uuid); each edge carries the entity's uuid, so
the chains of different entities never disturb each other.

Facts (`T_Fact`) are subject-predicate-object statements valid over
`[valid_from, valid_to)` (valid time; `valid_to` null = still valid) and
recorded at `recorded_at` (record time). A subject and a single-valued predicate
(team, manager, city; see `graphs/fact_cardinality.py`) hold one object at a time;
a multi-valued predicate (skills, likes) holds many, and the rule below then
applies to each object on its own. The rule `add_fact` keeps:

* the fact valid at the new fact's `valid_from` with another object is closed
  at that instant (`valid_to = valid_from`, `invalidated_by = new uuid`);
* a fact starting later than the new one is never closed: the new fact ends
  where that later one starts (it is inserted as history);
* the same object already valid over the whole new interval is not recorded
  twice (`existing`); if it ends earlier, its validity is extended;
* a fact that ends explicitly does not bring the replaced value back afterwards.

So the valid-time intervals of one single-valued subject+predicate never overlap, at most
one of them is open, and a point-in-time query returns at most one fact each.
"""

from __future__ import annotations

import logging
import uuid as uuidlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from polyg_shared.nodes import Event, Fact
from polyg_shared.temporal import (
    EventNeighbourhood,
    EventOrder,
    EventWrite,
    FactWrite,
    FactWriteStatus,
)
from polyg_shared.timeutil import iso

from polyg_core.errors import AmbiguousName, Candidate, InvalidInput, NodeNotFound
from polyg_core.graphs.base import check_text, cosine, embed_texts, iso_ms, prepare
from polyg_core.graphs.bulk import EventItem, add_events
from polyg_core.graphs.entity import EntityGraph
from polyg_core.graphs.entity_refs import (
    created_entities,
    ensure_entity_uuids,
    epoch_ms,
    from_ms,
    lexically_compatible,
    resolve_entity_names,
)
from polyg_core.graphs.fact_cardinality import cardinality_of
from polyg_core.graphs.temporal_queries import (
    ADD_FACT,
    DELETE_EVENT,
    FACT_KEYS,
    INVALIDATE,
    MAX_DEPTH,
    MAX_LIMIT,
    TimeInput,
    check_depth,
    check_limit,
    event_from_row,
    fact_from_row,
    parse_bound,
    parse_time,
    repair_chains,
)
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.resolve import ENTITY_NAMES, NameResolver
from polyg_core.storage.cypher import clean, props
from polyg_core.storage.fulltext import word_search
from polyg_core.storage.schema import ENTITY, EVENT, FACT, R_BEFORE, X_INVOLVES
from polyg_core.storage.store import FalkorStore
from polyg_core.text.normalize import normalize_name

logger = logging.getLogger(__name__)

__all__ = [
    "MAX_DEPTH",
    "MAX_LIMIT",
    "TemporalGraph",
    "TimeInput",
    "event_from_row",
    "fact_from_row",
    "parse_bound",
    "parse_time",
]


@dataclass(frozen=True)
class FactItem:
    """A fact to write with `TemporalGraph.add_facts` (the arguments of `add_fact`).

    `link_subject`: the subject names an entity (found or created, as `add_fact`
    does); False keeps it as text and links `entities` only. `uuid`: the fact's
    identity when it has one (an exported fact's uuid).
    """

    subject: str
    predicate: str
    object: str
    valid_from: TimeInput | None = None
    valid_to: TimeInput | None = None
    entities: Sequence[str] = ()
    source: str | None = None
    link_subject: bool = True
    uuid: str | None = None
    cardinality: str | None = None
    stored: Mapping[str, Any] | None = None
    """The exact properties a fact this item creates is written with (an import of an
    export: `stored_fact`)."""


def stored_fact(stored: Mapping[str, Any] | None) -> dict[str, Any]:
    """The `ADD_FACT` parameters that write a created fact with an export's stored
    properties in its one CREATE (`s`: every property `ADD_FACT` names, None leaving it
    out; `x`: the others); none for a fact written without them."""
    if not stored:
        return {"s": None, "x": {}}
    return {
        "s": {**dict.fromkeys(FACT_KEYS), **stored},
        "x": {k: v for k, v in stored.items() if k not in FACT_KEYS and v is not None},
    }


@dataclass
class TemporalGraph:
    """Events, facts and timelines of one FalkorDB store.

    Args:
        store: the FalkorDB store.
        embedder: embeds event descriptions and "subject predicate object" of facts.
        resolver: resolves entity names (and event references).
        event_match_threshold: similarity for resolving an event by description.
    """

    store: FalkorStore
    embedder: Embedder
    resolver: NameResolver
    event_match_threshold: float = 0.85

    async def _prepare(self, namespace: str) -> None:
        await prepare(self.store, namespace, self.embedder)

    async def _entity_uuid(self, namespace: str, entity: str) -> str:
        return (await self.resolver.resolve(namespace, ENTITY_NAMES, entity)).uuid

    # -- events -------------------------------------------------------------------------------

    async def add_event(
        self,
        namespace: str,
        description: str,
        occurred_at: TimeInput,
        *,
        duration_ms: int | None = None,
        entities: Sequence[str] = (),
    ) -> EventWrite:
        """Record an event and link it to the entities it involves.

        The same description at the same instant is one event (a retry adds nothing).
        Entities that do not exist yet are created and reported (`created_entities`, with
        their near-duplicates by meaning). Each entity's `T_BEFORE` chain is kept in
        time order, also when an event is inserted between two older ones.

        Raises:
            InvalidInput: empty description, bad timestamp or negative duration.
            AmbiguousName: an entity name matches several entities.
        """
        # A single event is a batch of one: graphs/bulk.py owns the event write and the
        # T_BEFORE chain repair.
        created: dict[str, str] = {}
        written = await add_events(
            EntityGraph(self.store, self.embedder, self.resolver),
            namespace,
            [EventItem(description, occurred_at, duration_ms, list(entities))],
            created=created,
        )
        outcome = written.outcomes[0]
        if isinstance(outcome, Exception):
            raise outcome
        desc = check_text(description, "description", 4096)
        t = epoch_ms(parse_time(occurred_at, "occurred_at"))
        res = await self.store.query(
            namespace,
            f"MATCH (ev:{EVENT} {{description: $desc, occurred_at: $t}}) "
            f"OPTIONAL MATCH (ev)-[:{X_INVOLVES}]->(x:{ENTITY}) "
            f"RETURN {props('ev')}, collect(x.name)",
            {"desc": desc, "t": t},
            read_only=True,
        )
        node, names = res.rows[0]
        return EventWrite(
            **event_from_row(clean(node), names).model_dump(),
            created_entities=await created_entities(self.resolver, namespace, created),
        )

    async def delete_event(self, namespace: str, ref: str) -> Event:
        """Delete an event and join its entities' `T_BEFORE` chains around the gap.

        `ref` is a uuid or exact description: a delete never guesses. One query: the
        event, its links, and the re-linking happen together.

        Raises:
            NodeNotFound: no such event.
            AmbiguousName: the description matches several events.
        """
        event = await self.resolve_event(namespace, ref, fuzzy=False)
        await self.store.query(namespace, DELETE_EVENT, {"u": event.uuid})
        return event

    async def update_event(
        self,
        namespace: str,
        ref: str,
        *,
        description: str | None = None,
        occurred_at: TimeInput | None = None,
        duration_ms: int | None = None,
        entities: Sequence[str] | None = None,
    ) -> EventWrite:
        """Change an event's description, time, duration or entities (None: unchanged).

        `ref` is the event's uuid or exact description: an update never guesses. New
        `entities` replace the old ones (names resolved as on `add_event`; the entities
        created for them are reported in `created_entities`). The
        `T_BEFORE` chains of every entity involved before or after are rebuilt from
        the earlier of the old and new times.

        Raises:
            NodeNotFound: no event has this uuid or description.
            AmbiguousName: several events have this description; pass the uuid.
            InvalidInput: an empty description, a bad time or a negative duration, or
                another event already has the new description at the new time.
        """
        event = await self._exact_event(namespace, check_text(ref, "event", 4096))
        desc = check_text(description, "description", 4096) if description is not None else None
        t_new = (
            epoch_ms(parse_time(occurred_at, "occurred_at")) if occurred_at is not None else None
        )
        if duration_ms is not None and (isinstance(duration_ms, bool) or duration_ms < 0):
            raise InvalidInput(f"duration_ms must be a whole number >= 0, got {duration_ms!r}")
        await self._prepare(namespace)
        created: dict[str, str] = {}
        eids = (
            sorted(
                set(
                    (
                        await ensure_entity_uuids(
                            self.store,
                            self.resolver,
                            self.embedder,
                            namespace,
                            list(entities),
                            created=created,
                        )
                    ).values()
                )
            )
            if entities is not None
            else None
        )
        t_old = epoch_ms(event.occurred_at)
        final_desc = desc if desc is not None else event.description
        final_t = t_new if t_new is not None else t_old
        if (final_desc, final_t) != (event.description, t_old):
            # The same description at the same instant is one event (add_event's rule).
            clash = await self.store.query(
                namespace,
                f"MATCH (ev:{EVENT} {{description: $d, occurred_at: $t}}) "
                "WHERE ev.uuid <> $u RETURN ev.uuid LIMIT 1",
                {"d": final_desc, "t": final_t, "u": event.uuid},
                read_only=True,
            )
            if clash.rows:
                raise InvalidInput(
                    f"event {clash.rows[0][0]} already has this description at this time; "
                    "update or delete that one instead"
                )
        old = await self.store.query(
            namespace,
            f"MATCH (:{EVENT} {{uuid: $u}})-[:{X_INVOLVES}]->(x:{ENTITY}) RETURN x.uuid",
            {"u": event.uuid},
            read_only=True,
        )
        touched = {str(r[0]) for r in old.rows} | set(eids or [])
        params: dict[str, Any] = {
            "u": event.uuid,
            "desc": final_desc,
            "t": final_t,
            "dur": duration_ms if duration_ms is not None else event.duration_ms,
            "eids": eids,
        }
        await self.store.query(
            namespace,
            f"MATCH (ev:{EVENT} {{uuid: $u}}) "
            # The ISO copy of the instant older versions stored would be stale: removed.
            "SET ev.description = $desc, ev.occurred_at = $t, ev.occurred_at_iso = null, "
            # Events carry no vector now; one stored by an older version would be stale.
            "ev.duration_ms = $dur, ev.embedding = null "
            "WITH ev "
            f"OPTIONAL MATCH (ev)-[b:{R_BEFORE}]-() DELETE b "
            "WITH DISTINCT ev "
            f"OPTIONAL MATCH (ev)-[i:{X_INVOLVES}]->(x:{ENTITY}) "
            "WHERE $eids IS NOT NULL AND NOT x.uuid IN $eids DELETE i "
            "WITH DISTINCT ev "
            f"UNWIND coalesce($eids, []) AS eid MATCH (x:{ENTITY} {{uuid: eid}}) "
            f"MERGE (ev)-[:{X_INVOLVES}]->(x)",
            params,
        )
        if touched:
            since = min(t_old, final_t)
            await repair_chains(
                self.store, namespace, [{"x": x, "t": since} for x in sorted(touched)]
            )
        updated = (await self._events(namespace, [event.uuid]))[event.uuid]
        return EventWrite(
            **updated.model_dump(),
            created_entities=await created_entities(self.resolver, namespace, created),
        )

    async def _exact_event(self, namespace: str, text: str) -> Event:
        res = await self.store.query(
            namespace,
            f"MATCH (ev:{EVENT}) WHERE ev.uuid = $v OR ev.description = $v "
            "RETURN ev.uuid, ev.description, ev.occurred_at LIMIT 6",
            {"v": text},
            read_only=True,
        )
        if not res.rows:
            raise NodeNotFound("event", text)
        if len(res.rows) > 1:
            cands = [
                Candidate(str(u), f"{d} ({iso_ms(int(t))})", EVENT, 1.0) for u, d, t in res.rows
            ]
            raise AmbiguousName("event", text, cands)
        uid = str(res.rows[0][0])
        return (await self._events(namespace, [uid]))[uid]

    async def _events(self, namespace: str, uuids: Sequence[str]) -> dict[str, Event]:
        if not uuids:
            return {}
        res = await self.store.query(
            namespace,
            f"MATCH (ev:{EVENT}) WHERE ev.uuid IN $ids "
            f"OPTIONAL MATCH (ev)-[:{X_INVOLVES}]->(x:{ENTITY}) "
            f"RETURN {props('ev')}, collect(x.name)",
            {"ids": list(uuids)},
            read_only=True,
        )
        events = (event_from_row(clean(node), names) for node, names in res.rows)
        return {e.uuid: e for e in events}

    async def timeline(
        self,
        namespace: str,
        start: TimeInput | None = None,
        end: TimeInput | None = None,
        entity: str | None = None,
        limit: int = 100,
        order: Literal["asc", "desc"] = "asc",
    ) -> list[Event]:
        """Events with `start <= occurred_at <= end` (either bound open), in time order.

        Events of any age are returned; nothing is filtered by a hidden window. A date
        without a time is the whole day: `end="2026-01-07"` includes that day's events.

        Args:
            namespace: the graph.
            start: earliest occurrence (inclusive), or None.
            end: latest occurrence (inclusive), or None.
            entity: only events involving this entity (name or uuid, resolved).
            limit: at most this many events (1-1000).
            order: "asc" oldest first, "desc" newest first.

        Raises:
            InvalidInput: bad bounds, limit or order.
            NodeNotFound: the entity does not exist.
        """
        check_limit(limit)
        if order not in ("asc", "desc"):
            raise InvalidInput(f"order must be 'asc' or 'desc', got {order!r}")
        params: dict[str, Any] = {"lim": limit}
        conds: list[str] = []
        if start is not None:
            params["s"] = epoch_ms(parse_bound(start, "start", "start"))
            conds.append("ev.occurred_at >= $s")
        if end is not None:
            params["e"] = epoch_ms(parse_bound(end, "end", "end"))
            conds.append("ev.occurred_at <= $e")
        if "s" in params and "e" in params and params["s"] > params["e"]:
            raise InvalidInput("start is after end; swap them")
        match = f"MATCH (ev:{EVENT})"
        if entity is not None:
            params["x"] = await self._entity_uuid(namespace, entity)
            match = f"MATCH (x0:{ENTITY} {{uuid: $x}})<-[:{X_INVOLVES}]-(ev:{EVENT})"
        where = f" WHERE {' AND '.join(conds)}" if conds else ""
        direction = "ASC" if order == "asc" else "DESC"
        res = await self.store.query(
            namespace,
            f"{match}{where} WITH DISTINCT ev "
            f"ORDER BY ev.occurred_at {direction}, ev.uuid {direction} LIMIT $lim "
            f"OPTIONAL MATCH (ev)-[:{X_INVOLVES}]->(x:{ENTITY}) "
            f"RETURN {props('ev')}, collect(x.name)",
            params,
            read_only=True,
        )
        events = [event_from_row(clean(node), names) for node, names in res.rows]
        events.sort(key=lambda e: (e.occurred_at, e.uuid), reverse=order == "desc")
        return events

    async def resolve_event(self, namespace: str, ref: str, *, fuzzy: bool = True) -> Event:
        """Find one event by uuid, exact description, or (reads only) similar description.

        Writes pass `fuzzy=False`: similarity by meaning never decides which event a
        write links or deletes.

        Raises:
            NodeNotFound: nothing matches; carries the closest descriptions.
            AmbiguousName: the description matches several events.
        """
        text = check_text(ref, "event", 4096)
        for cond in ("ev.uuid = $v", "ev.description = $v"):
            res = await self.store.query(
                namespace,
                f"MATCH (ev:{EVENT}) WHERE {cond} RETURN ev.uuid, ev.description, "
                "ev.occurred_at LIMIT 6",
                {"v": text},
                read_only=True,
            )
            if len(res.rows) == 1:
                return (await self._events(namespace, [str(res.rows[0][0])]))[str(res.rows[0][0])]
            if len(res.rows) > 1:
                cands = [
                    Candidate(str(u), f"{d} ({iso_ms(int(t))})", EVENT, 1.0) for u, d, t in res.rows
                ]
                raise AmbiguousName("event", text, cands)
        if not fuzzy:
            raise NodeNotFound("event", text, [])
        hits = await self._similar_events(namespace, text)
        good = [
            (uid, sim)
            for uid, desc, sim in hits
            if sim >= self.event_match_threshold and lexically_compatible(text, desc)
        ]
        if not good:
            cands = [Candidate(uid, desc, EVENT, sim) for uid, desc, sim in hits]
            raise NodeNotFound("event", text, cands)
        return (await self._events(namespace, [good[0][0]]))[good[0][0]]

    async def _similar_events(self, namespace: str, text: str) -> list[tuple[str, str, float]]:
        """The five events closest in meaning to `text` among those sharing a word with it:
        (uuid, description, cosine similarity), best first. Events carry no stored vector;
        the few word-search candidates are embedded with the text, in one call."""
        found = await word_search(self.store, namespace, EVENT, text, 20)
        if not found:
            return []
        descs = [str(h.properties.get("description", "")) for h in found]
        query, *vecs = await embed_texts(self.embedder, [text, *descs])
        ranked = sorted(
            zip((h.uuid for h in found), descs, (cosine(query, v) for v in vecs), strict=True),
            key=lambda r: (-r[2], r[0]),
        )
        return [(u, d, round(max(0.0, min(1.0, s)), 4)) for u, d, s in ranked[:5]]

    async def events_near(
        self,
        namespace: str,
        entity_uuids: Sequence[str],
        start: TimeInput | None = None,
        end: TimeInput | None = None,
        depth: int = 1,
        limit: int = 50,
    ) -> EventNeighbourhood:
        """Events involving the seed entities, then `depth` steps along `T_BEFORE`.

        Only events inside `[start, end]` are taken (either bound open). Direct events
        are taken newest first; the result holds at most `limit` events.

        Raises:
            InvalidInput: bad depth, limit or bounds.
        """
        check_depth(depth)
        check_limit(limit)
        params: dict[str, Any] = {}
        conds: list[str] = []
        if start is not None:
            params["s"] = epoch_ms(parse_time(start, "start"))
            conds.append("{v}.occurred_at >= $s")
        if end is not None:
            params["e"] = epoch_ms(parse_time(end, "end"))
            conds.append("{v}.occurred_at <= $e")
        ids = sorted(set(entity_uuids))
        if not ids:
            return EventNeighbourhood()
        where = "".join(f" AND {c.format(v='ev')}" for c in conds)
        res = await self.store.query(
            namespace,
            f"MATCH (x:{ENTITY})<-[:{X_INVOLVES}]-(ev:{EVENT}) WHERE x.uuid IN $ids{where} "
            "WITH DISTINCT ev ORDER BY ev.occurred_at DESC LIMIT $lim RETURN ev.uuid",
            {**params, "ids": ids, "lim": limit + 1},
            read_only=True,
        )
        found = [str(r[0]) for r in res.rows]
        truncated = len(found) > limit
        hops = {u: 0 for u in found[:limit]}
        frontier = list(hops)
        bwhere = "".join(f" AND {c.format(v='b')}" for c in conds)
        for hop in range(1, depth + 1):
            room = limit - len(hops)
            if not frontier or room <= 0:
                truncated = truncated or bool(frontier and room <= 0)
                break
            res = await self.store.query(
                namespace,
                f"MATCH (a:{EVENT})-[:{R_BEFORE}]-(b:{EVENT}) "
                f"WHERE a.uuid IN $front AND NOT b.uuid IN $seen{bwhere} "
                "RETURN DISTINCT b.uuid LIMIT $lim",
                {**params, "front": frontier, "seen": list(hops), "lim": room + 1},
                read_only=True,
            )
            nxt = [str(r[0]) for r in res.rows]
            if len(nxt) > room:
                truncated = True
                nxt = nxt[:room]
            for u in nxt:
                hops[u] = hop
            frontier = nxt
        events = await self._events(namespace, list(hops))
        edges_res = await self.store.query(
            namespace,
            # Whose chain an edge is, is read from its ends (older edges carry it).
            f"MATCH (a:{EVENT})-[r:{R_BEFORE}]->(b:{EVENT}) "
            "WHERE a.uuid IN $ids AND b.uuid IN $ids "
            f"OPTIONAL MATCH (a)-[:{X_INVOLVES}]->(x:{ENTITY})<-[:{X_INVOLVES}]-(b) "
            "WITH a, b, r, min(x.uuid) AS shared "
            "RETURN DISTINCT a.uuid, b.uuid, coalesce(r.entity, shared)",
            {"ids": list(hops)},
            read_only=True,
        )
        ordered = sorted(events.values(), key=lambda e: (e.occurred_at, e.uuid))
        return EventNeighbourhood(
            events=ordered,
            hops={u: hops[u] for u in events},
            edges=[
                EventOrder(before=str(a), after=str(b), entity=str(x) if x else None)
                for a, b, x in edges_res.rows
            ],
            truncated=truncated,
        )

    # -- facts --------------------------------------------------------------------------------

    async def add_fact(
        self,
        namespace: str,
        subject: str,
        predicate: str,
        object: str,
        valid_from: TimeInput | None = None,
        valid_to: TimeInput | None = None,
        *,
        entities: Sequence[str] = (),
        source: str | None = None,
        cardinality: str | None = None,
    ) -> FactWrite:
        """Record that `subject predicate object` holds from `valid_from` (default now).

        The subject becomes (or resolves to) an entity linked by `X_INVOLVES`, as do
        `entities`; the entities created for them are reported (`created_entities`). See the module docstring for how overlapping validity is settled.
        A `valid_to` without a time includes that day (the fact ends at the next
        midnight, UTC). `source` says who or what stated the fact; it is kept with the
        fact and returned by its history. `cardinality` says whether the predicate is
        'single'-valued (a new value ends the current one) or 'multi'-valued (values
        accumulate); by default the built-in list of `graphs/fact_cardinality.py`
        decides, and an unknown predicate is single-valued.

        Raises:
            InvalidInput: empty parts, bad timestamps, `valid_to <= valid_from`, or a
                cardinality other than 'single' or 'multi'.
            AmbiguousName: an entity name matches several entities.
        """
        params = fact_params(
            subject, predicate, object, valid_from, valid_to, source, cardinality=cardinality
        )
        await self._prepare(namespace)
        created: dict[str, str] = {}
        eids = await ensure_entity_uuids(
            self.store,
            self.resolver,
            self.embedder,
            namespace,
            [params["subject"], *entities],
            created=created,
        )
        params["eids"] = sorted(set(eids.values()))
        written = await write_fact(self.store, namespace, params)
        if not created:
            return written
        return written.model_copy(
            update={"created_entities": await created_entities(self.resolver, namespace, created)}
        )

    async def add_facts(
        self, namespace: str, items: Sequence[FactItem]
    ) -> list[FactWrite | InvalidInput | AmbiguousName]:
        """Write many facts, as an import does: their entity names resolved in one
        lookup, then one `ADD_FACT` query each, in order (a fact can supersede the one
        before it). A fact that cannot be written is its error.

        A fact already stored is not written again (status `existing`): the same
        uuid when the item has one, else the same subject, predicate, object and
        `valid_from` (a fact `add_fact` has since replaced at the instant it began
        is still that fact, so a file imported twice adds nothing). An empty validity
        (`valid_to = valid_from`) is accepted here: history in record time.
        """
        out: list[FactWrite | InvalidInput | AmbiguousName] = []
        todo: list[tuple[int, dict[str, Any], FactItem]] = []
        for it in items:
            try:
                p = fact_params(
                    it.subject,
                    it.predicate,
                    it.object,
                    it.valid_from,
                    it.valid_to,
                    it.source,
                    allow_empty=True,
                    cardinality=it.cardinality,
                )
            except InvalidInput as exc:
                out.append(exc)
                continue
            if it.uuid:
                p["uuid"] = it.uuid  # a fact created under its identity keeps it
            todo.append((len(out), p, it))
            out.append(InvalidInput("not written"))  # replaced below
        if not todo:
            return out
        await self._prepare(namespace)
        stored = await self._stored_facts(
            namespace, [(fact_identity(p, it), it) for _, p, it in todo]
        )
        names = [n for _, p, it in todo for n in _fact_names(p, it)]
        uuids = await resolve_entity_names(self.store, self.embedder, namespace, names)
        for i, p, it in todo:
            key = fact_identity(p, it)
            if key in stored:
                out[i] = FactWrite(fact=stored[key], status="existing", invalidated=[])
                continue
            got = [
                uuids.get(n.strip(), InvalidInput("an entity name is empty"))
                for n in _fact_names(p, it)
            ]
            failed = next((g for g in got if not isinstance(g, str)), None)
            if failed is not None:
                out[i] = failed
                continue
            eids = sorted({g for g in got if isinstance(g, str)})
            params = {**p, "eids": eids, **stored_fact(it.stored)}
            written = await write_fact(self.store, namespace, params)
            out[i] = written
            stored[key] = written.fact
        return out

    async def _stored_facts(
        self, namespace: str, keys: Sequence[tuple[FactIdentity, FactItem]]
    ) -> dict[FactIdentity, Fact]:
        """The stored facts that have these identities (see `fact_identity`), two queries."""
        by_uuid = sorted({k[1] for k, _ in keys if k[0] == "uuid"})
        by_key = [list(k[1:]) for k, _ in keys if k[0] == "key"]
        found: dict[FactIdentity, Fact] = {}
        if by_uuid:
            res = await self.store.query(
                namespace,
                f"UNWIND $us AS u MATCH (f:{FACT} {{uuid: u}}) RETURN {props('f')}",
                {"us": by_uuid},
                read_only=True,
            )
            for (node,) in res.rows:
                fact = fact_from_row(clean(node))
                found[("uuid", fact.uuid)] = fact
        if by_key:
            res = await self.store.query(
                namespace,
                f"UNWIND $ks AS k MATCH (f:{FACT} {{subject_key: k[0]}}) "
                "WHERE f.predicate_key = k[1] AND f.object_key = k[2] AND f.valid_from = k[3] "
                f"RETURN k, {props('f')} ORDER BY f.recorded_at",
                {"ks": by_key},
                read_only=True,
            )
            for k, node in res.rows:
                found.setdefault(("key", *k), fact_from_row(clean(node)))
        return found

    async def invalidate_fact(self, namespace: str, uuid: str, at: TimeInput | None = None) -> Fact:
        """End a fact's validity at `at` (default now); already ended earlier: unchanged.

        A date without a time ends the fact after that day (like `valid_to`). The fact
        keeps when its end was recorded (`invalidated_at`).

        Raises:
            NodeNotFound: no fact has this uuid.
            InvalidInput: `at` is before the fact's `valid_from`.
        """
        when = parse_bound(at, "at", "exclusive_end") if at is not None else datetime.now(UTC)
        at_ms = epoch_ms(when)
        now = datetime.now(UTC)
        res = await self.store.query(
            namespace,
            INVALIDATE,
            {"u": uuid, "at": at_ms, "at_iso": iso(from_ms(at_ms)), "now": epoch_ms(now)},
        )
        if not res.rows:
            raise NodeNotFound("fact", uuid)
        node, too_early = res.rows[0]
        fact = fact_from_row(clean(node))
        if too_early:
            raise InvalidInput(
                f"cannot end fact {uuid} at {iso(when)}: it is only valid from "
                f"{iso(fact.valid_from)}; give a time at or after that"
            )
        return fact

    async def facts(
        self,
        namespace: str,
        subject: str | None = None,
        predicate: str | None = None,
        entity: str | None = None,
        as_of: TimeInput | None = None,
        history: bool = False,
        limit: int = 100,
        *,
        start: TimeInput | None = None,
        end: TimeInput | None = None,
    ) -> list[Fact]:
        """Facts valid now (default), at `as_of`, at some time in `[start, end]`, or every
        version (`history`).

        A fact is valid at t when `valid_from <= t < valid_to` (or `valid_to` is open).
        A date without a time is the whole day: `as_of="2025-03-15"` is the state at the
        end of that day, `start`/`end` dates take the day in. Subject and predicate compare
        normalised (case, spaces, punctuation ignored).

        Raises:
            InvalidInput: bad timestamp or limit, or more than one of `as_of`, a range
                (`start`/`end`) and `history`.
            NodeNotFound: the entity does not exist.
        """
        check_limit(limit)
        ranged = start is not None or end is not None
        if sum((history, as_of is not None, ranged)) > 1:
            raise InvalidInput(
                "give one of as_of (one point in time), start/end (a period) or "
                "history=True, not several"
            )
        params: dict[str, Any] = {"lim": limit}
        conds: list[str] = []
        if subject is not None:
            params["sk"] = normalize_name(subject)
            conds.append("f.subject_key = $sk")
        if predicate is not None:
            params["pk"] = normalize_name(predicate)
            conds.append("f.predicate_key = $pk")
        if ranged:
            window = overlap_condition(
                "f",
                epoch_ms(parse_bound(start, "start", "start")) if start is not None else None,
                epoch_ms(parse_bound(end, "end", "end")) if end is not None else None,
            )
            if window is not None:
                conds.append(window[0])
                params.update(window[1])
        elif not history:
            when = parse_bound(as_of, "as_of", "end") if as_of is not None else datetime.now(UTC)
            params["t"] = epoch_ms(when)
            conds.append("f.valid_from <= $t AND (f.valid_to IS NULL OR f.valid_to > $t)")
        match = f"MATCH (f:{FACT})"
        if entity is not None:
            params["x"] = await self._entity_uuid(namespace, entity)
            match = f"MATCH (x0:{ENTITY} {{uuid: $x}})<-[:{X_INVOLVES}]-(f:{FACT})"
        where = f" WHERE {' AND '.join(conds)}" if conds else ""
        order = (
            "f.subject_key, f.predicate_key, f.valid_from, f.recorded_at, f.uuid"
            if history or ranged
            else "f.valid_from DESC, f.uuid"
        )
        res = await self.store.query(
            namespace,
            f"{match}{where} WITH DISTINCT f ORDER BY {order} LIMIT $lim RETURN {props('f')}",
            params,
            read_only=True,
        )
        return [fact_from_row(clean(r[0])) for r in res.rows]

    async def facts_for(
        self,
        namespace: str,
        entity_uuids: Sequence[str],
        as_of: TimeInput | None = None,
        limit: int = 50,
    ) -> list[Fact]:
        """Facts involving any of the seed entities, valid at `as_of` (default now).

        Raises:
            InvalidInput: bad timestamp or limit.
        """
        check_limit(limit)
        ids = sorted(set(entity_uuids))
        if not ids:
            return []
        when = parse_time(as_of, "as_of") if as_of is not None else datetime.now(UTC)
        res = await self.store.query(
            namespace,
            f"MATCH (x:{ENTITY})<-[:{X_INVOLVES}]-(f:{FACT}) WHERE x.uuid IN $ids "
            "AND f.valid_from <= $t AND (f.valid_to IS NULL OR f.valid_to > $t) "
            f"WITH DISTINCT f ORDER BY f.valid_from DESC LIMIT $lim RETURN {props('f')}",
            {"ids": ids, "t": epoch_ms(when), "lim": limit},
            read_only=True,
        )
        return [fact_from_row(clean(r[0])) for r in res.rows]

    async def replaced_facts(
        self, namespace: str, subjects: Sequence[str], limit: int = 50
    ) -> list[tuple[Fact, Fact]]:
        """Facts about these subjects that a newer fact ended, each with the one that did.

        Subjects compare normalised, as in `facts`; at most `limit` pairs, latest first.

        Raises:
            InvalidInput: a bad limit.
        """
        check_limit(limit)
        keys = sorted({normalize_name(s) for s in subjects if s.strip()})
        if not keys:
            return []
        res = await self.store.query(
            namespace,
            f"MATCH (f:{FACT}) WHERE f.subject_key IN $keys AND f.invalidated_by IS NOT NULL "
            f"MATCH (g:{FACT} {{uuid: f.invalidated_by}}) "
            f"WITH f, g ORDER BY g.valid_from DESC LIMIT $lim RETURN {props('f')}, {props('g')}",
            {"keys": keys, "lim": limit},
            read_only=True,
        )
        return [(fact_from_row(clean(r[0])), fact_from_row(clean(r[1]))) for r in res.rows]

    async def fact_history(
        self,
        namespace: str,
        fact: str | None = None,
        *,
        subject: str | None = None,
        predicate: str | None = None,
        limit: int = 100,
    ) -> list[Fact]:
        """Every version of one subject+predicate, oldest validity first.

        Give a fact's uuid (its subject and predicate are used) or `subject` and
        `predicate`. Each version carries who stated it (`source`), its valid time
        (`valid_from`, `valid_to`), when it was recorded (`recorded_at`), and, once
        ended, when that was recorded (`invalidated_at`) and which fact replaced it
        (`invalidated_by`).

        Raises:
            InvalidInput: neither a fact nor subject and predicate given.
            NodeNotFound: no fact has this uuid, or none has this subject and predicate.
        """
        if fact is not None:
            res = await self.store.query(
                namespace,
                f"MATCH (f:{FACT} {{uuid: $u}}) RETURN f.subject, f.predicate",
                {"u": fact.strip()},
                read_only=True,
            )
            if not res.rows:
                raise NodeNotFound("fact", fact)
            subject, predicate = str(res.rows[0][0]), str(res.rows[0][1])
        if subject is None or predicate is None:
            raise InvalidInput(
                "say which fact: give its uuid as fact, or both subject and predicate"
            )
        versions = await self.facts(
            namespace, subject=subject, predicate=predicate, history=True, limit=limit
        )
        if not versions:
            raise NodeNotFound("fact", f"{subject} {predicate}")
        return versions


FactIdentity = tuple[Any, ...]
"""("uuid", uuid) or ("key", subject key, predicate key, object key, valid_from ms)."""


def fact_identity(params: Mapping[str, Any], item: FactItem) -> FactIdentity:
    """What makes a fact to write the same as a stored one (see `add_facts`)."""
    if item.uuid:
        return ("uuid", item.uuid)
    if item.valid_from is None:
        # "from now" is a new instant on every write: only its uuid could match.
        return ("new", params["uuid"])
    return ("key", params["sk"], params["pk"], params["ok"], params["vf"])


def _fact_names(params: Mapping[str, Any], item: FactItem) -> list[str]:
    """The entity names a fact links: its subject (unless kept as text) and `entities`."""
    return [params["subject"], *item.entities] if item.link_subject else [*item.entities]


def fact_params(
    subject: str,
    predicate: str,
    object: str,
    valid_from: TimeInput | None = None,
    valid_to: TimeInput | None = None,
    source: str | None = None,
    *,
    allow_empty: bool = False,
    cardinality: str | None = None,
) -> dict[str, Any]:
    """The checked parameters of `ADD_FACT`, without `eids` (entity uuids).

    `allow_empty`: accept `valid_to = valid_from` (an import restoring a fact that was
    replaced the instant it began); a caller stating a fact gives a real interval.

    Raises:
        InvalidInput: empty parts, bad timestamps, `valid_to <= valid_from`
            (`valid_to < valid_from` with `allow_empty`), or a cardinality other than
            'single' or 'multi'.
    """
    subj = check_text(subject, "subject", 256)
    pred = check_text(predicate, "predicate", 256)
    obj = check_text(object, "object", 4096)
    sk, pk, ok = normalize_name(subj), normalize_name(pred), normalize_name(obj)
    if not (sk and pk and ok):
        raise InvalidInput(
            "subject, predicate and object each need letters or digits, e.g. "
            "('Alice', 'works_on', 'Auth Service')"
        )
    now = datetime.now(UTC)
    vf = epoch_ms(parse_time(valid_from, "valid_from") if valid_from is not None else now)
    vt = (
        epoch_ms(parse_bound(valid_to, "valid_to", "exclusive_end"))
        if valid_to is not None
        else None
    )
    said_by = check_text(source, "source", 256) if source is not None else None
    card = cardinality_of(pred, cardinality)
    if vt is not None and (vt < vf or (vt == vf and not allow_empty)):
        raise InvalidInput(
            f"valid_to ({iso(from_ms(vt))}) must be after valid_from ({iso(from_ms(vf))})"
        )
    return {
        "eids": [],
        "sk": sk,
        "pk": pk,
        "ok": ok,
        "subject": subj,
        "predicate": pred,
        "object": obj,
        "vf": vf,
        "vf_iso": iso(from_ms(vf)),
        "vt": vt,
        "vt_iso": iso(from_ms(vt)) if vt is not None else None,
        "uuid": uuidlib.uuid4().hex,
        "now": epoch_ms(now),
        "now_iso": iso(now),
        "source": said_by,
        "card": card,
        "multi": card == "multi",
    }


async def write_fact(store: FalkorStore, namespace: str, params: Mapping[str, Any]) -> FactWrite:
    """Run `ADD_FACT` (the supersession rule, one query) with complete `fact_params`."""
    res = await store.query(namespace, ADD_FACT, {**stored_fact(None), **params})
    node, status, closed = res.rows[0]
    status_value: FactWriteStatus = status
    return FactWrite(
        fact=fact_from_row(clean(node)),
        status=status_value,
        invalidated=[fact_from_row(clean(closed))] if closed else [],
    )


def overlap_condition(
    var: str, start_ms: int | None, end_ms: int | None
) -> tuple[str, dict[str, Any]] | None:
    """The Cypher condition "the fact `var` is valid at some instant of [start, end]"
    (either bound open) and its parameters; None when both bounds are open."""
    conds: list[str] = []
    params: dict[str, Any] = {}
    if end_ms is not None:
        conds.append(f"{var}.valid_from <= $w_end")
        params["w_end"] = end_ms
    if start_ms is not None:
        conds.append(f"({var}.valid_to IS NULL OR {var}.valid_to > $w_start)")
        params["w_start"] = start_ms
    return (" AND ".join(conds), params) if conds else None
