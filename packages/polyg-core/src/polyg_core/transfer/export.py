"""Streaming export of a memory namespace as records.

Nodes are read in pages ordered by internal id (`id(n) > $after ... LIMIT`), so
a namespace of any size is exported with one page in memory at a time. The
records are those the importer reads: `export → import` into an empty
namespace reproduces the nodes, edges and their properties, uuids, validity
and record times included (each record's `stored` map; embeddings are
recomputed on import). Entity and event references are names, or uuids where
several nodes share the name.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, cast

from polyg_shared.nodes import CausalNodeType
from pydantic import ValidationError

from polyg_core.errors import ExportError
from polyg_core.graphs.entity_refs import from_ms
from polyg_core.graphs.temporal_queries import card_of_row
from polyg_core.storage.cypher import clean, load_properties
from polyg_core.storage.schema import (
    CAUSAL,
    CONCEPT,
    ENTITY,
    EVENT,
    FACT,
    MEMORY,
    R_ABOUT,
    R_BEFORE,
    R_CAUSES,
    R_RELATES,
    R_SIMILAR,
    R_SOLVED_BY,
    X_AFFECTS,
    X_INVOLVES,
    X_REFERS_TO,
    X_REPRESENTS,
)
from polyg_core.storage.store import FalkorStore
from polyg_core.text.normalize import normalize_name
from polyg_core.transfer.records import (
    CausalLinkRecord,
    CausalNodeRecord,
    ConceptRecord,
    EntityRecord,
    EventRecord,
    FactRecord,
    MemoryRecord,
    Record,
    RelationRecord,
    SolutionRecord,
)
from polyg_core.transfer.stored import split

logger = logging.getLogger(__name__)

DEFAULT_PAGE = 1000


def _ms(value: Any) -> Any:
    return from_ms(int(value)) if value is not None else None


async def _pages(
    store: FalkorStore, namespace: str, label: str, body: str, page: int
) -> AsyncIterator[list[list[Any]]]:
    """Rows of `MATCH (n:label) <body>`, `page` nodes at a time in internal id order.

    Each page is two queries: the id range of the next `page` nodes, then the body
    over that range (bodies may return several rows per node, or none).
    """
    after = -1
    while True:
        bounds = await store.query(
            namespace,
            f"MATCH (n:{label}) WHERE id(n) > $after WITH id(n) AS i ORDER BY i LIMIT $lim "
            "RETURN max(i), count(i)",
            {"after": after, "lim": page},
            read_only=True,
        )
        last, count = bounds.rows[0] if bounds.rows else (None, 0)
        if not count or last is None:
            return
        res = await store.query(
            namespace,
            f"MATCH (n:{label}) WHERE id(n) > $after AND id(n) <= $last {body}",
            {"after": after, "last": int(last)},
            read_only=True,
        )
        if res.rows:
            yield res.rows
        after = int(last)


_P = "n {.*, embedding: null}"
_REFS = "collect(DISTINCT [x.uuid, x.name_key, x.name, properties(xr)])"
_ENTITY = f"RETURN id(n), {_P}"
_RELATION = (
    f"MATCH (n)-[r:{R_RELATES}]->(b:{ENTITY}) "
    "RETURN id(n), n.name, n.entity_type, b.name, b.entity_type, properties(r), n.uuid, b.uuid"
)
_EVENT = f"OPTIONAL MATCH (n)-[xr:{X_INVOLVES}]->(x:{ENTITY}) RETURN id(n), {_P}, {_REFS}"
_FACT = _EVENT
_CAUSAL_NODE = (
    f"OPTIONAL MATCH (n)-[xr:{X_AFFECTS}]->(x:{ENTITY}) WITH n, {_REFS} AS xs "
    f"OPTIONAL MATCH (n)-[vr:{X_REFERS_TO}]->(v:{EVENT}) "
    f"RETURN id(n), {_P}, xs, collect(DISTINCT [v.uuid, v.description, properties(vr)])"
)
_CAUSAL_LINK = (
    f"MATCH (n)-[r:{R_CAUSES}]->(b:{CAUSAL}) "
    "RETURN id(n), n.description, b.description, properties(r), n.uuid, b.uuid"
)
_SOLUTION = _CAUSAL_LINK.replace(R_CAUSES, R_SOLVED_BY)
_CONCEPT = (
    f"OPTIONAL MATCH (n)-[xr:{X_REPRESENTS}]->(x:{ENTITY}) WITH n, {_REFS} AS xs "
    f"OPTIONAL MATCH (n)-[s:{R_SIMILAR}]->(o:{CONCEPT}) "
    f"RETURN id(n), {_P}, xs, collect(DISTINCT [o.uuid, o.name, s.score])"
)
_MEMORY = (
    f"OPTIONAL MATCH (n)-[:{R_ABOUT}]->(c:{CONCEPT}) "
    f"RETURN id(n), {_P}, collect(DISTINCT [c.uuid, c.name])"
)
_LATE_EDGES: Sequence[tuple[str, str]] = ((EVENT, R_BEFORE), (CONCEPT, R_SIMILAR))
"""Edges a Cypher dump writes after every node: derived `T_BEFORE` chains, and
`S_SIMILAR_TO` links (a concept can be exported before the one it points to)."""


@dataclass(frozen=True)
class Exported:
    """A record and, for a Cypher dump, what a bare database needs to write it as stored:
    `node` or `edge` (its stored properties) and the uuids of its ends and links."""

    record: Record
    db: dict[str, Any]


@dataclass
class _Names:
    """Names shared by several nodes: references to those are written as uuids."""

    entity_keys: set[str] = field(default_factory=set[str])
    event_descriptions: set[str] = field(default_factory=set[str])

    def entities(self, refs: Any) -> tuple[list[str], list[str]]:
        """(record references, uuids) of `[uuid, name_key, name]` rows."""
        got = sorted(
            (str(u), str(n) if k not in self.entity_keys else str(u))
            for u, k, n, *_ in refs or ()
            if u is not None
        )
        return sorted({r for _, r in got}), sorted({u for u, _ in got})

    def events(self, refs: Any) -> tuple[list[str], list[str]]:
        got = sorted(
            (str(u), str(d) if d not in self.event_descriptions else str(u))
            for u, d, *_ in refs or ()
            if u is not None
        )
        return sorted({r for _, r in got}), sorted({u for u, _ in got})


async def _shared_names(store: FalkorStore, namespace: str) -> _Names:
    ents = await store.query(
        namespace,
        f"MATCH (e:{ENTITY}) WITH e.name_key AS k, count(e) AS c WHERE c > 1 RETURN k",
        read_only=True,
    )
    evs = await store.query(
        namespace,
        f"MATCH (v:{EVENT}) WITH v.description AS d, count(v) AS c WHERE c > 1 RETURN d",
        read_only=True,
    )
    return _Names({str(r[0]) for r in ents.rows}, {str(r[0]) for r in evs.rows})


def _links_stored(**by_type: Any) -> dict[str, dict[str, dict[str, Any]]]:
    """`links_stored` of a record: per link type, the properties of the links that have
    any, by the linked node's uuid (the last item of each collected row)."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for rel, refs in by_type.items():
        got = {str(r[0]): dict(r[-1]) for r in refs or () if r[0] is not None and r[-1]}
        if got:
            out[rel] = got
    return out


def _with_links(db: dict[str, Any], links: dict[str, dict[str, dict[str, Any]]]) -> dict[str, Any]:
    """A dump statement's `db` with `xp`: [link type, linked uuid, properties] per link
    that has properties (only when there is one)."""
    xp = [[rel, uid, p] for rel, by_uuid in links.items() for uid, p in by_uuid.items()]
    return {**db, "xp": xp} if xp else db


def _node(r: list[Any]) -> dict[str, Any]:
    return clean(dict(r[1]))


def _entity(r: list[Any], _: _Names) -> Exported:
    n = _node(r)
    rec = EntityRecord(
        name=n["name"],
        type=n.get("entity_type") or "entity",
        properties=load_properties(n.get("properties")),
        stored=split("entity", n),
    )
    return Exported(rec, {"node": n})


def _relation(r: list[Any], _: _Names) -> Exported:
    edge = dict(r[5] or {})
    rec = RelationRecord(
        source=r[1],
        source_type=r[2],
        target=r[3],
        target_type=r[4],
        type=edge.get("relationship_type") or "related_to",
        properties=load_properties(edge.get("properties")),
        valid_from=_ms(edge.get("valid_from")),
        valid_to=_ms(edge.get("valid_to")),
        stored=split("relation", edge),
    )
    return Exported(rec, {"edge": edge, "a": r[6], "b": r[7]})


def _event(r: list[Any], names: _Names) -> Exported:
    n = _node(r)
    refs, uuids = names.entities(r[2])
    rec = EventRecord(
        description=n["description"],
        occurred_at=from_ms(int(n["occurred_at"])),
        duration_ms=n.get("duration_ms"),
        entities=refs,
        links_stored=_links_stored(**{X_INVOLVES: r[2]}),
        stored=split("event", n),
    )
    return Exported(rec, _with_links({"node": n, "x": uuids}, rec.links_stored))


def _fact(r: list[Any], names: _Names) -> Exported:
    n = _node(r)
    _, uuids = names.entities(r[2])
    # The subject is written as a link only when the import would find that very entity
    # by the subject's name (its key, held by no other entity). A subject whose entity
    # was deleted stays text: naming it would create the entity again.
    key = n.get("subject_key") or normalize_name(str(n["subject"]))
    own = [
        x for x in r[2] or () if x[0] is not None and x[1] == key and key not in names.entity_keys
    ]
    refs, _ = names.entities([x for x in r[2] or () if x not in own])
    rec = FactRecord(
        subject=n["subject"],
        predicate=n["predicate"],
        object=n["object"],
        valid_from=_ms(n.get("valid_from")),
        valid_to=_ms(n.get("valid_to")),
        cardinality=card_of_row(n.get("cardinality")),
        entities=refs,
        link_subject=bool(own),
        links_stored=_links_stored(**{X_INVOLVES: r[2]}),
        stored=split("fact", n),
    )
    return Exported(rec, _with_links({"node": n, "x": uuids}, rec.links_stored))


def _causal_node(r: list[Any], names: _Names) -> Exported:
    n = _node(r)
    refs, uuids = names.entities(r[2])
    ev_refs, ev_uuids = names.events(r[3])
    rec = CausalNodeRecord(
        description=n["description"],
        node_type=CausalNodeType(n.get("node_type") or "event"),
        entities=refs,
        events=ev_refs,
        links_stored=_links_stored(**{X_AFFECTS: r[2], X_REFERS_TO: r[3]}),
        stored=split("causal_node", n),
    )
    return Exported(rec, _with_links({"node": n, "x": uuids, "v": ev_uuids}, rec.links_stored))


def _causal_link(r: list[Any], _: _Names) -> Exported:
    edge = dict(r[3] or {})
    conf = edge.get("confidence")
    rec = CausalLinkRecord(
        cause=r[1],
        effect=r[2],
        confidence=float(conf if conf is not None else 0.8),
        evidence=edge.get("evidence"),
        stored=split("causal_link", edge),
    )
    return Exported(rec, {"edge": edge, "a": r[4], "b": r[5]})


def _solution(r: list[Any], _: _Names) -> Exported:
    edge = dict(r[3] or {})
    rec = SolutionRecord(
        problem=r[1], solution=r[2], evidence=edge.get("evidence"), stored=split("solution", edge)
    )
    return Exported(rec, {"edge": edge, "a": r[4], "b": r[5]})


def _concept(r: list[Any], names: _Names) -> Exported:
    n = _node(r)
    refs, uuids = names.entities(r[2])
    similar = sorted((str(o[1]), float(o[2])) for o in r[3] or () if o[0] is not None)
    rec = ConceptRecord(
        name=n["name"],
        description=n.get("description"),
        entities=refs,
        similar=dict(similar),
        links_stored=_links_stored(**{X_REPRESENTS: r[2]}),
        stored=split("concept", n),
    )
    return Exported(rec, _with_links({"node": n, "x": uuids}, rec.links_stored))


def _memory(r: list[Any], _: _Names) -> Exported:
    n = _node(r)
    concepts = sorted((str(c[1]), str(c[0])) for c in r[2] or () if c[0] is not None)
    rec = MemoryRecord(
        content=n["content"],
        category=n.get("category") or "episodic",
        tags=[str(t) for t in n.get("tags") or ()],
        created_at=_ms(n.get("created_at")),
        source_id=n.get("source_id"),
        concepts=[c for c, _ in concepts],
        stored=split("memory", n),
    )
    return Exported(rec, {"node": n, "c": [u for _, u in concepts]})


RowFn = Callable[[list[Any], _Names], Exported]
_PLAN: Sequence[tuple[str, str, RowFn]] = (
    (ENTITY, _ENTITY, _entity),
    (ENTITY, _RELATION, _relation),
    (EVENT, _EVENT, _event),
    (FACT, _FACT, _fact),
    (CAUSAL, _CAUSAL_NODE, _causal_node),
    (CAUSAL, _CAUSAL_LINK, _causal_link),
    (CAUSAL, _SOLUTION, _solution),
    (CONCEPT, _CONCEPT, _concept),
    (MEMORY, _MEMORY, _memory),
)


def _uuid_of(row: list[Any]) -> str:
    """Which node a row is: its uuid, or for an edge row the uuid of the edge's start."""
    node = row[1]
    if isinstance(node, dict):
        return f"uuid {cast(dict[str, Any], node).get('uuid')}"
    return f"an edge from uuid {row[-2]}"


def _reason(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:3])
    if isinstance(exc, KeyError):
        return f"it has no {exc.args[0]!r} property"
    return str(exc)


async def iter_exported(
    store: FalkorStore, namespace: str, *, page: int = DEFAULT_PAGE
) -> AsyncIterator[Exported]:
    """Every record of a namespace with its stored form (see `iter_export`).

    Raises:
        StorageUnavailable: FalkorDB cannot be reached.
        ExportError: a node cannot be written as a record (export never leaves one out).
    """
    names = await _shared_names(store, namespace)
    for label, body, row_fn in _PLAN:
        async for rows in _pages(store, namespace, label, body, page):
            for row in rows:
                try:
                    yield row_fn(row, names)
                except (ValueError, KeyError, TypeError) as exc:
                    # A node written outside polyg's rules: an export that left it out
                    # would not be the namespace any more.
                    raise ExportError(
                        f"graph {namespace!r}: a {label} node ({_uuid_of(row)}) cannot be "
                        f"written as a record: {_reason(exc)}. Nothing was left out silently: "
                        "fix or delete that node (delete_node with its uuid), then export again."
                    ) from exc


async def iter_late_edges(
    store: FalkorStore, namespace: str, *, page: int = DEFAULT_PAGE
) -> AsyncIterator[tuple[str, str, str, str, dict[str, Any]]]:
    """The `T_BEFORE` and `S_SIMILAR_TO` edges as (label, type, from uuid, to uuid,
    properties); both ends have the label.

    `T_BEFORE` is derived (an import rebuilds each entity's chain from its events)
    and `S_SIMILAR_TO` is carried by concept records; a Cypher dump writes both for
    a bare database once every node is there.
    """
    for label, rel in _LATE_EDGES:
        body = f"MATCH (n)-[r:{rel}]->(b:{label}) RETURN id(n), n.uuid, b.uuid, properties(r)"
        async for rows in _pages(store, namespace, label, body, page):
            for row in rows:
                yield label, rel, str(row[1]), str(row[2]), dict(row[3] or {})


async def iter_export(
    store: FalkorStore, namespace: str, *, page: int = DEFAULT_PAGE
) -> AsyncIterator[Record]:
    """Every record of a namespace: entities, relations, events, facts, causal links,
    concepts, memories (in that order, so the stream can be imported as it is).

    Raises:
        StorageUnavailable: FalkorDB cannot be reached.
        ExportError: a node cannot be written as a record (export never leaves one out).
    """
    async for item in iter_exported(store, namespace, page=page):
        yield item.record


def record_json(record: Record) -> str:
    """One record as compact JSON (defaults left out, so lines stay short)."""
    data = record.model_dump(mode="json", exclude_defaults=True)
    return json.dumps({"kind": record.kind, **data}, ensure_ascii=False, separators=(",", ":"))


async def write_jsonl(records: AsyncIterator[Record], out: IO[str]) -> int:
    """Write records as JSONL; the number written."""
    n = 0
    async for rec in records:
        out.write(record_json(rec))
        out.write("\n")
        n += 1
    return n


async def write_json(records: AsyncIterator[Record], out: IO[str], namespace: str) -> int:
    """Write `{"format": "polyg-memory", "version": 1, "graph": ..., "records": [...]}`,
    one record per line, streaming."""
    out.write(
        '{"format": "polyg-memory", "version": 1, "graph": '
        + json.dumps(namespace)
        + ', "records": [\n'
    )
    n = 0
    async for rec in records:
        out.write(",\n" if n else "")
        out.write(record_json(rec))
        n += 1
    out.write("\n]}\n")
    return n
