"""The entity graph: people, services, projects... and typed relations between them.

Nodes are `E_Entity {uuid, name, name_key, entity_type, properties, created_at,
updated_at, embedding}`; edges are `E_RELATES {relationship_type, rel_key,
properties, created_at}`. Entities are deduplicated on (normalised name, type),
so "auth service", "AuthService" and "auth-service" of one type are one node.
Free-form properties are one JSON string (`storage/cypher.dump_properties`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from polyg_shared import BfsNode, BfsResult, Entity, EntityRelation

from polyg_core.errors import InvalidInput, NodeNotFound
from polyg_core.graphs.base import (
    check_properties,
    check_text,
    create_then_merge,
    dt,
    embed_texts,
    iso_ms,
    name_key,
    new_uuid,
    now_ms,
    prepare,
    type_key,
)
from polyg_core.graphs.entity_refs import ensure_entity_uuids
from polyg_core.graphs.merge import merge_entities
from polyg_core.graphs.orphans import remove_orphans
from polyg_core.graphs.relation_time import (
    SET_DATES,
    RelationDates,
    dates_params,
    relation_dates,
)
from polyg_core.graphs.temporal_queries import UNCHAIN_ENTITY, TimeInput
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.resolve import ENTITY_NAMES, NameResolver, Resolved
from polyg_core.storage.cypher import clean, dump_properties, load_properties, props
from polyg_core.storage.schema import ENTITY, FACT, R_RELATES, X_INVOLVES
from polyg_core.storage.store import META_PRESENT, FalkorStore
from polyg_core.text.names import ngram_keys

logger = logging.getLogger(__name__)

# Deleting an entity leaves nothing that still speaks of it as present: its
# T_BEFORE chain goes (the edges no other entity's chain needs), its relations go with it (at
# either end), and the facts it takes part in, as subject (X_INVOLVES) or as object
# ("Bob reports_to Alice" when Alice goes), stop being current (valid_to = now; a fact valid only from a later time gets an
# empty interval) or, when asked, are deleted. One query, so nothing is half done.
_DELETE_ENTITY = f"""{UNCHAIN_ENTITY}OPTIONAL MATCH (f:{FACT})-[:{X_INVOLVES}]->(x)
WITH x, collect(DISTINCT f) AS involving
OPTIONAL MATCH (o:{FACT}) WHERE o.object_key = x.name_key
WITH x, involving, collect(DISTINCT o) AS naming
WITH x, involving + [o IN naming WHERE NOT o IN involving] AS facts
WITH x, facts, [g IN facts WHERE g.valid_to IS NULL OR g.valid_to > $now] AS current
{{facts}}
DETACH DELETE x
RETURN size(current)
"""
_END_FACTS = """FOREACH (f IN current |
    SET f.valid_to = CASE WHEN f.valid_from > $now THEN f.valid_from ELSE $now END,
        f.valid_to_iso = CASE WHEN f.valid_from > $now THEN f.valid_from_iso ELSE $iso END,
        f.invalidated_at = $now)"""
_DROP_FACTS = "FOREACH (f IN facts | DETACH DELETE f)"


async def delete_entity(
    store: FalkorStore, namespace: str, uuid: str, *, delete_facts: bool = False
) -> tuple[bool, int]:
    """Delete the entity with this uuid (the rules above), then the orphans it leaves.

    Returns:
        Whether an entity was deleted, and how many current facts were ended or deleted.
    """
    now = now_ms()
    res = await store.query(
        namespace,
        _DELETE_ENTITY.replace("{facts}", _DROP_FACTS if delete_facts else _END_FACTS),
        {"u": uuid, "now": now, "iso": iso_ms(now)},
    )
    deleted = res.nodes_deleted > 0
    if deleted:
        await remove_orphans(store, namespace)
    return deleted, int(res.rows[0][0]) if res.rows else 0


Mode = Literal["merge", "replace"]
Direction = Literal["out", "in", "both"]
MAX_DEPTH = 10
ORIGIN_ENSURED = "ensure"
"""`origin` of entities created implicitly by `ensure` (cross-link targets)."""

_REL_RETURN = (
    "a.uuid, a.name, b.uuid, b.name, r.relationship_type, r.properties, r.created_at, "
    "r.valid_from, r.valid_to"
)


# Relations between two entities given by uuid, one per (source, target, relation key);
# rows from `relation_row`.
WRITE_RELATIONS = f"""
UNWIND $rows AS row
MATCH (a:{ENTITY} {{uuid: row.a}})
MATCH (b:{ENTITY} {{uuid: row.b}})
MERGE (a)-[r:{R_RELATES} {{rel_key: row.rk}}]->(b)
ON CREATE SET r.relationship_type = row.rt, r.properties = row.p,
    r.created_at = $now, r.created_at_iso = $iso
ON MATCH SET r.properties = CASE WHEN row.has THEN row.p ELSE r.properties END
SET {SET_DATES.format(p="row.")}
RETURN {_REL_RETURN}
"""


def relation_row(
    source: str,
    target: str,
    relation: str,
    properties: Mapping[str, Any] | None,
    dates: RelationDates = (None, None),
) -> dict[str, Any]:
    """A `WRITE_RELATIONS` row: the ends' uuids, the relation as given and its key, the
    properties (`has`: given, so they replace the stored ones) and the dates (given
    dates replace the stored ones, see `graphs/relation_time.py`)."""
    return {
        "a": source,
        "b": target,
        "rk": name_key(relation),
        "rt": relation,
        "p": dump_properties(dict(properties) if properties is not None else None),
        "has": properties is not None,
        **dates_params(dates),
    }


def to_entity(node: Mapping[str, Any]) -> Entity:
    """The `Entity` model of a stored node (as returned with `props()`)."""
    return Entity(
        uuid=str(node["uuid"]),
        name=str(node["name"]),
        entity_type=str(node.get("entity_type") or "entity"),
        properties=load_properties(node.get("properties")),
        created_at=dt(node.get("created_at")),
        updated_at=dt(node.get("updated_at") or node.get("created_at")),
    )


def _relation(row: Sequence[Any]) -> EntityRelation:
    src, src_name, dst, dst_name, rel_type, rel_props, created, vf, vt = row
    return EntityRelation(
        source=str(src),
        target=str(dst),
        relationship_type=str(rel_type),
        properties=load_properties(rel_props),
        created_at=dt(created),
        source_name=src_name,
        target_name=dst_name,
        valid_from=dt(vf) if vf is not None else None,
        valid_to=dt(vt) if vt is not None else None,
    )


def _oldest_first(rows: Sequence[Sequence[Any]], limit: int) -> list[EntityRelation]:
    rels = [_relation(r) for r in rows]
    rels.sort(key=lambda r: (r.created_at, r.relationship_type))
    return rels[: max(0, limit)]


def _merged(old: Any, new: dict[str, Any] | None, mode: Mode) -> dict[str, Any] | None:
    if new is None:
        return None
    return new if mode == "replace" else {**load_properties(old), **new}


def _check_mode(mode: str) -> Mode:
    if mode not in ("merge", "replace"):
        raise InvalidInput(f"mode must be 'merge' or 'replace', got {mode!r}")
    return mode  # type: ignore[return-value]


# Typed entity identity: one node per (normalised name, type). Rows carry what the
# caller decided from what it read: `touch` (new properties to write), `unmark`
# (named explicitly now), `origin` and `vec` for a node this query creates.
MERGE_ENTITIES = f"""
UNWIND $rows AS row
MERGE (n:{ENTITY} {{name_key: row.key, entity_type: row.type}})
ON CREATE SET n.uuid = row.uuid, n.name = row.name, n.properties = row.props,
    n.created_at = $now, n.updated_at = $now, n.created_at_iso = $iso,
    n.updated_at_iso = $iso, n.origin = row.origin,
    n.embedding = CASE WHEN row.vec IS NULL THEN NULL ELSE vecf32(row.vec) END,
    n += coalesce(row.s, {{}})
WITH n, row, n.uuid = row.uuid AND NOT coalesce(row.exists, false) AS created
FOREACH (_ IN CASE WHEN row.touch AND NOT created THEN [1] ELSE [] END |
    SET n.properties = row.props, n.updated_at = $now, n.updated_at_iso = $iso)
FOREACH (_ IN CASE WHEN row.unmark AND NOT created THEN [1] ELSE [] END |
    SET n.origin = NULL)
RETURN row.i, created, {props("n")}
"""

# The entities the caller read as missing, each created whole in one CREATE. A MERGE
# with ON CREATE SET writes a node twice (created with its keys, then set), so FalkorDB
# indexes it twice; a CREATE with every property indexes it once. `s`: the exact stored
# properties of an export's node (an import), its standard ones in the CREATE and any
# other (`x`, none for polyg's own exports) set after. A row whose entity another
# writer created since the caller's read is left out, and written by `MERGE_ENTITIES`.
CREATE_ENTITIES = f"""
UNWIND $rows AS row
OPTIONAL MATCH (e:{ENTITY} {{name_key: row.key, entity_type: row.type}})
WITH row, e WHERE e IS NULL
CREATE (n:{ENTITY} {{
    name_key: CASE WHEN row.s IS NULL THEN row.key ELSE row.s.name_key END,
    entity_type: CASE WHEN row.s IS NULL THEN row.type ELSE row.s.entity_type END,
    uuid: row.uuid,
    name: CASE WHEN row.s IS NULL THEN row.name ELSE row.s.name END,
    properties: CASE WHEN row.s IS NULL THEN row.props ELSE row.s.properties END,
    created_at: CASE WHEN row.s IS NULL THEN $now ELSE row.s.created_at END,
    updated_at: CASE WHEN row.s IS NULL THEN $now ELSE row.s.updated_at END,
    created_at_iso: CASE WHEN row.s IS NULL THEN $iso ELSE row.s.created_at_iso END,
    updated_at_iso: CASE WHEN row.s IS NULL THEN $iso ELSE row.s.updated_at_iso END,
    origin: CASE WHEN row.s IS NULL THEN row.origin ELSE row.s.origin END,
    embedding: CASE WHEN row.vec IS NULL THEN NULL ELSE vecf32(row.vec) END
}})
FOREACH (_ IN CASE WHEN size(keys(row.x)) > 0 THEN [1] ELSE [] END | SET n += row.x)
RETURN row.i, true, {props("n")}
"""
_CREATED_KEYS = frozenset(
    {
        "uuid",
        "name_key",
        "entity_type",
        "name",
        "properties",
        "created_at",
        "updated_at",
        "created_at_iso",
        "updated_at_iso",
        "origin",
    }
)
"""The properties `CREATE_ENTITIES` writes by name (the embedding aside)."""


def entity_row(
    i: int,
    name: str,
    etype: str,
    given: dict[str, Any] | None,
    mode: Mode = "merge",
    *,
    exists: bool,
    old_props: Any = None,
    old_origin: Any = None,
    origin: str | None = None,
    vec: list[float] | None = None,
    stored: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One row of `MERGE_ENTITIES` for a checked name and type key, from what was read of
    the entity of that (name_key, type) (`exists`, its properties JSON and origin).

    `stored`: the properties a created node is written with instead of the ones the
    graph would give it (an import restoring an export's node; a None value removes
    the property), its `uuid` included."""
    merged = _merged(old_props, given, mode) if exists else given
    props_json = dump_properties(merged)
    uid = stored.get("uuid") if stored else None
    return {
        "i": i,
        "key": name_key(name),
        "type": etype,
        "name": name,
        "uuid": uid if isinstance(uid, str) and uid else new_uuid(),
        "s": {**dict.fromkeys(_CREATED_KEYS), **stored} if stored else None,
        "x": {k: v for k, v in stored.items() if k not in _CREATED_KEYS} if stored else {},
        # A stored uuid is the same on a second import: only the read tells created apart.
        "exists": exists,
        "props": props_json,
        # Existing nodes are written only when something changes: every write to a
        # vector-indexed node re-indexes it, and FalkorDB leaves the old vector behind
        # as a stale entry (see storage/vector.py callers).
        "touch": given is not None and props_json != (old_props or "{}"),
        # An entity named explicitly is no longer an implicit cross-link target.
        "unmark": origin is None and old_origin is not None,
        "origin": origin,
        # If an existing node vanishes between the read and this write it is re-created
        # without a vector (found by name, not by k-NN).
        "vec": vec,
    }


async def merge_entity_rows(
    store: FalkorStore, namespace: str, rows: Sequence[Mapping[str, Any]]
) -> dict[int, tuple[Entity, bool]]:
    """Write entity rows in at most two queries; row index to (entity, created).

    Rows the caller read as missing (`exists` false) are created whole
    (`CREATE_ENTITIES`, one index write per node); the others, and any a concurrent
    writer created since the read, are merged (`MERGE_ENTITIES`)."""
    if not rows:
        return {}
    now = now_ms()
    new = [r for r in rows if not r.get("exists", False)]
    return await create_then_merge(
        store,
        namespace,
        rows,
        new,
        (CREATE_ENTITIES, MERGE_ENTITIES),
        {"now": now, "iso": iso_ms(now)},
        lambda r: (int(r[0]), to_entity(clean(r[2])), bool(r[1])),
    )


async def write_relations(
    store: FalkorStore, namespace: str, rows: Sequence[dict[str, Any]]
) -> tuple[list[list[Any]], int]:
    """Write `relation_row` rows (one per source, target and relation key) in one query
    (`WRITE_RELATIONS`): the `_REL_RETURN` row of each relation whose ends exist, and
    how many relations were created."""
    if not rows:
        return [], 0
    now = now_ms()
    res = await store.query(
        namespace, WRITE_RELATIONS, {"rows": list(rows), "now": now, "iso": iso_ms(now)}
    )
    return res.rows, res.relationships_created


@dataclass
class EntityGraph:
    """Create, read, update, delete, link and walk entities of a namespace.

    Args:
        store: the FalkorDB store.
        embedder: embeds entity names (for k-NN and fuzzy name resolution).
        resolver: resolves names and uuids to entities.
    """

    store: FalkorStore
    embedder: Embedder
    resolver: NameResolver

    # -- writes -------------------------------------------------------------------------------

    async def add(
        self,
        namespace: str,
        name: str,
        entity_type: str = "entity",
        properties: Mapping[str, Any] | None = None,
        mode: Mode = "merge",
    ) -> tuple[Entity, bool]:
        """Create an entity, or update the one with the same normalised name and type.

        An existing entity keeps its name; given properties are merged into its own
        (`mode="merge"`) or replace them (`mode="replace"`).

        Returns:
            The entity and True when it was created, False when it already existed.

        Raises:
            InvalidInput: blank or too long name/type, or malformed properties.
            EmbeddingMismatch: the namespace uses another embedding model.
        """
        results = await self.add_many(namespace, [(name, entity_type, properties)], mode=mode)
        return results[0]

    async def add_many(
        self,
        namespace: str,
        items: Sequence[tuple[str, str, Mapping[str, Any] | None]],
        mode: Mode = "merge",
        *,
        origin: str | None = None,
        stored: Sequence[Mapping[str, Any] | None] | None = None,
        unmark: bool = True,
    ) -> list[tuple[Entity, bool]]:
        """Create or update many entities in one query (names of new ones embedded in one batch).

        Items with the same normalised name and type are one entity; only its first
        occurrence reports `created=True`, later properties merge over earlier ones.
        `stored`, one per item, gives the exact properties a node this call creates is
        written with (an import restoring an export's node, in the same write); an
        entity that exists already is left as the merge rules say. `unmark=False`
        leaves an implied entity (`origin`) implied: the ends of a relation are not
        entities named on their own.

        Returns:
            One (entity, created) pair per item, in input order.

        Raises:
            InvalidInput: a blank or too long name/type, or malformed properties.
            EmbeddingMismatch: the namespace uses another embedding model.
        """
        mode = _check_mode(mode)
        if not items:
            return []
        # Rows are deduplicated here: FalkorDB's MERGE inside UNWIND does not see
        # nodes created by earlier rows of the same query.
        rows: dict[tuple[str, str], dict[str, Any]] = {}
        slots: list[tuple[tuple[str, str], bool]] = []
        exact: dict[tuple[str, str], Mapping[str, Any]] = {}
        for n, (raw_name, raw_type, raw_props) in enumerate(items):
            name = check_text(raw_name, "entity name")
            etype = type_key(raw_type or "entity")
            given = check_properties(raw_props) if raw_props is not None else None
            key = (name_key(name), etype)
            if key in rows:
                row = rows[key]
                if given is not None:
                    row["given"] = given if mode == "replace" else {**(row["given"] or {}), **given}
                slots.append((key, False))
                continue
            rows[key] = {"key": key[0], "type": etype, "name": name, "given": given}
            slots.append((key, True))
            given_stored = stored[n] if stored is not None else None
            if given_stored:
                exact[key] = given_stored
        meta_present, existing = await self._existing(namespace, list(rows))
        await prepare(self.store, namespace, self.embedder, meta_present=meta_present)
        missing = [k for k in rows if k not in existing]
        vectors = await embed_texts(self.embedder, [rows[k]["name"] for k in missing])
        vec_of = dict(zip(missing, vectors, strict=True))
        params_rows: list[dict[str, Any]] = []
        for i, (key, row) in enumerate(rows.items()):
            old_props, old_origin = existing.get(key, (None, None))
            params_rows.append(
                entity_row(
                    i,
                    row["name"],
                    row["type"],
                    row["given"],
                    mode,
                    exists=key in existing,
                    old_props=old_props,
                    old_origin=old_origin if unmark else None,
                    origin=origin,
                    vec=vec_of.get(key),
                    stored=exact.get(key),
                )
            )
        by_index = await merge_entity_rows(self.store, namespace, params_rows)
        index_of = {key: i for i, key in enumerate(rows)}
        out: list[tuple[Entity, bool]] = []
        for key, first in slots:
            entity, created = by_index[index_of[key]]
            out.append((entity, created and first))
        return out

    async def _existing(
        self, namespace: str, keys: list[tuple[str, str]]
    ) -> tuple[bool, dict[tuple[str, str], tuple[Any, Any]]]:
        """Whether the namespace's metadata node exists (`prepare`'s check, read in the
        same query), and (properties JSON, origin) of the entities that exist, by
        (name_key, type)."""
        res = await self.store.query(
            namespace,
            f"{META_PRESENT} UNWIND $keys AS k "
            f"OPTIONAL MATCH (n:{ENTITY} {{name_key: k[0], entity_type: k[1]}}) "
            "RETURN meta_present, k[0], k[1], n IS NOT NULL, n.properties, n.origin",
            {"keys": [list(k) for k in keys]},
            read_only=True,
        )
        meta_present = bool(res.rows and res.rows[0][0])
        return meta_present, {
            (str(k), str(t)): (p, o) for _, k, t, found, p, o in res.rows if found
        }

    async def update(
        self,
        namespace: str,
        name_or_uuid: str,
        *,
        properties: Mapping[str, Any] | None = None,
        mode: Mode = "merge",
        new_name: str | None = None,
        entity_type: str | None = None,
    ) -> Entity:
        """Change an entity's properties, name or type.

        Args:
            namespace: the graph.
            name_or_uuid: the entity to change: its uuid, exact or normalised name. A
                write never picks an entity by meaning (`payments-db-secondary` is not
                `payments-db-primary`); a name that matches none raises with the closest.
            properties: merged into the entity's properties, or replacing them with
                `mode="replace"`; None leaves them as they are.
            mode: "merge" or "replace".
            new_name: renames the entity (and re-embeds its name).
            entity_type: the entity's new type.

        Raises:
            NodeNotFound: no such entity (with the closest names).
            AmbiguousName: the name matches several entities.
            InvalidInput: another entity has the new name already (of any type: a
                rename never makes two entities of one name), or the new type and
                the name belong to another entity.
        """
        mode = _check_mode(mode)
        current = await self._resolve(namespace, name_or_uuid, exact=True)
        node = current.properties
        name = check_text(new_name, "new name") if new_name is not None else str(node["name"])
        etype = type_key(entity_type) if entity_type is not None else str(node["entity_type"])
        key = name_key(name)
        given = check_properties(properties) if properties is not None else None
        merged = _merged(node.get("properties"), given, mode)
        params: dict[str, Any] = {
            "u": current.uuid,
            "name": name,
            "key": key,
            "type": etype,
            "props": dump_properties(merged) if merged is not None else node.get("properties"),
            "now": now_ms(),
        }
        params["iso"] = iso_ms(params["now"])
        # A new name may not be another entity's, whatever its type; a new type alone
        # may not meet an entity of the same name and that type (the dedup key).
        params["renamed"] = key != node.get("name_key")
        set_vec = ""
        if name != node["name"]:
            params["vec"] = (await embed_texts(self.embedder, [name]))[0]
            set_vec = ", n.embedding = vecf32($vec)"
        await prepare(self.store, namespace, self.embedder)
        res = await self.store.query(
            namespace,
            f"MATCH (n:{ENTITY} {{uuid: $u}}) "
            f"OPTIONAL MATCH (o:{ENTITY} {{name_key: $key}}) "
            "WHERE o.uuid <> $u AND ($renamed OR o.entity_type = $type) "
            "WITH n, o WHERE o IS NULL "
            "SET n.name = $name, n.name_key = $key, n.entity_type = $type, "
            f"n.properties = $props, n.updated_at = $now, n.updated_at_iso = $iso{set_vec} "
            f"RETURN {props('n')}",
            params,
        )
        if res.rows:
            return to_entity(clean(res.rows[0][0]))
        other = await self.store.query(
            namespace,
            f"MATCH (o:{ENTITY} {{name_key: $key}}) "
            "WHERE o.uuid <> $u AND ($renamed OR o.entity_type = $type) "
            "RETURN o.uuid, o.name, o.entity_type LIMIT 1",
            {"key": key, "type": etype, "u": current.uuid, "renamed": params["renamed"]},
            read_only=True,
        )
        if other.rows:
            uuid, other_name, other_type = other.rows[0]
            raise InvalidInput(
                f"an entity {other_name!r} of type {other_type!r} already exists (uuid {uuid}); "
                "choose another name, update that entity instead, or merge the two on "
                "purpose with merge_entities"
            )
        raise NodeNotFound("entity", name_or_uuid)

    async def delete(
        self, namespace: str, name_or_uuid: str, *, delete_facts: bool = False
    ) -> bool:
        """Delete an entity with its relations, cross-links and `T_BEFORE` chain.

        Only exact, normalised or uuid matches are deleted (never a fuzzy guess). The
        facts involving it stop being current, or are deleted with `delete_facts`;
        implicit nodes left without links are removed.

        Returns:
            True when an entity was deleted, False when none matched.

        Raises:
            AmbiguousName: the name matches several entities; pass the uuid.
        """
        found = await self.resolver.find(namespace, ENTITY_NAMES, name_or_uuid, fuzzy=False)
        if found is None:
            return False
        deleted, _ = await delete_entity(
            self.store, namespace, found.uuid, delete_facts=delete_facts
        )
        return deleted

    async def merge(self, namespace: str, source: str, target: str) -> tuple[Entity, list[str]]:
        """Merge entity `source` into `target` on purpose (see `graphs/merge.py`).

        Both are named exactly (uuid, exact or normalised name): a merge never guesses.

        Returns:
            The target entity, and the names it now keeps in `merged_from`.

        Raises:
            NodeNotFound: an entity does not exist (with the closest names).
            AmbiguousName: a name matches several entities; pass the uuid.
            InvalidInput: both name the same entity.
        """
        a = await self._resolve(namespace, source, exact=True)
        b = await self._resolve(namespace, target, exact=True)
        await merge_entities(self.store, namespace, a.uuid, b.uuid)
        res = await self.store.query(
            namespace,
            f"MATCH (n:{ENTITY} {{uuid: $u}}) RETURN {props('n')}, n.merged_from",
            {"u": b.uuid},
            read_only=True,
        )
        if not res.rows:  # the target was deleted while merging
            raise NodeNotFound("entity", target)
        node, merged_from = res.rows[0]
        return to_entity(clean(node)), [str(n) for n in merged_from or ()]

    async def link(
        self,
        namespace: str,
        source: str,
        target: str,
        relationship_type: str,
        properties: Mapping[str, Any] | None = None,
        *,
        valid_from: TimeInput | None = None,
        valid_to: TimeInput | None = None,
    ) -> EntityRelation:
        """Relate two entities; linking the same pair with the same type again is a no-op.

        Relationship types compare like names ("owns" = "OWNS"). Properties given on
        a repeated link replace the relation's properties. `valid_from` / `valid_to`
        date the relation (see `graphs/relation_time.py`); dates given on a repeated
        link replace those stored, dates not given keep them.

        Raises:
            NodeNotFound: an end does not exist (with the closest names).
            AmbiguousName: an end's name matches several entities.
            InvalidInput: both ends are the same entity, a blank relationship type, or
                bad dates (`valid_to` not after `valid_from`).
        """
        rel = check_text(relationship_type, "relationship type")
        dates = relation_dates(valid_from, valid_to)
        given = check_properties(properties) if properties is not None else None
        # The ends of a new relation are named exactly: a typo is refused with the
        # closest names rather than linked to whichever entity it resembles.
        a = await self._resolve(namespace, source, exact=True)
        b = await self._resolve(namespace, target, exact=True)
        if a.uuid == b.uuid:
            raise InvalidInput(
                f"{source!r} and {target!r} are the same entity ({a.name!r}); an entity "
                "cannot be related to itself — link two different entities"
            )
        row = relation_row(a.uuid, b.uuid, rel, given, dates)
        rows, _ = await write_relations(self.store, namespace, [row])  # a batch of one
        if not rows:  # an end was deleted between resolving and linking
            raise NodeNotFound("entity", f"{source} -> {target}")
        return _relation(rows[0])

    async def link_many(
        self,
        namespace: str,
        items: Sequence[tuple[str, str, str, Mapping[str, Any] | None]],
        dates: Sequence[RelationDates] | None = None,
    ) -> int:
        """Relate many (source uuid, target uuid, relationship type, properties) in one query.

        For bulk writes (import, benchmarks): ends are uuids, not names; pairs whose
        ends do not exist are skipped; self-links are refused. Like `link`, relating a
        pair again with the same type (compared like names) keeps the first spelling
        and replaces the relation's properties when new ones are given. `dates`, one
        per item when given, date the relations as `link` does.

        Returns:
            How many relations were created.

        Raises:
            InvalidInput: a self-link, a blank relationship type or bad properties.
        """
        rows: dict[tuple[str, str, str], dict[str, Any]] = {}
        if dates is not None and len(dates) != len(items):
            raise InvalidInput("give one (valid_from, valid_to) per relation, or none")
        for i, (src, dst, rel_type, rel_props) in enumerate(items):
            if src == dst:
                raise InvalidInput(f"an entity cannot be related to itself (uuid {src})")
            rel = check_text(rel_type, "relationship type")
            given = check_properties(rel_props) if rel_props is not None else None
            row = relation_row(
                src, dst, rel, given, dates[i] if dates is not None else (None, None)
            )
            old = rows.setdefault((src, dst, row["rk"]), row)
            if old is not row:
                if given is not None:
                    old["p"], old["has"] = row["p"], True
                old.update({k: v for k, v in row.items() if k.startswith("v") and v is not None})
        _, created = await write_relations(self.store, namespace, list(rows.values()))
        return created

    async def unlink(
        self, namespace: str, source: str, target: str, relationship_type: str | None = None
    ) -> int:
        """Remove relations from `source` to `target` (of one type, or all); the count removed.

        Ends are named exactly (uuid, exact or normalised name): a delete never guesses.

        Raises:
            NodeNotFound: an end does not exist (with the closest names).
            AmbiguousName: an end's name matches several entities.
        """
        a = await self._resolve(namespace, source, exact=True)
        b = await self._resolve(namespace, target, exact=True)
        cond = " WHERE r.rel_key = $rk" if relationship_type else ""
        res = await self.store.query(
            namespace,
            f"MATCH (:{ENTITY} {{uuid: $a}})-[r:{R_RELATES}]->(:{ENTITY} {{uuid: $b}}){cond} "
            "DELETE r",
            {"a": a.uuid, "b": b.uuid, "rk": name_key(relationship_type or "")},
        )
        return res.relationships_deleted

    async def ensure(
        self, namespace: str, names: Iterable[str], *, created: dict[str, str] | None = None
    ) -> dict[str, str]:
        """Map each name to an existing entity's uuid, creating entities for unknown names.

        The rule of every write (`graphs/entity_refs.py`): uuid, exact or normalised
        name, never by meaning; new entities have type "entity" and are added to
        `created` (uuid to name) when given.

        Raises:
            InvalidInput: a blank or too long name.
            AmbiguousName: a name answers to several entities (give the uuid).
        """
        wanted = list(dict.fromkeys(names))
        for raw in wanted:
            check_text(raw, "entity name")
        got = await ensure_entity_uuids(
            self.store, self.resolver, self.embedder, namespace, wanted, created=created
        )
        return {raw: got[raw.strip()] for raw in wanted}

    # -- reads --------------------------------------------------------------------------------

    async def _resolve(
        self,
        namespace: str,
        name_or_uuid: str,
        entity_type: str | None = None,
        *,
        exact: bool = False,
    ) -> Resolved:
        text = check_text(name_or_uuid, "entity name")
        if entity_type is None:
            return await self.resolver.resolve(namespace, ENTITY_NAMES, text, fuzzy=not exact)
        etype = type_key(entity_type)
        found = await self.resolver.resolve(
            namespace,
            ENTITY_NAMES,
            text,
            fuzzy=not exact,
            where="n.entity_type = $etype",
            params={"etype": etype},
        )
        # The resolver's embedding step does not apply `where`; a match of another type
        # is not the entity asked for.
        if found.properties.get("entity_type") != etype:
            raise NodeNotFound(
                f"{etype} entity",
                text,
                await self.resolver.candidates(namespace, ENTITY_NAMES, text),
            )
        return found

    async def get(
        self,
        namespace: str,
        name_or_uuid: str,
        entity_type: str | None = None,
        *,
        exact: bool = False,
    ) -> Entity:
        """The entity with this uuid or name (exact, normalised, then embedding similarity).

        With `exact` (writes), no similarity step: a name close in meaning is not it.

        Raises:
            NodeNotFound: no such entity; carries the closest names.
            AmbiguousName: several entities match; carries the candidates.
        """
        found = await self._resolve(namespace, name_or_uuid, entity_type, exact=exact)
        return to_entity(found.properties)

    async def list_entities(
        self,
        namespace: str,
        entity_type: str | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[Entity]:
        """Entities ordered by name, optionally of one type."""
        cond = " WHERE n.entity_type = $t" if entity_type else ""
        res = await self.store.query(
            namespace,
            f"MATCH (n:{ENTITY}){cond} RETURN {props('n')} ORDER BY n.name_key "
            "SKIP $off LIMIT $lim",
            {
                "t": type_key(entity_type) if entity_type else None,
                "off": max(0, offset),
                "lim": max(0, limit),
            },
            read_only=True,
        )
        return [to_entity(clean(r[0])) for r in res.rows]

    async def relationships(
        self,
        namespace: str,
        name_or_uuid: str,
        direction: Direction = "both",
        limit: int = 1000,
    ) -> list[EntityRelation]:
        """Relations of an entity: outgoing, incoming or both, oldest first.

        Raises:
            NodeNotFound / AmbiguousName: as for `get`.
            InvalidInput: an unknown direction.
        """
        if direction not in ("out", "in", "both"):
            raise InvalidInput(f"direction must be 'out', 'in' or 'both', got {direction!r}")
        node = await self._resolve(namespace, name_or_uuid)
        return await self.relations_of(namespace, node.uuid, direction, limit)

    async def relations_of(
        self, namespace: str, uuid: str, direction: Direction = "both", limit: int = 1000
    ) -> list[EntityRelation]:
        """`relationships` of an entity already resolved (by its uuid, no name lookup).

        Empty when no entity has this uuid.

        Raises:
            InvalidInput: an unknown direction.
        """
        if direction not in ("out", "in", "both"):
            raise InvalidInput(f"direction must be 'out', 'in' or 'both', got {direction!r}")
        parts: list[str] = []
        if direction in ("out", "both"):
            parts.append(
                f"MATCH (a:{ENTITY} {{uuid: $u}})-[r:{R_RELATES}]->(b:{ENTITY}) "
                f"RETURN {_REL_RETURN}"
            )
        if direction in ("in", "both"):
            parts.append(
                f"MATCH (a:{ENTITY})-[r:{R_RELATES}]->(b:{ENTITY} {{uuid: $u}}) "
                f"RETURN {_REL_RETURN}"
            )
        res = await self.store.query(
            namespace, " UNION ALL ".join(parts), {"u": uuid}, read_only=True
        )
        return _oldest_first(res.rows, limit)

    async def resolve(self, namespace: str, name_or_uuid: str) -> Resolved:
        """The entity a read's name resolves to, with how it matched (`Resolved.as_match`).

        Raises:
            NodeNotFound / AmbiguousName: as for `get`.
        """
        return await self._resolve(namespace, name_or_uuid)

    async def get_with_relationships(
        self, namespace: str, name_or_uuid: str, direction: Direction = "both", limit: int = 1000
    ) -> tuple[Entity, list[EntityRelation]]:
        """`get` and `relationships` together: one round trip when the uuid or name matches.

        Raises:
            NodeNotFound / AmbiguousName: as for `get`.
            InvalidInput: an unknown direction.
        """
        found, relations = await self.resolve_with_relationships(
            namespace, name_or_uuid, direction, limit
        )
        return to_entity(found.properties), relations

    async def resolve_with_relationships(
        self, namespace: str, name_or_uuid: str, direction: Direction = "both", limit: int = 1000
    ) -> tuple[Resolved, list[EntityRelation]]:
        """`get_with_relationships` with how the name matched (`Resolved.as_match`).

        Raises:
            NodeNotFound / AmbiguousName: as for `get`.
            InvalidInput: an unknown direction.
        """
        if direction not in ("out", "in", "both"):
            raise InvalidInput(f"direction must be 'out', 'in' or 'both', got {direction!r}")
        text = check_text(name_or_uuid, "entity name")
        # Pattern comprehensions over the candidate `n`; each its own relation variable
        # (FalkorDB mixes up one name reused across comprehensions).
        parts: list[str] = []
        if direction in ("out", "both"):
            parts.append(
                f"[(n)-[ro:{R_RELATES}]->(b:{ENTITY}) | "
                "[n.uuid, n.name, b.uuid, b.name, ro.relationship_type, ro.properties, "
                "ro.created_at, ro.valid_from, ro.valid_to]]"
            )
        if direction in ("in", "both"):
            parts.append(
                f"[(a:{ENTITY})-[ri:{R_RELATES}]->(n) | "
                "[a.uuid, a.name, n.uuid, n.name, ri.relationship_type, ri.properties, "
                "ri.created_at, ri.valid_from, ri.valid_to]]"
            )
        found = await self.resolver.resolve(namespace, ENTITY_NAMES, text, extra=" + ".join(parts))
        if found.extra is None:  # matched by meaning, which reads no relations
            return found, await self.relations_of(namespace, found.uuid, direction, limit)
        return found, _oldest_first(found.extra, limit)

    async def bfs(
        self, namespace: str, starts: Sequence[str], depth: int, limit: int = 50
    ) -> BfsResult:
        """Entities within `depth` hops of `starts` (uuids), in either direction.

        One query per level; a node is visited once (cycle-safe) at its shortest
        distance, and the walk stops at `limit` nodes (`truncated=True`).

        Raises:
            InvalidInput: depth outside 0..10 or a limit below 1.
        """
        if not 0 <= depth <= MAX_DEPTH:
            raise InvalidInput(f"depth must be between 0 and {MAX_DEPTH}, got {depth}")
        if limit < 1:
            raise InvalidInput(f"limit must be at least 1, got {limit}")
        res = await self.store.query(
            namespace,
            f"MATCH (n:{ENTITY}) WHERE n.uuid IN $u RETURN {props('n')}",
            {"u": list(dict.fromkeys(starts))},
            read_only=True,
        )
        found: dict[str, BfsNode] = {}
        for row in res.rows[:limit]:
            entity = to_entity(clean(row[0]))
            found[entity.uuid] = BfsNode(entity=entity, distance=0)
        truncated = len(res.rows) > limit
        edges: dict[tuple[str, str, str], EntityRelation] = {}
        frontier = list(found)
        level = 0
        while frontier and level < depth:
            level += 1
            rows = await self.store.query(
                namespace,
                f"MATCH (x:{ENTITY})-[r:{R_RELATES}]-(y:{ENTITY}) WHERE x.uuid IN $f "
                "WITH DISTINCT r, y "
                "RETURN startNode(r).uuid, endNode(r).uuid, r.relationship_type, "
                f"r.properties, r.created_at, r.valid_from, r.valid_to, {props('y')} LIMIT $cap",
                {"f": frontier, "cap": limit * 20 + 200},
                read_only=True,
            )
            nxt: list[str] = []
            for src, dst, rel_type, rel_props, created, vf, vt, node in rows.rows:
                y = clean(node)
                uid = str(y["uuid"])
                if uid not in found:
                    if len(found) >= limit:
                        truncated = True
                        continue
                    found[uid] = BfsNode(entity=to_entity(y), distance=level)
                    nxt.append(uid)
                ekey = (str(src), str(dst), str(rel_type))
                if ekey not in edges and str(src) in found and str(dst) in found:
                    edges[ekey] = EntityRelation(
                        source=str(src),
                        target=str(dst),
                        relationship_type=str(rel_type),
                        properties=load_properties(rel_props),
                        created_at=dt(created),
                        source_name=found[str(src)].entity.name,
                        target_name=found[str(dst)].entity.name,
                        valid_from=dt(vf) if vf is not None else None,
                        valid_to=dt(vt) if vt is not None else None,
                    )
            frontier = nxt
        return BfsResult(
            starts=[u for u, n in found.items() if n.distance == 0],
            depth=depth,
            nodes=list(found.values()),
            edges=list(edges.values()),
            truncated=truncated,
        )

    async def named_in(self, namespace: str, text: str) -> list[tuple[str, str]]:
        """Known entities whose normalised name equals a word n-gram of `text` (index lookups).

        Returns:
            (name, name_key) pairs, at most 200.
        """
        keys = ngram_keys(text)
        if not keys:
            return []
        res = await self.store.query(
            namespace,
            "MATCH (e:E_Entity) WHERE e.name_key IN $keys RETURN e.name, e.name_key LIMIT 200",
            {"keys": keys},
            read_only=True,
        )
        return [(str(n), str(k)) for n, k in res.rows]

    async def known_names(self, namespace: str, limit: int = 5000) -> list[tuple[str, str]]:
        """(name, name_key) of up to `limit` entities, most recently updated first."""
        res = await self.store.query(
            namespace,
            f"MATCH (n:{ENTITY}) RETURN n.name, n.name_key ORDER BY n.updated_at DESC LIMIT $lim",
            {"lim": max(0, limit)},
            read_only=True,
        )
        return [(str(name), str(key)) for name, key in res.rows]
