"""The semantic graph: concepts, remembered texts, and vector search over every graph.

Nodes are `S_Concept {uuid, name, name_key, description, embedding, ...}` and
`S_Memory {uuid, content, content_hash, category, tags, created_at, embedding}`;
edges are `S_SIMILAR_TO {score}` between concepts (created when a concept is
added, to its nearest existing concepts above a threshold) and `S_ABOUT` from a
memory to its concepts. Concepts link to entities with `X_REPRESENTS`. Every
similarity lookup goes through the HNSW vector index (`storage/vector.knn`).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import anyio
from polyg_shared import Concept, GraphKind, Memory, MemoryCategory, SearchHit

from polyg_core.errors import (
    AmbiguousName,
    EmbeddingMismatch,
    InvalidInput,
    NodeNotFound,
    check_choice,
)
from polyg_core.graphs.base import (
    MAX_TEXT,
    check_text,
    create_then_merge,
    dt,
    embed_texts,
    iso_ms,
    name_key,
    new_uuid,
    now_ms,
    prepare,
    stored_uuids,
    to_ms,
    with_stored,
)
from polyg_core.graphs.entity import EntityGraph
from polyg_core.providers.embeddings.base import Embedder, dimension_of
from polyg_core.resolve import CONCEPT_NAMES, NameResolver
from polyg_core.storage.cypher import (
    clean,
    create_missing,
    each_linked,
    load_properties,
    props,
)
from polyg_core.storage.schema import (
    CAUSAL,
    CONCEPT,
    ENTITY,
    FACT,
    GRAPH_OF_LABEL,
    MEMORY,
    R_ABOUT,
    R_SIMILAR,
    X_REPRESENTS,
)
from polyg_core.storage.store import FalkorStore, check_readable
from polyg_core.storage.vector import Neighbour, knn

logger = logging.getLogger(__name__)

MAX_CONTENT = 100_000
MAX_K = 1000
SEARCH_LABELS: tuple[str, ...] = (CONCEPT, MEMORY, ENTITY, CAUSAL)
ORIGIN_IMPLICIT = "implicit"
"""`origin` of concepts created only because a memory named them."""


def to_concept(node: Mapping[str, Any]) -> Concept:
    """The `Concept` model of a stored node."""
    return Concept(
        uuid=str(node["uuid"]), name=str(node["name"]), description=node.get("description")
    )


def to_memory(node: Mapping[str, Any]) -> Memory:
    """The `Memory` model of a stored node."""
    return Memory(
        uuid=str(node["uuid"]),
        content=str(node["content"]),
        category=MemoryCategory(str(node.get("category") or "episodic")),
        tags=[str(t) for t in node.get("tags") or ()],
        created_at=dt(node.get("created_at")),
    )


def content_hash(content: str) -> str:
    """The dedup key of a memory: sha256 of its text with whitespace runs collapsed."""
    return hashlib.sha256(" ".join(content.split()).encode("utf-8")).hexdigest()


def hit_text(label: str, node: Mapping[str, Any]) -> str:
    """What a reader is shown for a node of `label`."""
    if label in (ENTITY, CONCEPT):
        return str(node.get("name", ""))
    if label == MEMORY:
        return str(node.get("content", ""))
    if label == FACT:
        return " ".join(str(node.get(k, "")) for k in ("subject", "predicate", "object")).strip()
    return str(node.get("description", ""))


def _hit(n: Neighbour) -> SearchHit:
    node = dict(n.properties)
    if "properties" in node:
        node["properties"] = load_properties(node["properties"])
    return SearchHit(
        uuid=n.uuid,
        label=n.label,
        graph=GraphKind(GRAPH_OF_LABEL[n.label]),
        text=hit_text(n.label, node),
        similarity=round(n.similarity, 6),
        properties=node,
    )


async def write_memory(
    store: FalkorStore,
    namespace: str,
    text: str,
    *,
    category: MemoryCategory,
    tags: Sequence[str],
    added: Sequence[str],
    concept_ids: Sequence[str],
    created_at: int,
    source_id: str | None,
    vec: list[float] | None,
) -> tuple[Memory, bool]:
    """MERGE the `S_Memory` of a checked text on its content hash, with `S_ABOUT` to the
    concepts (uuids); an existing memory gains the `added` tags it lacks. One query; the
    memory and whether this write created it."""
    row = memory_row(
        0, text, category, tags, added, concept_ids, created_at, source_id, vec, now_ms()
    )
    return (await write_memories(store, namespace, [row]))[0]


def memory_row(
    i: int,
    text: str,
    category: MemoryCategory,
    tags: Sequence[str],
    added: Sequence[str],
    concept_ids: Sequence[str],
    created_at: int,
    source_id: str | None,
    vec: list[float] | None,
    now: int,
    *,
    exists: bool = False,
    stored: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One row of `WRITE_MEMORIES` (and of `CREATE_MEMORIES` for a memory the caller
    read as missing, `exists` False).

    `stored`: the properties a created memory is written with instead of the ones the
    graph would give it (an import restoring an export's node; a None value leaves the
    property out), its `uuid` included."""
    h = content_hash(text)
    uid = new_uuid()
    created = {
        "content_hash": h,
        "uuid": uid,
        "content": text,
        "category": category.value,
        "tags": list(tags),
        "created_at": created_at,
        "created_at_iso": iso_ms(created_at),
        "last_accessed": created_at,
        "recorded_at": now,
        "source_id": source_id,
    }
    extra = with_stored(created, stored, uid)
    return {
        "i": i,
        "h": h,
        "uuid": created["uuid"],
        "exists": exists,
        "p": created,
        "x": extra,
        "content": text,
        "cat": category.value,
        "tags": list(tags),
        "added": list(added),
        "when": created_at,
        "when_iso": iso_ms(created_at),
        "now": now,
        "source": source_id,
        "vec": vec,
        "concepts": list(dict.fromkeys(concept_ids)),
    }


# What a written memory links to, the same after a create and a merge: its concepts.
_MEMORY_LINKS = f"""{
    each_linked("m, created", "row", "concepts", "cu", "c", CONCEPT, f"MERGE (m)-[:{R_ABOUT}]->(c)")
}
RETURN row.i, {props("m")}, created
"""

# The same text (up to whitespace) is one memory: MERGE on the content hash. An
# existing memory is written again only when tags are added (see add_concept on
# stale index entries).
WRITE_MEMORIES = f"""
UNWIND $rows AS row
MERGE (m:{MEMORY} {{content_hash: row.h}})
ON CREATE SET m.uuid = row.uuid, m.content = row.content, m.category = row.cat,
    m.tags = row.tags, m.created_at = row.when, m.created_at_iso = row.when_iso,
    m.last_accessed = row.when, m.recorded_at = row.now, m.source_id = row.source,
    m.embedding = CASE WHEN row.vec IS NULL THEN NULL ELSE vecf32(row.vec) END
WITH m, row, m.uuid = row.uuid AS created
FOREACH (_ IN CASE WHEN NOT created AND size(row.added) > 0 THEN [1] ELSE [] END |
    SET m.tags = m.tags + [t IN row.added WHERE NOT t IN m.tags])
{_MEMORY_LINKS}"""

# The memories the caller read as missing, each created whole in one CREATE: a MERGE
# with ON CREATE SET writes a node twice (created with its key, then set), and each
# write of a vector-indexed node leaves FalkorDB an index entry (a stale one for all
# but the last). `p`: the properties it is created with (an export's stored ones on
# an import), `x` any others, set after (none for polyg's own exports). A row whose
# memory another writer created since the caller's read is left to `WRITE_MEMORIES`.
CREATE_MEMORIES = (
    create_missing(
        MEMORY,
        "m",
        "content_hash: row.h",
        """content_hash: row.p.content_hash, uuid: row.uuid, content: row.p.content,
    category: row.p.category, tags: row.p.tags, created_at: row.p.created_at,
    created_at_iso: row.p.created_at_iso, last_accessed: row.p.last_accessed,
    recorded_at: row.p.recorded_at, source_id: row.p.source_id""",
    )
    + f"""
{_MEMORY_LINKS}"""
)


async def write_memories(
    store: FalkorStore, namespace: str, rows: Sequence[Mapping[str, Any]]
) -> dict[int, tuple[Memory, bool]]:
    """Write `memory_row`s (distinct content hashes) in at most two queries; row index
    to (memory, created). Rows read as missing are created whole (`CREATE_MEMORIES`),
    the others, and any another writer created since the read, merged."""
    if not rows:
        return {}
    new = [r for r in rows if "p" in r and not r.get("exists", False)]
    return await create_then_merge(
        store,
        namespace,
        rows,
        new,
        (CREATE_MEMORIES, WRITE_MEMORIES),
        {},
        lambda r: (int(r[0]), to_memory(clean(r[1])), bool(r[2])),
    )


# What a written concept links to, the same after a create and a merge: its similar
# concepts and the entities it represents.
_CONCEPT_LINKS = f"""{
    each_linked(
        "c, created",
        "row",
        "similar",
        "s",
        "o",
        CONCEPT,
        f"MERGE (c)-[r:{R_SIMILAR}]->(o) SET r.score = s.score",
        where=f"o <> c AND NOT (o)-[:{R_SIMILAR}]->(c)",
        uuid="s.uuid",
    )
}
{
    each_linked(
        "c, created, n_o", "row", "ents", "eu", "e", ENTITY, f"MERGE (c)-[:{X_REPRESENTS}]->(e)"
    )
}
RETURN row.i, {props("c")}, created
"""

# Many concepts in one query, each as `add_concept` writes one: MERGE on the
# normalised name; a row's `vec` is set for a new concept or a changed description
# (an existing concept is written only when something changes: each write to a
# vector-indexed node leaves a stale index entry behind); `similar` are the
# `S_SIMILAR_TO {score}` targets by uuid, `ents` the entities it represents.
WRITE_CONCEPTS = f"""
UNWIND $rows AS row
MERGE (c:{CONCEPT} {{name_key: row.k}})
ON CREATE SET c.uuid = row.uuid, c.name = row.name, c.description = row.desc,
    c.created_at = $now, c.created_at_iso = $iso, c.updated_at = $now,
    c.updated_at_iso = $iso, c.origin = row.origin,
    c.embedding = CASE WHEN row.vec IS NULL THEN NULL ELSE vecf32(row.vec) END
WITH c, row, c.uuid = row.uuid AS created
FOREACH (_ IN CASE WHEN NOT created AND row.vec IS NOT NULL THEN [1] ELSE [] END |
    SET c.description = row.desc, c.embedding = vecf32(row.vec), c.updated_at = $now,
        c.updated_at_iso = $iso)
FOREACH (_ IN CASE WHEN NOT created AND row.unmark THEN [1] ELSE [] END |
    SET c.origin = NULL)
{_CONCEPT_LINKS}"""

# The concepts the caller read as missing, each created whole in one CREATE (see
# `CREATE_MEMORIES`): `p` the properties it is created with (an export's stored ones
# on an import; a None time is now), `x` any others. A row whose concept another
# writer created since the caller's read is left to `WRITE_CONCEPTS`.
CREATE_CONCEPTS = (
    create_missing(
        CONCEPT,
        "c",
        "name_key: row.k",
        """name_key: row.p.name_key, uuid: row.uuid, name: row.p.name,
    description: row.p.description, created_at: coalesce(row.p.created_at, $now),
    created_at_iso: coalesce(row.p.created_at_iso, $iso),
    updated_at: coalesce(row.p.updated_at, $now),
    updated_at_iso: coalesce(row.p.updated_at_iso, $iso), origin: row.p.origin""",
    )
    + f"""
{_CONCEPT_LINKS}"""
)


def concept_row(
    i: int,
    name: str,
    description: str | None,
    origin: str | None,
    before: Mapping[str, Any] | None,
    vector: list[float] | None,
    similar: Sequence[Mapping[str, Any]],
    entities: Sequence[str],
    stored: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A `WRITE_CONCEPTS` row for item `i`: the concept `name` (checked) as stored
    `before` (None: new, created by `CREATE_CONCEPTS`), its `vector` (set for a new
    concept or a changed description), the `{uuid, score}` concepts it is similar to,
    the entity uuids it represents. A concept named explicitly (`origin` None) is no
    longer implicit. `stored`: the properties a created concept is written with
    instead of the ones the graph would give it (an import restoring an export's node;
    a None value leaves the property out), its `uuid` included; a None time is now."""
    uid = new_uuid()
    created: dict[str, Any] = {
        "name_key": name_key(name),
        "uuid": uid,
        "name": name,
        "description": description,
        "created_at": None,
        "created_at_iso": None,
        "updated_at": None,
        "updated_at_iso": None,
        "origin": origin,
    }
    extra = with_stored(created, stored, uid)
    return {
        "i": i,
        "k": name_key(name),
        "uuid": created["uuid"],
        "exists": before is not None,
        "p": created,
        "x": extra,
        "name": name,
        "desc": description,
        "origin": origin,
        "unmark": before is not None and origin is None and before.get("origin") is not None,
        "vec": vector,
        "similar": list(similar),
        "ents": list(dict.fromkeys(entities)),
    }


async def write_concepts(
    store: FalkorStore, namespace: str, rows: Sequence[Mapping[str, Any]]
) -> dict[int, tuple[Concept, bool]]:
    """Write `concept_row`s in at most two queries (the new ones created whole by
    `CREATE_CONCEPTS`, the others merged); row index to (concept, created)."""
    if not rows:
        return {}
    now = now_ms()
    new = [r for r in rows if "p" in r and not r.get("exists", False)]
    return await create_then_merge(
        store,
        namespace,
        rows,
        new,
        (CREATE_CONCEPTS, WRITE_CONCEPTS),
        {"now": now, "iso": iso_ms(now)},
        lambda r: (int(r[0]), to_concept(clean(r[1])), bool(r[2])),
    )


async def link_similar_uuids(
    store: FalkorStore, namespace: str, pairs: Sequence[tuple[str, str, float]]
) -> None:
    """`S_SIMILAR_TO {score}` from concept to concept (uuids), unless the other way exists:
    the links `add_concept` makes to the concepts written before it, for concepts
    written together in one query."""
    if not pairs:
        return
    await store.query(
        namespace,
        f"UNWIND $pairs AS p MATCH (c:{CONCEPT} {{uuid: p[0]}}) MATCH (o:{CONCEPT} {{uuid: p[1]}}) "
        f"WHERE c <> o AND NOT (o)-[:{R_SIMILAR}]->(c) "
        f"MERGE (c)-[r:{R_SIMILAR}]->(o) SET r.score = p[2]",
        {"pairs": [list(p) for p in pairs]},
    )


@dataclass
class SemanticGraph:
    """Concepts and memories of a namespace, and k-NN search across all memory graphs.

    Args:
        store: the FalkorDB store.
        embedder: embeds concepts, memories and queries.
        resolver: resolves concept names.
        entities: resolves (or creates) the entities a concept represents by name;
            without it, `add_concept(entities=...)` takes entity uuids only.
        similar_threshold: minimum similarity for an `S_SIMILAR_TO` edge.
        similar_k: at most this many `S_SIMILAR_TO` edges per new concept.
    """

    store: FalkorStore
    embedder: Embedder
    resolver: NameResolver
    entities: EntityGraph | None = None
    similar_threshold: float = 0.8
    similar_k: int = 5

    # -- concepts -----------------------------------------------------------------------------

    async def add_concept(
        self,
        namespace: str,
        name: str,
        description: str | None = None,
        entities: Iterable[str] = (),
        *,
        origin: str | None = None,
        similar: Mapping[str, float] | None = None,
        created_entities: dict[str, str] | None = None,
    ) -> tuple[Concept, bool]:
        """Create a concept (or update the one with the same normalised name).

        The concept is embedded as "name: description"; it gets `S_SIMILAR_TO {score}`
        edges to up to `similar_k` existing concepts at or above `similar_threshold`
        (or, when `similar` maps concept names to scores, to exactly those that exist:
        an import restoring what was stored), and `X_REPRESENTS` edges to the given
        entities (names nothing matches become entities, added to `created_entities`,
        uuid to name, when given). A new description replaces the old one (and the
        embedding); links are only ever added.

        Returns:
            The concept and True when it was created.

        Raises:
            InvalidInput: blank or too long name or description.
            NodeNotFound: an entity uuid does not exist (when no EntityGraph is set).
            EmbeddingMismatch: the namespace uses another embedding model.
        """
        name = check_text(name, "concept name")
        desc = check_text(description, "description", MAX_TEXT) if description else None
        await prepare(self.store, namespace, self.embedder)
        key = name_key(name)
        res = await self.store.query(
            namespace,
            f"MATCH (c:{CONCEPT} {{name_key: $k}}) RETURN {props('c')}",
            {"k": key},
            read_only=True,
        )
        old = clean(res.rows[0][0]) if res.rows else None
        entity_ids = await self._entity_ids(namespace, entities, created_entities)
        vec: list[float] | None = None
        links: list[dict[str, Any]] = []
        if similar is not None:
            links = await self._named_similar(namespace, similar)
        if old is None or (desc is not None and desc != old.get("description")):
            shown = str(old["name"]) if old else name
            vec = (await embed_texts(self.embedder, [f"{shown}: {desc}" if desc else shown]))[0]
            if similar is None:
                hits = await knn(
                    self.store,
                    namespace,
                    CONCEPT,
                    vec,
                    self.similar_k + 1,
                    min_similarity=self.similar_threshold,
                )
                own = old["uuid"] if old else None
                links = [
                    {"uuid": h.uuid, "score": round(h.similarity, 4)} for h in hits if h.uuid != own
                ][: self.similar_k]
        row = concept_row(0, name, desc, origin, old, vec, links, entity_ids)
        written = await write_concepts(self.store, namespace, [row])  # a batch of one
        return written[0]

    async def link_similar(self, namespace: str, name: str, similar: Mapping[str, float]) -> int:
        """Add `S_SIMILAR_TO {score}` edges from the concept `name` to the named concepts
        that exist (an import restoring stored links); the number of edges now there.

        Raises:
            NodeNotFound: no concept has this name.
        """
        links = await self._named_similar(namespace, similar)
        res = await self.store.query(
            namespace,
            f"MATCH (c:{CONCEPT} {{name_key: $k}}) WITH c UNWIND $similar AS s "
            f"MATCH (o:{CONCEPT} {{uuid: s.uuid}}) WHERE o <> c "
            f"MERGE (c)-[r:{R_SIMILAR}]->(o) SET r.score = s.score RETURN count(r)",
            {"k": name_key(name), "similar": links},
        )
        return int(res.rows[0][0]) if res.rows else 0

    async def _named_similar(
        self, namespace: str, similar: Mapping[str, float]
    ) -> list[dict[str, Any]]:
        """`{uuid, score}` of the named concepts that exist (by normalised name)."""
        if not similar:
            return []
        res = await self.store.query(
            namespace,
            f"UNWIND $rows AS r MATCH (c:{CONCEPT} {{name_key: r[0]}}) RETURN c.uuid, r[1]",
            {"rows": [[name_key(n), float(s)] for n, s in similar.items()]},
            read_only=True,
        )
        return [{"uuid": str(u), "score": float(sc)} for u, sc in res.rows]

    async def _entity_ids(
        self, namespace: str, items: Iterable[str], created: dict[str, str] | None = None
    ) -> list[str]:
        wanted = list(dict.fromkeys(items))
        if not wanted:
            return []
        if self.entities is not None:
            mapping = await self.entities.ensure(namespace, wanted, created=created)
            return list(dict.fromkeys(mapping.values()))
        known = await stored_uuids(self.store, namespace, ENTITY, wanted)
        for item in wanted:
            if item not in known:
                raise NodeNotFound("entity", item)
        return wanted

    async def get_concept(self, namespace: str, name_or_uuid: str) -> Concept:
        """The concept with this uuid or name (exact, normalised, then embedding similarity).

        Raises:
            NodeNotFound: no such concept; carries the closest names.
            AmbiguousName: several concepts match.
        """
        found = await self.resolver.resolve(
            namespace, CONCEPT_NAMES, check_text(name_or_uuid, "concept name")
        )
        return to_concept(found.properties)

    async def similar_concepts(
        self, namespace: str, name_or_uuid: str
    ) -> list[tuple[Concept, float]]:
        """Concepts joined to this one by `S_SIMILAR_TO` (either direction), best first."""
        concept = await self.get_concept(namespace, name_or_uuid)
        res = await self.store.query(
            namespace,
            f"MATCH (c:{CONCEPT} {{uuid: $u}})-[r:{R_SIMILAR}]-(o:{CONCEPT}) "
            f"RETURN {props('o')}, r.score ORDER BY r.score DESC",
            {"u": concept.uuid},
            read_only=True,
        )
        return [(to_concept(clean(node)), float(score)) for node, score in res.rows]

    async def _concept_ids(self, namespace: str, names: Iterable[str]) -> list[str]:
        out: list[str] = []
        for raw in dict.fromkeys(names):
            name = check_text(raw, "concept name")
            try:
                # A write names concepts exactly; one close in meaning is another concept.
                found = await self.resolver.find(namespace, CONCEPT_NAMES, name, fuzzy=False)
            except AmbiguousName as exc:
                best = exc.candidates[0] if exc.candidates else None
                found = None
                if best is not None and best.similarity >= 1.0:
                    out.append(best.uuid)
                    continue
            if found is not None:
                out.append(found.uuid)
            else:
                concept, _ = await self.add_concept(namespace, name, origin=ORIGIN_IMPLICIT)
                out.append(concept.uuid)
        return list(dict.fromkeys(out))

    # -- memories -----------------------------------------------------------------------------

    async def add_memory(
        self,
        namespace: str,
        content: str,
        category: MemoryCategory | str = MemoryCategory.EPISODIC,
        tags: Sequence[str] = (),
        concepts: Iterable[str] = (),
        created_at: datetime | str | int | None = None,
        source_id: str | None = None,
    ) -> tuple[Memory, bool]:
        """Remember a text; the same text (up to whitespace) is one memory.

        Concepts are given by name: known ones are resolved, unknown ones created.
        Remembering a known text again adds the new tags and concepts to it.

        Returns:
            The memory and True when it was created.

        Raises:
            InvalidInput: blank or too long content, an unknown category or bad tags.
            EmbeddingMismatch: the namespace uses another embedding model.
        """
        text = check_text(content, "content", MAX_CONTENT)
        cat = check_choice(MemoryCategory, category, "memory category")
        tag_list = list(dict.fromkeys(check_text(t, "tag") for t in tags))
        await prepare(self.store, namespace, self.embedder)
        digest = content_hash(text)
        res = await self.store.query(
            namespace,
            f"MATCH (m:{MEMORY} {{content_hash: $h}}) RETURN m.tags",
            {"h": digest},
            read_only=True,
        )
        concept_ids = await self._concept_ids(namespace, concepts)
        vec = None if res.rows else (await embed_texts(self.embedder, [text]))[0]
        old_tags = [str(t) for t in (res.rows[0][0] or ())] if res.rows else []
        return await write_memory(
            self.store,
            namespace,
            text,
            category=cat,
            tags=tag_list,
            added=[t for t in tag_list if t not in old_tags],
            concept_ids=concept_ids,
            created_at=to_ms(created_at, now_ms()),
            source_id=source_id,
            vec=vec,
        )

    # -- search -------------------------------------------------------------------------------

    async def search(
        self,
        namespace: str,
        query: str | Sequence[float],
        k: int = 10,
        min_similarity: float = 0.0,
        labels: Sequence[str] = SEARCH_LABELS,
    ) -> list[SearchHit]:
        """The `k` nodes most similar to a text or vector, across labels, best first.

        Each label is searched through its vector index (k nearest each), then the
        hits are merged by similarity (1 - cosine distance, in [0, 1]).

        Raises:
            InvalidInput: k outside 1..1000, a similarity outside [0, 1], a label
                without embeddings or an empty query.
            EmbeddingMismatch: the namespace was built with another embedding model,
                or a query vector has another dimension.
        """
        if not 1 <= k <= MAX_K:
            raise InvalidInput(f"k must be between 1 and {MAX_K}, got {k}")
        if not 0.0 <= min_similarity <= 1.0:
            raise InvalidInput(f"min_similarity must be between 0 and 1, got {min_similarity}")
        for label in labels:
            if label not in SEARCH_LABELS:
                allowed = ", ".join(SEARCH_LABELS)
                raise InvalidInput(f"cannot search label {label!r}; use some of {allowed}")
        if isinstance(query, str):
            check_text(query, "query", MAX_CONTENT)
            vector = (await embed_texts(self.embedder, [query]))[0]
        else:
            vector = [float(x) for x in query]
            dimension = await dimension_of(self.embedder)
            if len(vector) != dimension:
                raise EmbeddingMismatch(
                    f"the query vector has dimension {len(vector)}, but graph {namespace!r} "
                    f"uses {self.embedder.model_name!r} vectors of dimension {dimension}; "
                    "embed the query with the same model or pass the text instead"
                )
        if not await check_readable(self.store, namespace, self.embedder.model_name, len(vector)):
            return []
        found: list[Neighbour] = []

        async def one(label: str) -> None:
            found.extend(
                await knn(self.store, namespace, label, vector, k, min_similarity=min_similarity)
            )

        async with anyio.create_task_group() as tg:
            for label in dict.fromkeys(labels):
                tg.start_soon(one, label)
        found.sort(key=lambda n: (-n.similarity, n.label, n.uuid))
        return [_hit(n) for n in found[:k]]
