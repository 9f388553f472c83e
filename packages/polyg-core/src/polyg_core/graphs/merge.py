"""Merging one entity into another on purpose.

Writes never merge entities by meaning; when a caller decides two entities are
one (a typo, a duplicate reported as `similar_existing`), `merge_entities` moves
every link of the source to the target and deletes the source. The target keeps
its own properties and gains those of the source it lacks; it keeps the source's
name in `merged_from` and one JSON entry per merge in `merge_history` (the
source's uuid, name, type, the property keys taken over, and when), so the
merge stays visible.

Each step is idempotent (MERGE), so a merge interrupted by a failure completes
when it is run again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from polyg_core.errors import InvalidInput
from polyg_core.graphs.base import iso_ms, now_ms
from polyg_core.graphs.orphans import remove_orphans
from polyg_core.graphs.temporal_queries import repair_chains
from polyg_core.storage.cypher import dump_properties, load_properties
from polyg_core.storage.schema import (
    CAUSAL,
    CONCEPT,
    ENTITY,
    EVENT,
    FACT,
    R_RELATES,
    X_AFFECTS,
    X_INVOLVES,
    X_REPRESENTS,
)
from polyg_core.storage.store import FalkorStore

_COPY_REL = (
    "ON CREATE SET n.relationship_type = r.relationship_type, n.properties = r.properties, "
    "n.created_at = r.created_at, n.created_at_iso = r.created_at_iso"
)
_MOVES = (
    # Relations, both directions; one between source and target would become a self-loop.
    f"MATCH (s:{ENTITY} {{uuid: $s}})-[r:{R_RELATES}]->(o:{ENTITY}) WHERE o.uuid <> $t "
    f"MATCH (t:{ENTITY} {{uuid: $t}}) MERGE (t)-[n:{R_RELATES} {{rel_key: r.rel_key}}]->(o) "
    f"{_COPY_REL} RETURN count(r)",
    f"MATCH (o:{ENTITY})-[r:{R_RELATES}]->(s:{ENTITY} {{uuid: $s}}) WHERE o.uuid <> $t "
    f"MATCH (t:{ENTITY} {{uuid: $t}}) MERGE (o)-[n:{R_RELATES} {{rel_key: r.rel_key}}]->(t) "
    f"{_COPY_REL} RETURN count(r)",
    *(
        f"MATCH (n:{label})-[:{rel}]->(s:{ENTITY} {{uuid: $s}}) "
        f"MATCH (t:{ENTITY} {{uuid: $t}}) MERGE (n)-[:{rel}]->(t) RETURN count(n)"
        for label, rel in (
            (CONCEPT, X_REPRESENTS),
            (EVENT, X_INVOLVES),
            (FACT, X_INVOLVES),
            (CAUSAL, X_AFFECTS),
        )
    ),
)
_EARLIEST = -(2**62)


@dataclass(frozen=True)
class MergeOutcome:
    """What a merge moved: links re-pointed from the source to the target."""

    moved: int


async def merge_entities(
    store: FalkorStore, namespace: str, source: str, target: str
) -> MergeOutcome:
    """Move every link of entity `source` (uuid) to entity `target` (uuid), delete `source`.

    The target keeps its name, type and properties, gains the source's properties it
    lacks, the source's name in `merged_from` and an entry in `merge_history`; its
    event chain is rebuilt with the source's events.

    Raises:
        InvalidInput: source and target are the same entity.
    """
    if source == target:
        raise InvalidInput("source and target are the same entity; nothing to merge")
    moved = 0
    for query in _MOVES:
        res = await store.query(namespace, query, {"s": source, "t": target})
        moved += int(res.scalar(0) or 0)
    now = now_ms()
    both = await store.query(
        namespace,
        f"MATCH (s:{ENTITY} {{uuid: $s}}) MATCH (t:{ENTITY} {{uuid: $t}}) "
        "RETURN s.name, s.entity_type, s.properties, t.properties",
        {"s": source, "t": target},
        read_only=True,
    )
    params: dict[str, Any] = {"s": source, "t": target, "now": now, "iso": iso_ms(now)}
    set_props = ""
    if both.rows:
        name, etype, s_raw, t_raw = both.rows[0]
        own, theirs = load_properties(t_raw), load_properties(s_raw)
        taken = sorted(k for k in theirs if k not in own)
        params["props"] = dump_properties({**theirs, **own})
        params["entry"] = json.dumps(
            {
                "uuid": source,
                "name": name,
                "entity_type": etype,
                "properties_taken": taken,
                "at": iso_ms(now),
            },
            sort_keys=True,
            ensure_ascii=False,
        )
        set_props = (
            "t.properties = $props, t.merge_history = coalesce(t.merge_history, []) + [$entry], "
        )
    await store.query(
        namespace,
        f"MATCH (s:{ENTITY} {{uuid: $s}}) MATCH (t:{ENTITY} {{uuid: $t}}) "
        f"SET {set_props}t.merged_from = coalesce(t.merged_from, []) + [s.name], "
        "t.updated_at = $now, t.updated_at_iso = $iso "
        "DETACH DELETE s",
        params,
    )
    # The source's events now involve the target: its whole chain is relinked, and the
    # edges of the source's old chain that no chain needs are removed.
    await repair_chains(store, namespace, [{"x": target, "t": _EARLIEST}])
    await remove_orphans(store, namespace)
    return MergeOutcome(moved=moved)
