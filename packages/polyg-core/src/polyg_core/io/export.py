"""Streaming export of a memory namespace as records.

Nodes are read in pages ordered by internal id (`id(n) > $after ... LIMIT`), so
a namespace of any size is exported with one page in memory at a time. The
records are those the importer reads: `export → import` into an empty
namespace reproduces the nodes, edges, properties and validity times (uuids
and record times are assigned anew; embeddings are recomputed on import).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from typing import IO, Any

from polyg_shared.timeutil import from_epoch_ms

from polyg_core.io.records import (
    CausalLinkRecord,
    ConceptRecord,
    EntityRecord,
    EventRecord,
    FactRecord,
    MemoryRecord,
    Record,
    RelationRecord,
)
from polyg_core.storage.cypher import load_properties
from polyg_core.storage.schema import (
    CAUSAL,
    CONCEPT,
    ENTITY,
    EVENT,
    FACT,
    MEMORY,
    R_ABOUT,
    R_CAUSES,
    R_RELATES,
    X_AFFECTS,
    X_INVOLVES,
    X_REFERS_TO,
    X_REPRESENTS,
)
from polyg_core.storage.store import FalkorStore

logger = logging.getLogger(__name__)

DEFAULT_PAGE = 1000
RowFn = Callable[[list[Any]], Record]


def _ms(value: Any) -> Any:
    return from_epoch_ms(int(value)) if value is not None else None


def _names(values: Any) -> list[str]:
    return sorted({str(v) for v in values or [] if v is not None})


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


_ENTITY = "RETURN id(n), n.name, n.entity_type, n.properties"
_RELATION = (
    f"MATCH (n)-[r:{R_RELATES}]->(b:{ENTITY}) "
    "RETURN id(n), n.name, n.entity_type, b.name, b.entity_type, r.relationship_type, r.properties"
)
_EVENT = (
    f"OPTIONAL MATCH (n)-[:{X_INVOLVES}]->(x:{ENTITY}) "
    "RETURN id(n), n.description, n.occurred_at, n.duration_ms, collect(x.name)"
)
_FACT = (
    f"OPTIONAL MATCH (n)-[:{X_INVOLVES}]->(x:{ENTITY}) "
    "RETURN id(n), n.subject, n.predicate, n.object, n.valid_from, n.valid_to, collect(x.name)"
)
_CAUSAL = (
    f"MATCH (n)-[r:{R_CAUSES}]->(b:{CAUSAL}) "
    f"OPTIONAL MATCH (n)-[:{X_AFFECTS}]->(x:{ENTITY}) "
    f"OPTIONAL MATCH (n)-[:{X_REFERS_TO}]->(v:{EVENT}) "
    "RETURN id(n), n.description, b.description, r.confidence, r.evidence, "
    "collect(DISTINCT x.name), collect(DISTINCT v.description)"
)
_CONCEPT = (
    f"OPTIONAL MATCH (n)-[:{X_REPRESENTS}]->(x:{ENTITY}) "
    "RETURN id(n), n.name, n.description, collect(x.name)"
)
_MEMORY = (
    f"OPTIONAL MATCH (n)-[:{R_ABOUT}]->(c:{CONCEPT}) "
    "RETURN id(n), n.content, n.category, n.tags, n.created_at, n.source_id, collect(c.name)"
)


def _entity(r: list[Any]) -> Record:
    return EntityRecord(name=r[1], type=r[2] or "entity", properties=load_properties(r[3]))


def _relation(r: list[Any]) -> Record:
    return RelationRecord(
        source=r[1],
        source_type=r[2],
        target=r[3],
        target_type=r[4],
        type=r[5],
        properties=load_properties(r[6]),
    )


def _event(r: list[Any]) -> Record:
    return EventRecord(
        description=r[1], occurred_at=_ms(r[2]), duration_ms=r[3], entities=_names(r[4])
    )


def _fact(r: list[Any]) -> Record:
    return FactRecord(
        subject=r[1],
        predicate=r[2],
        object=r[3],
        valid_from=_ms(r[4]),
        valid_to=_ms(r[5]),
        entities=[n for n in _names(r[6]) if n != r[1]],
    )


def _causal(r: list[Any]) -> Record:
    return CausalLinkRecord(
        cause=r[1],
        effect=r[2],
        confidence=float(r[3] if r[3] is not None else 0.8),
        evidence=r[4],
        entities=_names(r[5]),
        events=_names(r[6]),
    )


def _concept(r: list[Any]) -> Record:
    return ConceptRecord(name=r[1], description=r[2], entities=_names(r[3]))


def _memory(r: list[Any]) -> Record:
    return MemoryRecord(
        content=r[1],
        category=r[2] or "episodic",
        tags=[str(t) for t in r[3] or []],
        created_at=_ms(r[4]),
        source_id=r[5],
        concepts=_names(r[6]),
    )


_PLAN: Sequence[tuple[str, str, RowFn]] = (
    (ENTITY, _ENTITY, _entity),
    (ENTITY, _RELATION, _relation),
    (EVENT, _EVENT, _event),
    (FACT, _FACT, _fact),
    (CAUSAL, _CAUSAL, _causal),
    (CONCEPT, _CONCEPT, _concept),
    (MEMORY, _MEMORY, _memory),
)


async def iter_export(
    store: FalkorStore, namespace: str, *, page: int = DEFAULT_PAGE
) -> AsyncIterator[Record]:
    """Every record of a namespace: entities, relations, events, facts, causal links,
    concepts, memories (in that order, so the stream can be imported as it is).

    Raises:
        StorageUnavailable: FalkorDB cannot be reached.
    """
    for label, body, row_fn in _PLAN:
        async for rows in _pages(store, namespace, label, body, page):
            for row in rows:
                try:
                    yield row_fn(row)
                except ValueError as exc:  # a node written by hand outside polyg's rules
                    logger.warning("skipped a %s node that is not a valid record: %s", label, exc)


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
