"""Writing what `remember` extracted from one text, in a fixed handful of queries.

A remember names a few entities, events, facts, causal links and concepts. Written
one by one through the graph methods that cost ~5 queries and one embedding call
per item; here the whole extraction is:

1. one lookup query: every entity name (uuid, normalised key), concept, causal
   description and event (description + instant) the extraction mentions;
2. one embedding call for every text that will be stored or matched by meaning;
3. one k-NN query: near-duplicate entities (`similar_existing`), causal
   paraphrases, similar concepts;
4. the writes, one query per kind (entities, relations, events and their chains,
   causal links, concepts), one per fact (its supersession is decided in the
   query), and the `S_Memory` node last: it marks the memory complete, and its
   MERGE on the content hash decides which of concurrent identical calls created it.

The rules stay with their owners and are applied to what the lookup read:
entity identity by uuid, exact or normalised name (`graphs/entity_refs.py`,
`decide_entity`), the typed entity MERGE (`graphs/entity.py`), event rows and
chains (`graphs/bulk.py`), fact supersession (`graphs/temporal_queries.ADD_FACT`),
causal matching (`graphs/causal.py`, `paraphrase_match`, `LinkBatch`), concepts
and the memory node (`graphs/semantic.py`), the cross-links remember infers
(`remember/links.py`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import numpy as np
from polyg_shared.intents import ExtractedFact, ExtractedRelation, Extraction
from polyg_shared.nodes import Concept, Entity, Fact, MemoryCategory
from polyg_shared.retrieval import RememberResult, WrittenNode

from polyg_core.agents.extractor import UNKNOWN_START
from polyg_core.errors import AmbiguousName, Candidate, InvalidInput
from polyg_core.graphs.base import (
    MAX_TEXT,
    check_text,
    embed_texts,
    name_key,
    new_uuid,
    now_ms,
    to_ms,
    type_key,
)
from polyg_core.graphs.bulk import event_row, write_event_rows
from polyg_core.graphs.causal import (
    DEFAULT_MATCH_THRESHOLD,
    LinkBatch,
    Match,
)
from polyg_core.graphs.causal_batch import match_new, same_node
from polyg_core.graphs.entity import ORIGIN_ENSURED, EntityGraph, entity_row, merge_entity_rows
from polyg_core.graphs.entity_refs import (
    LOOKUP_ENTITIES,
    EntityRows,
    decide_entity,
    entity_rows,
    epoch_ms,
    lookup_params,
)
from polyg_core.graphs.semantic import (
    MAX_CONTENT,
    link_similar_uuids,
    write_concepts,
    write_memory,
)
from polyg_core.graphs.temporal import (
    TemporalGraph,
    fact_params,
    fact_text,
    parse_time,
    write_fact,
)
from polyg_core.remember.links import referred_events, represented_entities
from polyg_core.resolve import similar_nodes
from polyg_core.storage.cypher import clean, props
from polyg_core.storage.schema import CAUSAL, CONCEPT, ENTITY, EVENT
from polyg_core.storage.store import FalkorStore
from polyg_core.storage.vector import Neighbour
from polyg_core.text import normalize_description, normalize_name

logger = logging.getLogger(__name__)

_CAUSAL_K = 5
_CONCEPT_SIMILAR = 0.8
_CONCEPT_K = 5

# Concepts by normalised name, causal nodes by uuid and by normalised description,
# events by description and instant: the columns of LOOKUP_ENTITIES, so the
# entity lookup and these are one UNION ALL query.
_LOOKUP_OTHERS = f"""
UNION ALL
UNWIND $concepts AS k MATCH (n:{CONCEPT} {{name_key: k}})
RETURN k AS ref, 'concept' AS how, n.uuid AS uuid, n.name AS name, n.name_key AS key,
    n.description AS type, null AS props, n.origin AS origin
UNION ALL
UNWIND $causal AS r MATCH (n:{CAUSAL} {{uuid: r[0]}})
RETURN r[0] AS ref, 'causal' AS how, n.uuid AS uuid, n.description AS name, n.key AS key,
    null AS type, null AS props, null AS origin
UNION ALL
UNWIND $causal AS r MATCH (n:{CAUSAL} {{key: r[1]}})
RETURN r[0] AS ref, 'causal_key' AS how, n.uuid AS uuid, n.description AS name,
    n.key AS key, null AS type, null AS props, null AS origin
UNION ALL
UNWIND $events AS r MATCH (n:{EVENT} {{description: r[0], occurred_at: r[1]}})
RETURN r[0] AS ref, 'event' AS how, n.uuid AS uuid, n.description AS name, null AS key,
    null AS type, n.occurred_at AS props, null AS origin
"""


def _knn_part(label: str, param: str) -> str:
    return (
        f"UNWIND ${param} AS q CALL db.idx.vector.queryNodes('{label}', 'embedding', q.k, "
        f"vecf32(q.v)) YIELD node, score RETURN '{param}' AS kind, q.i AS i, "
        f"{props('node')} AS node, score AS score"
    )


_KNN = " UNION ALL ".join(
    _knn_part(label, param)
    for label, param in ((ENTITY, "entities"), (CAUSAL, "causal"), (CONCEPT, "concepts"))
)


def _fetch(k: int) -> int:
    # As storage.vector.knn: stale index entries take result slots, so ask for more.
    return 2 * k + 16


@dataclass
class _Lookup:
    """What the one lookup query found."""

    entities: EntityRows = field(default_factory=EntityRows)
    concepts: dict[str, dict[str, Any]] = field(default_factory=dict[str, dict[str, Any]])
    causal_uuid: dict[str, tuple[str, str]] = field(default_factory=dict[str, tuple[str, str]])
    causal_key: dict[str, tuple[str, str]] = field(default_factory=dict[str, tuple[str, str]])
    events: dict[tuple[str, int], str] = field(default_factory=dict[tuple[str, int], str])


@dataclass
class _Link:
    """A causal link of the extraction, checked, with its entity names."""

    cause: str
    effect: str
    confidence: float
    evidence: str | None
    entities: list[str]
    c: Match | None = None
    e: Match | None = None

    def text(self, end: str) -> str:
        return self.cause if end == "c" else self.effect

    def set(self, end: str, m: Match) -> None:
        if end == "c":
            self.c = m
        else:
            self.e = m

    def open_ends(self) -> list[str]:
        """The ends ("c", "e") no uuid or key matched."""
        return [end for end, m in (("c", self.c), ("e", self.e)) if m is None]

    def unmatched(self) -> list[str]:
        return [self.text(end) for end in self.open_ends()]


def _fact_node(fact: Fact, *, created: bool) -> WrittenNode:
    """A written fact as remember reports it."""
    return WrittenNode(
        uuid=fact.uuid,
        name=f"{fact.subject} {fact.predicate} {fact.object}",
        label="T_Fact",
        created=created,
    )


@dataclass
class _Entities:
    """The entity rows of one remember and how the extraction's names map to them."""

    found: EntityRows
    rows: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    embed: set[int] = field(default_factory=set[int])  # rows of entities not stored yet
    chosen: dict[str, str] = field(default_factory=dict[str, str])  # key -> uuid or row:i
    implicit: set[int] = field(default_factory=set[int])

    def row(self, name: str, etype: str, *, origin: str | None = None) -> str:
        """A row for the entity (name_key, type), unless there is one; its marker."""
        key = name_key(name)
        for row in self.rows:
            if row["key"] == key and row["type"] == etype:
                return f"row:{row['i']}"
        same = [
            s
            for s in self.found.get(name.strip(), ([], []))[1]
            if s.entity_type == etype and s.name_key == key
        ]
        old = same[0] if same else None
        i = len(self.rows)
        self.rows.append(
            entity_row(
                i,
                name,
                etype,
                None,
                exists=old is not None,
                old_props=old.properties if old else None,
                old_origin=old.origin if old else None,
                origin=origin,
            )
        )
        if old is None:
            self.embed.add(i)
        return f"row:{i}"

    def ref(self, raw: str) -> str:
        """The uuid (or row marker) a name other items use stands for: an entity of this
        text by normalised name, else the write rule (`decide_entity`), else a new
        plain entity.

        Raises:
            AmbiguousName: several stored entities answer to the name.
            InvalidInput: a blank name, or one without letters or digits.
        """
        name = check_text(raw, "entity name")
        key = normalize_name(name)
        if key in self.chosen:
            return self.chosen[key]
        hit = decide_entity(name, self.found)
        if hit is not None:
            return hit.uuid
        if not key:
            raise InvalidInput(f"entity name {name!r} has no letters or digits; give a real name")
        marker = self.chosen[key] = self.row(name, "entity", origin=ORIGIN_ENSURED)
        self.implicit.add(int(marker[4:]))
        return marker


def _is_row(ref: str) -> bool:
    return ref.startswith("row:")


@dataclass
class RememberWriter:
    """Writes one extraction and its memory node (see the module docstring).

    Args:
        entities: the entity graph (its store, embedder and resolver are used).
        temporal: ends the facts a text says ended (`invalidate_fact`).
        causal_threshold: similarity at which a causal description reuses a node.
    """

    entities: EntityGraph
    temporal: TemporalGraph
    causal_threshold: float = DEFAULT_MATCH_THRESHOLD

    @property
    def store(self) -> FalkorStore:
        return self.entities.store

    async def write(
        self,
        namespace: str,
        content: str,
        ex: Extraction,
        *,
        category: str | None,
        tags: list[str],
        source_id: str | None,
        created_at: datetime | None = None,
        who: str | None = None,
    ) -> RememberResult:
        """Write the extraction, then the `S_Memory` node.

        An item the graphs would refuse (a blank name, a self-link, a name several
        entities answer to where the item needs one) is left out and logged; the
        memory and the other items are written.

        Raises:
            InvalidInput: blank or overlong content, an unknown category or a bad tag.
        """
        text = check_text(content, "content", MAX_CONTENT)
        cat_value = category or (ex.category.value if ex.category else "episodic")
        try:
            cat = MemoryCategory(cat_value)
        except ValueError as exc:
            allowed = ", ".join(c.value for c in MemoryCategory)
            raise InvalidInput(
                f"unknown memory category {cat_value!r}; use one of {allowed}"
            ) from exc
        tag_list = list(dict.fromkeys(check_text(t, "tag") for t in tags))
        embedder, resolver = self.entities.embedder, self.entities.resolver
        await self.store.ensure_vectors(namespace, embedder.model_name, embedder.dimension)
        said = f"{who} ({source_id})" if who and source_id else (who or source_id or "")
        items = _Items.of(ex, said.strip()[:256] or None)
        found = await self._lookup(namespace, items)

        # -- entities: the extraction's own (typed), then the names other items use ------
        ents = _Entities(found.entities)
        explicit: list[WrittenNode | int] = []  # a stored entity, or the row to write
        for name, etype in items.entities:
            try:
                hit = decide_entity(name, found.entities)
            except AmbiguousName:
                hit = None  # written with the extractor's type: that entity, or a new one
            if hit is not None:
                explicit.append(
                    WrittenNode(uuid=hit.uuid, name=hit.name, label=ENTITY, created=False)
                )
                ents.chosen[normalize_name(hit.name)] = hit.uuid
                ents.chosen[normalize_name(name)] = hit.uuid
            else:
                marker = ents.row(name, etype)
                ents.chosen[normalize_name(name)] = marker
                explicit.append(int(marker[4:]))

        def refs(names: Sequence[str], what: str) -> list[str]:
            out: list[str] = []
            for raw in names:
                try:
                    out.append(ents.ref(raw))
                except (AmbiguousName, InvalidInput) as exc:
                    logger.info("%s: entity %r left out: %s", what, raw, exc)
            return out

        rel_ends: list[tuple[str, str] | None] = []
        for r in items.relations:
            try:
                rel_ends.append((ents.ref(r.source), ents.ref(r.target)))
            except (AmbiguousName, InvalidInput) as exc:
                logger.info("relation %s skipped: %s", r, exc)
                rel_ends.append(None)
        event_eids = [refs(ents_of, f"event {d!r}") for d, _, ents_of in items.events]
        link_eids = [refs(link.entities, "causal link") for link in items.links]
        subjects: list[str | None] = []
        for _, p in items.facts:
            if p is None:
                subjects.append(None)
                continue
            try:
                # The subject is named as on any fact write; a name several entities
                # answer to skips the fact (the memory and its other parts are written).
                hit = decide_entity(p["subject"], found.entities)
                subjects.append(hit.uuid if hit is not None else ents.ref(p["subject"]))
            except (AmbiguousName, InvalidInput) as exc:
                logger.info("fact %s skipped: %s", p, exc)
                subjects.append(None)
        for link in items.links:
            link.c = _stored_causal(link.cause, found)
            link.e = _stored_causal(link.effect, found)

        # -- one embedding call for every text stored or matched by meaning -------------
        concept_rows, concept_text = _concept_rows(items, found)
        texts = [ents.rows[i]["name"] for i in sorted(ents.embed)]
        texts += [d for d, t, _ in items.events if (d, t) not in found.events]
        texts += [fact_text(p) for _, p in items.facts if p is not None]
        texts += [m for link in items.links for m in link.unmatched()]
        texts += list(concept_text.values())
        texts.append(text)
        unique = list(dict.fromkeys(texts))
        vec = dict(zip(unique, await embed_texts(embedder, unique), strict=True))
        for i in ents.embed:
            ents.rows[i]["vec"] = vec[ents.rows[i]["name"]]
        for i, shown in concept_text.items():
            concept_rows[i]["vec"] = vec[shown]

        # -- one k-NN query: near-duplicate entities, causal paraphrases, similar concepts
        pending = [(li, end) for li, link in enumerate(items.links) for end in link.open_ends()]
        near = await self._knn(
            namespace,
            [(i, resolver.max_candidates + 3, ents.rows[i]["vec"]) for i in sorted(ents.embed)],
            [(n, _CAUSAL_K, vec[items.links[li].text(end)]) for n, (li, end) in enumerate(pending)],
            [(i, _CONCEPT_K + 1, concept_rows[i]["vec"]) for i in concept_text],
        )
        self._match_causal(items.links, pending, near, vec)
        for i in concept_text:
            own = found.concepts.get(concept_rows[i]["k"], {}).get("uuid")
            concept_rows[i]["similar"] = [
                {"uuid": h.uuid, "score": round(h.similarity, 4)}
                for h in near.get(("concepts", i), [])
                if h.similarity >= _CONCEPT_SIMILAR and h.uuid != own
            ][:_CONCEPT_K]

        # -- writes: entities, relations, events, facts, causal links, concepts, memory --
        stored = await merge_entity_rows(self.store, namespace, ents.rows)

        def real(ref: str | None) -> str | None:
            if ref is None or not _is_row(ref):
                return ref
            got = stored.get(int(ref[4:]))
            return got[0].uuid if got else None

        entity_nodes = [
            n if isinstance(n, WrittenNode) else self._entity_node(n, ents, stored, near)
            for n in explicit
        ]
        represented = {n.name: n.uuid for n in entity_nodes}
        entity_nodes += [
            self._entity_node(i, ents, stored, near)
            for i in sorted(ents.implicit)
            if i in stored and stored[i][1]
        ]
        relations = await self._relations(namespace, items, rel_ends, real)
        event_nodes = await self._events(namespace, items, event_eids, found, vec, real)
        facts, invalidated = await self._facts(namespace, items, subjects, vec, real)
        causal = await self._causal(namespace, items, link_eids, event_nodes, real)
        for i, (cname, cdesc) in enumerate(items.concepts.values()):
            named = represented_entities(cname, cdesc, represented)
            concept_rows[i]["ents"] = list(dict.fromkeys(represented[n] for n in named))
        written = await write_concepts(self.store, namespace, concept_rows)
        concepts = [
            WrittenNode(uuid=c.uuid, name=c.name, label=CONCEPT, created=created)
            for c, created in (written[i] for i in sorted(written))
        ]
        await link_similar_uuids(self.store, namespace, _similar_within(concept_rows, written))
        memory, created = await write_memory(
            self.store,
            namespace,
            text,
            category=cat,
            tags=tag_list,
            added=tag_list,
            concept_ids=[c.uuid for c in concepts],
            created_at=to_ms(created_at, now_ms()),
            source_id=source_id,
            vec=vec[text],
        )
        return RememberResult(
            graph=namespace,
            memory_uuid=memory.uuid,
            created=created,
            category=cat.value,
            entities=entity_nodes,
            relations=relations,
            events=event_nodes,
            facts=facts,
            invalidated_facts=invalidated,
            causal_links=causal,
            concepts=concepts,
        )

    # -- reads ------------------------------------------------------------------------------

    async def _lookup(self, namespace: str, items: _Items) -> _Lookup:
        """Everything the extraction names that is stored already, in one query."""
        names = [n for n, _ in items.entities]
        names += [n for r in items.relations for n in (r.source, r.target)]
        names += [n for _, _, ents in items.events for n in ents]
        names += [n for link in items.links for n in link.entities]
        names += [p["subject"] for _, p in items.facts if p is not None]
        causal = list(dict.fromkeys(t for link in items.links for t in (link.cause, link.effect)))
        params: dict[str, Any] = {
            "refs": lookup_params(names),
            "concepts": list(items.concepts),
            "causal": [[t, normalize_description(t)] for t in causal],
            "events": [[d, t] for d, t, _ in items.events],
        }
        out = _Lookup()
        if not any(params.values()):
            return out
        res = await self.store.query(
            namespace, LOOKUP_ENTITIES + _LOOKUP_OTHERS, params, read_only=True
        )
        entity_hits: list[list[Any]] = []
        for row in res.rows:
            ref, how, uid, name, key, kind, _props, origin = row
            if how in ("uuid", "key"):
                entity_hits.append(row)
            elif how == "concept":
                out.concepts.setdefault(
                    str(ref),
                    {"uuid": str(uid), "name": str(name), "description": kind, "origin": origin},
                )
            elif how == "causal":
                out.causal_uuid.setdefault(str(ref), (str(uid), str(key)))
            elif how == "causal_key":
                out.causal_key.setdefault(str(ref), (str(uid), str(key)))
            else:
                out.events[(str(ref), int(_props))] = str(uid)
        out.entities = entity_rows(entity_hits)
        return out

    async def _knn(
        self,
        namespace: str,
        entities: list[tuple[int, int, list[float]]],
        causal: list[tuple[int, int, list[float]]],
        concepts: list[tuple[int, int, list[float]]],
    ) -> dict[tuple[str, int], list[Neighbour]]:
        """The nearest stored entities, causal nodes and concepts of some vectors, in one
        query: (kind, item index) to neighbours, best first."""
        params = {
            kind: [{"i": i, "k": _fetch(k), "v": v} for i, k, v in rows]
            for kind, rows in (("entities", entities), ("causal", causal), ("concepts", concepts))
        }
        if not any(params.values()):
            return {}
        label = {"entities": ENTITY, "causal": CAUSAL, "concepts": CONCEPT}
        res = await self.store.query(namespace, _KNN, params, read_only=True)
        out: dict[tuple[str, int], list[Neighbour]] = {}
        for kind, i, node, distance in sorted(res.rows, key=lambda r: float(r[3])):
            hits = out.setdefault((str(kind), int(i)), [])
            uid = str(node.get("uuid", ""))
            if any(h.uuid == uid for h in hits):
                continue
            similarity = max(0.0, min(1.0, 1.0 - float(distance)))
            hits.append(Neighbour(label[str(kind)], clean(node), similarity))
        return out

    # -- pieces -----------------------------------------------------------------------------

    def _entity_node(
        self,
        i: int,
        ents: _Entities,
        stored: dict[int, tuple[Entity, bool]],
        near: dict[tuple[str, int], list[Neighbour]],
    ) -> WrittenNode:
        """How remember reports the entity of row `i`; a new one with the stored entities
        (and the others this text creates) whose names are close in meaning."""
        entity, created = stored[i]
        hits: list[Candidate] = []
        if created:
            hits = [
                Candidate(h.uuid, str(h.properties.get("name", "")), ENTITY, h.similarity)
                for h in near.get(("entities", i), [])
            ]
            for j, (other, other_created) in stored.items():
                vi, vj = ents.rows[i]["vec"], ents.rows[j]["vec"]
                if j == i or not other_created or vi is None or vj is None:
                    continue
                score = min(1.0, float(np.dot(vi, vj)))
                hits.append(Candidate(other.uuid, other.name, ENTITY, score))
        near_dups = self.entities.resolver.near_duplicates(
            [replace(c, similarity=round(c.similarity, 4)) for c in hits],
            exclude=(entity.uuid,),
        )
        return WrittenNode(
            uuid=entity.uuid,
            name=entity.name,
            label=ENTITY,
            created=created,
            similar_existing=similar_nodes(near_dups),
        )

    def _match_causal(
        self,
        links: list[_Link],
        pending: list[tuple[int, str]],
        near: dict[tuple[str, int], list[Neighbour]],
        vec: dict[str, list[float]],
    ) -> None:
        """Match the descriptions no uuid or key matched (`causal_batch.match_new`)."""
        texts = [links[li].text(end) for li, end in pending]
        hits: dict[str, list[Neighbour]] = {}
        for n, t in enumerate(texts):
            hits.setdefault(t, near.get(("causal", n), []))
        matched = match_new(texts, vec, hits, self.causal_threshold)
        for li, end in pending:
            links[li].set(end, matched[links[li].text(end)])

    async def _relations(
        self,
        namespace: str,
        items: _Items,
        ends: list[tuple[str, str] | None],
        real: Callable[[str | None], str | None],
    ) -> list[str]:
        written: list[str] = []
        rows: list[tuple[str, str, str, None]] = []
        for r, pair in zip(items.relations, ends, strict=True):
            if pair is None:
                continue
            a, b = real(pair[0]), real(pair[1])
            label = f"{r.source} -{r.relationship_type}-> {r.target}"
            try:
                rel = check_text(r.relationship_type, "relationship type")
            except InvalidInput as exc:
                logger.info("relation %s skipped: %s", label, exc)
                continue
            if not a or not b or a == b:
                logger.info("relation %s skipped: its ends are one entity", label)
                continue
            rows.append((a, b, rel, None))
            written.append(label)
        await self.entities.link_many(namespace, rows)
        return written

    async def _events(
        self,
        namespace: str,
        items: _Items,
        eids: list[list[str]],
        found: _Lookup,
        vec: dict[str, list[float]],
        real: Callable[[str | None], str | None],
    ) -> list[WrittenNode]:
        rows: dict[tuple[str, int], dict[str, Any]] = {}
        for (desc, t, _), refs in zip(items.events, eids, strict=True):
            ids = [u for u in (real(r) for r in refs) if u]
            row = rows.get((desc, t))
            if row is None:
                row = rows[(desc, t)] = event_row(desc, t, None, ids)
                if (desc, t) not in found.events:
                    row["vec"] = vec[desc]
            else:
                row["eids"] = sorted(set(row["eids"]) | set(ids))
        stored = await write_event_rows(self.store, namespace, list(rows.values()))
        return [
            WrittenNode(
                uuid=str(stored.get((d, t), rows[(d, t)]["uuid"])),
                name=d,
                label=EVENT,
                created=(d, t) not in found.events,
            )
            for d, t, _ in items.events
        ]

    async def _facts(
        self,
        namespace: str,
        items: _Items,
        subjects: list[str | None],
        vec: dict[str, list[float]],
        real: Callable[[str | None], str | None],
    ) -> tuple[list[WrittenNode], list[WrittenNode]]:
        facts: list[WrittenNode] = []
        invalidated: list[WrittenNode] = []
        for (f, p), subject in zip(items.facts, subjects, strict=True):
            if p is None:
                invalidated.extend(await self._end_stated_fact(namespace, f))
                continue
            uid = real(subject)
            if not uid:
                continue
            fw = await write_fact(
                self.store, namespace, {**p, "eids": [uid], "vec": vec[fact_text(p)]}
            )
            facts.append(_fact_node(fw.fact, created=fw.status != "existing"))
            invalidated.extend(_fact_node(o, created=False) for o in fw.invalidated)
        return facts, invalidated

    async def _end_stated_fact(self, namespace: str, f: ExtractedFact) -> list[WrittenNode]:
        """End the current facts `f` names (same subject, predicate and object) at its end.

        The note says when the fact ended, not since when it held ("moved from the
        payments team"): with no such fact stored there is nothing to end, and no start
        to invent.
        """
        assert f.valid_to is not None
        try:
            current = await self.temporal.facts(namespace, subject=f.subject, predicate=f.predicate)
        except (AmbiguousName, InvalidInput) as exc:
            logger.info("ended fact %s not applied: %s", f, exc)
            return []
        ended: list[WrittenNode] = []
        for fact in current:
            if normalize_name(fact.object) != normalize_name(f.object):
                continue
            if fact.valid_from >= f.valid_to:
                continue  # it started after the stated end: another spell, left as is
            done = await self.temporal.invalidate_fact(namespace, fact.uuid, f.valid_to)
            ended.append(_fact_node(done, created=False))
        return ended

    async def _causal(
        self,
        namespace: str,
        items: _Items,
        eids: list[list[str]],
        events: list[WrittenNode],
        real: Callable[[str | None], str | None],
    ) -> list[str]:
        batch = LinkBatch()
        event_texts = [(n.uuid, n.name) for n in events]
        for li, (link, refs) in enumerate(zip(items.links, eids, strict=True)):
            cm, em = link.c, link.e
            if cm is None or em is None:
                continue
            if same_node(cm, em, self.causal_threshold):
                logger.info("causal link %r -> %r skipped: one node", link.cause, link.effect)
                continue
            try:
                batch.link(
                    li,
                    batch.node(cm),
                    batch.node(em),
                    link.confidence,
                    link.evidence,
                    [u for u in (real(r) for r in refs) if u],
                    referred_events(link.cause, link.effect, link.evidence, event_texts),
                )
            except InvalidInput as exc:
                logger.info("causal link %r -> %r skipped: %s", link.cause, link.effect, exc)
        rows = await batch.write(self.store, namespace)
        return [
            f"{c_desc} -> {e_desc} ({float(conf):.2f})"
            for _, _, c_desc, _, e_desc, conf in sorted(rows, key=lambda r: int(r[0]))
        ]


@dataclass
class _Items:
    """The extraction's items, checked; what the graphs would refuse is left out."""

    entities: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])
    relations: list[ExtractedRelation] = field(default_factory=list[ExtractedRelation])
    events: list[tuple[str, int, list[str]]] = field(
        default_factory=list[tuple[str, int, list[str]]]
    )
    facts: list[tuple[ExtractedFact, dict[str, Any] | None]] = field(
        default_factory=list[tuple[ExtractedFact, dict[str, Any] | None]]
    )
    links: list[_Link] = field(default_factory=list[_Link])
    concepts: dict[str, tuple[str, str | None]] = field(
        default_factory=dict[str, tuple[str, str | None]]
    )

    @classmethod
    def of(cls, ex: Extraction, source: str | None) -> _Items:
        """Check the extraction's items (`source`: who stated its facts)."""
        out = cls()
        seen: set[tuple[str, str]] = set()
        for e in ex.entities:
            try:
                name = check_text(e.name, "entity name")
                etype = type_key(e.entity_type or "entity")
            except InvalidInput as exc:
                logger.info("entity %s skipped: %s", e, exc)
                continue
            if (name_key(name), etype) not in seen:
                seen.add((name_key(name), etype))
                out.entities.append((name, etype))
        out.relations = list(ex.relations)
        for ev in ex.events:
            try:
                desc = check_text(ev.description, "description", 4096)
                t = epoch_ms(parse_time(ev.occurred_at, "occurred_at"))
            except InvalidInput as exc:
                logger.info("event %s skipped: %s", ev, exc)
                continue
            out.events.append((desc, t, list(ev.entities)))
        for f in ex.facts:
            if f.valid_from == UNKNOWN_START and f.valid_to is not None:
                out.facts.append((f, None))
                continue
            try:
                out.facts.append(
                    (
                        f,
                        fact_params(
                            f.subject, f.predicate, f.object, f.valid_from, f.valid_to, source
                        ),
                    )
                )
            except InvalidInput as exc:
                logger.info("fact %s skipped: %s", f, exc)
        for link in ex.causal_links:
            try:
                cause = _causal_text(link.cause, "cause")
                effect = _causal_text(link.effect, "effect")
            except InvalidInput as exc:
                logger.info("causal link %s skipped: %s", link, exc)
                continue
            out.links.append(
                _Link(cause, effect, link.confidence, link.evidence, list(link.entities))
            )
        for c in ex.concepts:
            try:
                cname = check_text(c.name, "concept name")
                cdesc = (
                    check_text(c.description, "description", MAX_TEXT) if c.description else None
                )
            except InvalidInput as exc:
                logger.info("concept %s skipped: %s", c, exc)
                continue
            key = name_key(cname)
            if key in out.concepts:
                # As a second add_concept would: a new description replaces the old one.
                first, old = out.concepts[key]
                out.concepts[key] = (first, cdesc if cdesc is not None else old)
            else:
                out.concepts[key] = (cname, cdesc)
        return out


def _causal_text(value: str, what: str) -> str:
    text = check_text(value, what, MAX_TEXT)
    if not normalize_description(text):
        raise InvalidInput(f"{what} {text!r} has no letters or digits; describe it in words")
    return text


def _stored_causal(text: str, found: _Lookup) -> Match | None:
    """The stored node a description names by uuid or normalised key; None to match it by
    meaning."""
    for how, table in (("uuid", found.causal_uuid), ("normalized", found.causal_key)):
        hit = table.get(text)
        if hit is not None:
            return Match(text, hit[1], [], hit[0], how)  # type: ignore[arg-type]
    return None


def _concept_rows(items: _Items, found: _Lookup) -> tuple[list[dict[str, Any]], dict[int, str]]:
    """`WRITE_CONCEPTS` rows of the extraction's concepts, and the text to embed for those
    that are new or whose description changed (as `add_concept` decides)."""
    rows: list[dict[str, Any]] = []
    texts: dict[int, str] = {}
    for i, (key, (cname, cdesc)) in enumerate(items.concepts.items()):
        old = found.concepts.get(key)
        if old is None or (cdesc is not None and cdesc != old.get("description")):
            shown = str(old["name"]) if old else cname
            texts[i] = f"{shown}: {cdesc}" if cdesc else shown
        rows.append(
            {
                "i": i,
                "k": key,
                "uuid": new_uuid(),
                "name": cname,
                "desc": cdesc,
                "origin": None,
                # Named by a text now: no longer only implied by a memory.
                "unmark": old is not None and old.get("origin") is not None,
                "vec": None,
                "similar": [],
                "ents": [],
            }
        )
    return rows, texts


def _similar_within(
    rows: list[dict[str, Any]], written: dict[int, tuple[Concept, bool]]
) -> list[tuple[str, str, float]]:
    """`S_SIMILAR_TO` between concepts of one text: a later concept to an earlier one."""
    out: list[tuple[str, str, float]] = []
    for j, later in enumerate(rows):
        for earlier in rows[:j]:
            if later["vec"] is None or earlier["vec"] is None:
                continue
            score = float(np.dot(later["vec"], earlier["vec"]))
            if score >= _CONCEPT_SIMILAR and earlier["i"] in written and j in written:
                out.append(
                    (written[j][0].uuid, written[earlier["i"]][0].uuid, round(min(1.0, score), 4))
                )
    return out
