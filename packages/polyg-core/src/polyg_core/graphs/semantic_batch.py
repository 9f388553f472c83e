"""Concepts and memories written in batches (import): the rules of `add_concept` and
`add_memory`, a few queries per batch instead of several per record.

A batch is written in rounds in which each normalised concept name (or memory
text) appears once, because a MERGE inside an UNWIND does not see what earlier
rows of the same query created; a later record of the same name then updates
what the earlier one wrote, as it would one call after the other.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from polyg_shared import Concept, Memory, MemoryCategory

from polyg_core.errors import InvalidInput, NodeNotFound, check_choice
from polyg_core.graphs.base import (
    MAX_TEXT,
    ItemError,
    check_text,
    embed_texts,
    name_key,
    now_ms,
    prepare,
    rounds_by_key,
    stored_uuids,
    to_ms,
)
from polyg_core.graphs.entity_refs import resolve_entity_names
from polyg_core.graphs.semantic import (
    MAX_CONTENT,
    ORIGIN_IMPLICIT,
    SemanticGraph,
    concept_row,
    content_hash,
    memory_row,
    write_concepts,
    write_memories,
)
from polyg_core.storage.cypher import clean, props
from polyg_core.storage.schema import CONCEPT, ENTITY, MEMORY
from polyg_core.storage.vector import knn_many


@dataclass(frozen=True)
class ConceptItem:
    """A concept to write (the arguments of `SemanticGraph.add_concept`)."""

    name: str
    description: str | None = None
    entities: Sequence[str] = ()
    origin: str | None = None
    similar: Mapping[str, float] | None = None
    stored: Mapping[str, Any] | None = None
    """The exact properties a concept this write creates is written with (an import
    restoring an export's node); a concept that exists already is left as the rules say."""


@dataclass(frozen=True)
class MemoryItem:
    """A memory to write (the arguments of `SemanticGraph.add_memory`)."""

    content: str
    category: MemoryCategory | str = MemoryCategory.EPISODIC
    tags: Sequence[str] = ()
    concepts: Sequence[str] = ()
    created_at: datetime | str | int | None = None
    source_id: str | None = None
    stored: Mapping[str, Any] | None = None
    """The exact properties a memory this write creates is written with (an import
    restoring an export's node); a memory that exists already is left as the rules say."""


def _linked(names: Sequence[str], ents: Mapping[str, str | ItemError]) -> list[str] | ItemError:
    """The entity uuids an item names, or the first name's error."""
    out: list[str] = []
    for n in names:
        got = ents.get(n, InvalidInput("an entity name is empty"))
        if not isinstance(got, str):
            return got
        out.append(got)
    return out


def _concept_row(
    i: int, item: ConceptItem, old: Mapping[str, Mapping[str, Any]], ents: list[str]
) -> tuple[dict[str, Any], str | None]:
    """The `concept_row` of a checked item (no vector, no similar concepts yet) and the
    text to embed when the concept is new or its description changed (as
    `add_concept` decides)."""
    name = item.name.strip()
    desc = (item.description or "").strip() or None
    before = old.get(name_key(name))
    text: str | None = None
    if before is None or (desc is not None and desc != before.get("description")):
        shown = str(before["name"]) if before else name
        text = f"{shown}: {desc}" if desc else shown
    return concept_row(i, name, desc, item.origin, before, None, [], ents, item.stored), text


def _check_memory(item: MemoryItem) -> tuple[str, MemoryCategory, list[str]]:
    """The checked content, category and tags of a memory to write.

    Raises:
        InvalidInput: blank or too long content, tag or concept name; an unknown category.
    """
    text = check_text(item.content, "content", MAX_CONTENT)
    cat = check_choice(MemoryCategory, item.category, "memory category")
    tags = list(dict.fromkeys(check_text(t, "tag") for t in item.tags))
    for c in item.concepts:
        check_text(c, "concept name")
    return text, cat, tags


@dataclass
class SemanticBatch:
    """Batched concept and memory writes over one `SemanticGraph`."""

    graph: SemanticGraph

    async def add_concepts(
        self, namespace: str, items: Sequence[ConceptItem]
    ) -> list[tuple[Concept, bool] | ItemError]:
        """`add_concept` for every item; an item that cannot be written is its error."""
        out: list[tuple[Concept, bool] | ItemError] = [InvalidInput("not written")] * len(items)
        keys: list[str | None] = []
        for i, it in enumerate(items):
            try:
                check_text(it.name, "concept name")
                if it.description:
                    check_text(it.description, "description", MAX_TEXT)
                keys.append(name_key(it.name.strip()))
            except InvalidInput as exc:
                out[i] = exc
                keys.append(None)
        if all(k is None for k in keys):
            return out
        await prepare(self.graph.store, namespace, self.graph.embedder)
        for round_ in rounds_by_key(keys):
            await self._concept_round(namespace, items, round_, out)
        return out

    async def _concept_round(
        self,
        namespace: str,
        items: Sequence[ConceptItem],
        idx: list[int],
        out: list[tuple[Concept, bool] | ItemError],
    ) -> None:
        """Write items `idx` (their names distinct) with `add_concept`'s query."""
        old = await self._stored_concepts(namespace, [name_key(items[i].name.strip()) for i in idx])
        ents = await self._entity_ids(namespace, [n for i in idx for n in items[i].entities])
        rows: list[dict[str, Any]] = []
        texts: dict[int, str] = {}
        for i in idx:
            linked = _linked(items[i].entities, ents)
            if not isinstance(linked, list):
                out[i] = linked
                continue
            row, text = _concept_row(i, items[i], old, linked)
            rows.append(row)
            if text is not None:
                texts[i] = text
        vectors = await embed_texts(self.graph.embedder, list(texts.values()))
        vec_of = dict(zip(texts, vectors, strict=True))
        for r in rows:
            r["vec"] = vec_of.get(r["i"])
        await self._similar(namespace, items, rows, old)
        for i, got in (await write_concepts(self.graph.store, namespace, rows)).items():
            out[i] = got

    async def _stored_concepts(
        self, namespace: str, keys: Sequence[str]
    ) -> dict[str, dict[str, Any]]:
        """The stored concept of each normalised name that has one."""
        res = await self.graph.store.query(
            namespace,
            f"UNWIND $keys AS k MATCH (c:{CONCEPT} {{name_key: k}}) RETURN k, {props('c')}",
            {"keys": list(keys)},
            read_only=True,
        )
        old: dict[str, dict[str, Any]] = {}
        for k, node in res.rows:
            old.setdefault(str(k), clean(node))
        return old

    async def _similar(
        self,
        namespace: str,
        items: Sequence[ConceptItem],
        rows: list[dict[str, Any]],
        old: Mapping[str, Mapping[str, Any]],
    ) -> None:
        """Fill each row's `similar`: the named concepts that exist when the item names
        them, else (for a row with a vector) its nearest concepts, one k-NN query."""
        g = self.graph
        named = {n for r in rows for n in items[cast(int, r["i"])].similar or ()}
        uuid_of = await self._uuids_of_names(namespace, named)
        searched: list[tuple[int, Sequence[float]]] = [
            (r["i"], r["vec"]) for r in rows if r["vec"] is not None
        ]
        searched = [(i, v) for i, v in searched if items[i].similar is None]
        nearest = await knn_many(
            g.store,
            namespace,
            CONCEPT,
            searched,
            g.similar_k + 1,
            min_similarity=g.similar_threshold,
        )
        for r in rows:
            given = items[cast(int, r["i"])].similar
            if given is not None:
                r["similar"] = [
                    {"uuid": uuid_of[name_key(n)], "score": float(sc)}
                    for n, sc in given.items()
                    if name_key(n) in uuid_of
                ]
            elif r["vec"] is not None:
                own = (old.get(r["k"]) or {}).get("uuid")
                hits = [h for h in nearest.get(r["i"], []) if h.uuid != own]
                r["similar"] = [{"uuid": h.uuid, "score": round(h.similarity, 4)} for h in hits][
                    : g.similar_k
                ]

    async def _uuids_of_names(self, namespace: str, names: set[str]) -> dict[str, str]:
        """Normalised name to uuid of the named concepts that exist."""
        named = await self._concepts_named(namespace, names)
        return {k: hits[-1][1] for k, hits in named.items()}

    async def _concepts_named(
        self, namespace: str, names: Iterable[str]
    ) -> dict[str, list[tuple[str, str]]]:
        """Per normalised name, the (name, uuid) of each stored concept under it."""
        keys = sorted({name_key(n) for n in names})
        if not keys:
            return {}
        res = await self.graph.store.query(
            namespace,
            f"UNWIND $keys AS k MATCH (c:{CONCEPT} {{name_key: k}}) RETURN k, c.name, c.uuid",
            {"keys": keys},
            read_only=True,
        )
        by_key: dict[str, list[tuple[str, str]]] = {}
        for k, name, uid in res.rows:
            by_key.setdefault(str(k), []).append((str(name), str(uid)))
        return by_key

    async def _entity_ids(self, namespace: str, refs: Sequence[str]) -> dict[str, str | ItemError]:
        """Entity uuids of names (created when missing) or, without an EntityGraph, of
        uuids that must exist."""
        wanted = list(dict.fromkeys(refs))
        if not wanted:
            return {}
        g = self.graph
        if g.entities is not None:
            got = await resolve_entity_names(g.store, g.embedder, namespace, wanted)
            return {
                raw: got.get(raw.strip(), InvalidInput("an entity name is empty")) for raw in wanted
            }
        known = await stored_uuids(g.store, namespace, ENTITY, wanted)
        return {u: u if u in known else NodeNotFound("entity", u) for u in wanted}

    async def add_memories(
        self, namespace: str, items: Sequence[MemoryItem]
    ) -> list[tuple[Memory, bool] | ItemError]:
        """`add_memory` for every item; an item that cannot be written is its error."""
        out: list[tuple[Memory, bool] | ItemError] = [InvalidInput("not written")] * len(items)
        checked: dict[int, tuple[str, MemoryCategory, list[str]]] = {}
        keys: list[str | None] = []
        for i, it in enumerate(items):
            try:
                checked[i] = _check_memory(it)
            except InvalidInput as exc:
                out[i] = exc
                keys.append(None)
                continue
            keys.append(content_hash(checked[i][0]))
        if not checked:
            return out
        g = self.graph
        await prepare(g.store, namespace, g.embedder)
        concept_ids = await self._concept_ids(
            namespace, [c for i in checked for c in items[i].concepts]
        )
        for round_ in rounds_by_key(keys):
            rows = await self._memory_rows(namespace, items, checked, round_, concept_ids)
            for i, got in (await write_memories(g.store, namespace, rows)).items():
                out[i] = got
        return out

    async def _memory_rows(
        self,
        namespace: str,
        items: Sequence[MemoryItem],
        checked: Mapping[int, tuple[str, MemoryCategory, list[str]]],
        idx: list[int],
        concept_ids: Mapping[str, str],
    ) -> list[dict[str, Any]]:
        """The `memory_row` of items `idx` (their contents distinct): a vector for a new
        memory, the tags a stored one lacks."""
        g = self.graph
        hashes = {i: content_hash(checked[i][0]) for i in idx}
        res = await g.store.query(
            namespace,
            f"UNWIND $h AS h MATCH (m:{MEMORY} {{content_hash: h}}) RETURN h, m.tags",
            {"h": list(hashes.values())},
            read_only=True,
        )
        old_tags = {str(h): [str(t) for t in (tags or ())] for h, tags in res.rows}
        new = [i for i in idx if hashes[i] not in old_tags]
        vectors = await embed_texts(g.embedder, [checked[i][0] for i in new])
        vec_of = dict(zip(new, vectors, strict=True))
        now = now_ms()
        rows: list[dict[str, Any]] = []
        for i in idx:
            text, cat, tags = checked[i]
            had = old_tags.get(hashes[i])
            rows.append(
                memory_row(
                    i,
                    text,
                    cat,
                    tags,
                    [t for t in tags if t not in had] if had is not None else [],
                    [concept_ids[name_key(c.strip())] for c in items[i].concepts],
                    to_ms(items[i].created_at, now),
                    items[i].source_id,
                    vec_of.get(i),
                    now,
                    exists=had is not None,
                    stored=items[i].stored,
                )
            )
        return rows

    async def _concept_ids(self, namespace: str, names: Sequence[str]) -> dict[str, str]:
        """The uuid of each concept name (by normalised name; the exact spelling first
        when several share it), creating the missing ones as implicit concepts."""
        wanted = list(dict.fromkeys(n.strip() for n in names))
        if not wanted:
            return {}
        by_key = await self._concepts_named(namespace, wanted)
        out: dict[str, str] = {}
        missing: list[str] = []
        for name in wanted:
            key = name_key(name)
            hits = by_key.get(key, [])
            exact = [u for n, u in hits if n == name]
            if exact or hits:
                out.setdefault(key, (exact or [u for _, u in hits])[0])
            elif all(name_key(m) != key for m in missing):
                missing.append(name)
        created = await self.add_concepts(
            namespace, [ConceptItem(n, origin=ORIGIN_IMPLICIT) for n in missing]
        )
        for name, got in zip(missing, created, strict=True):
            if isinstance(got, Exception):
                raise got
            out[name_key(name)] = got[0].uuid
        return out
