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

This module runs the steps and writes; its pieces live beside it: the checked items
of the extraction (`remember/items.py`), the lookup and k-NN queries
(`remember/lookup.py`), the entity rows and how each entity is reported
(`remember/entities.py`), and the concept rows and similarity links
(`remember/concepts.py`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from polyg_shared.intents import ExtractedFact, ExtractedRelation, Extraction
from polyg_shared.nodes import Entity, Fact, MemoryCategory
from polyg_shared.retrieval import RememberResult, WrittenNode

from polyg_core.errors import AmbiguousName, InvalidInput, NodeNotFound, check_choice
from polyg_core.graphs.base import (
    check_text,
    embed_texts,
    ensure_vectors,
    name_key,
    now_ms,
    to_ms,
)
from polyg_core.graphs.bulk import event_row, write_event_rows
from polyg_core.graphs.causal import DEFAULT_MATCH_THRESHOLD, LinkBatch
from polyg_core.graphs.causal_batch import match_new, same_node
from polyg_core.graphs.entity import EntityGraph, merge_entity_rows
from polyg_core.graphs.entity_refs import decide_entity, epoch_ms
from polyg_core.graphs.relation_time import RelationDates
from polyg_core.graphs.semantic import MAX_CONTENT, link_similar_uuids, write_concepts, write_memory
from polyg_core.graphs.temporal import TemporalGraph, write_fact
from polyg_core.remember.concepts import CONCEPT_K, concept_rows, similar_within, stored_similar
from polyg_core.remember.entities import Entities, entity_node, is_row
from polyg_core.remember.items import CausalItem, Items
from polyg_core.remember.links import referred_events, represented_entities
from polyg_core.remember.lookup import Lookup, lookup, nearest, stored_causal
from polyg_core.remember.membership import MEMBERSHIP_PREDICATES
from polyg_core.resolve import NameResolver
from polyg_core.storage.schema import CONCEPT, ENTITY, EVENT
from polyg_core.storage.store import FalkorStore
from polyg_core.storage.vector import Neighbour
from polyg_core.text.normalize import normalize_name

logger = logging.getLogger(__name__)

_CAUSAL_K = 5


def _fact_node(fact: Fact, *, created: bool) -> WrittenNode:
    """A written fact as remember reports it."""
    return WrittenNode(
        uuid=fact.uuid,
        name=f"{fact.subject} {fact.predicate} {fact.object}",
        label="T_Fact",
        created=created,
    )


def _category(category: str | None, ex: Extraction) -> MemoryCategory:
    """The memory's category: the caller's, else the extractor's, else episodic.

    Raises:
        InvalidInput: an unknown category.
    """
    value = category or (ex.category.value if ex.category else "episodic")
    return check_choice(MemoryCategory, value, "memory category")


def _explicit_entities(items: Items, found: Lookup, ents: Entities) -> list[WrittenNode | int]:
    """The extraction's own entities: a stored one, or the index of the row to write."""
    explicit: list[WrittenNode | int] = []
    for name, etype in items.entities:
        try:
            hit = decide_entity(name, found.entities)
        except AmbiguousName:
            hit = None  # written with the extractor's type: that entity, or a new one
        if hit is not None:
            explicit.append(WrittenNode(uuid=hit.uuid, name=hit.name, label=ENTITY, created=False))
            ents.chosen[normalize_name(hit.name)] = hit.uuid
            ents.chosen[normalize_name(name)] = hit.uuid
        else:
            marker = ents.row(name, etype)
            ents.chosen[normalize_name(name)] = marker
            explicit.append(int(marker[4:]))
    return explicit


def _created_implicitly(
    resolver: NameResolver,
    ents: Entities,
    stored: dict[int, tuple[Entity, bool]],
    near: dict[tuple[str, int], list[Neighbour]],
) -> list[WrittenNode]:
    """The entities other items named that this write created."""
    return [
        entity_node(resolver, i, ents, stored, near)
        for i in sorted(ents.implicit)
        if i in stored and stored[i][1]
    ]


def _refs(ents: Entities, names: Sequence[str], what: str) -> list[str]:
    """The entity references of `names`; a name that cannot be one is left out and logged."""
    out: list[str] = []
    for raw in names:
        try:
            out.append(ents.ref(raw))
        except (AmbiguousName, InvalidInput) as exc:
            logger.info("%s: entity %r left out: %s", what, raw, exc)
    return out


def _ended_predicates(predicate: str) -> list[str]:
    """What a stated end ends: its own predicate, and for a departure from a place every
    membership held there (`MEMBERSHIP_PREDICATES`)."""
    if predicate not in MEMBERSHIP_PREDICATES:
        return [predicate]
    return [predicate, *sorted(MEMBERSHIP_PREDICATES - {predicate})]


@dataclass
class _ItemEnds:
    """The entities each relation, event, causal link and fact of an extraction names."""

    relations: list[tuple[str, str] | None]
    events: list[list[str]]
    links: list[list[str]]
    subjects: list[str | None]

    @classmethod
    def of(cls, items: Items, found: Lookup, ents: Entities) -> _ItemEnds:
        return cls(
            relations=[_relation_ends(ents, r) for r in items.relations],
            events=[_refs(ents, ents_of, f"event {d!r}") for d, _, ents_of in items.events],
            links=[_refs(ents, link.entities, "causal link") for link in items.links],
            subjects=[_fact_subject(found, ents, p) for _, p in items.facts],
        )


def _relation_ends(ents: Entities, relation: ExtractedRelation) -> tuple[str, str] | None:
    try:
        return (ents.ref(relation.source), ents.ref(relation.target))
    except (AmbiguousName, InvalidInput) as exc:
        logger.info("relation %s skipped: %s", relation, exc)
        return None


def _fact_subject(found: Lookup, ents: Entities, p: dict[str, Any] | None) -> str | None:
    if p is None:
        return None
    try:
        # The subject is named as on any fact write; a name several entities
        # answer to skips the fact (the memory and its other parts are written).
        hit = decide_entity(p["subject"], found.entities)
        return hit.uuid if hit is not None else ents.ref(p["subject"])
    except (AmbiguousName, InvalidInput) as exc:
        logger.info("fact %s skipped: %s", p, exc)
        return None


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
        cat = _category(category, ex)
        tag_list = list(dict.fromkeys(check_text(t, "tag") for t in tags))
        embedder, resolver = self.entities.embedder, self.entities.resolver
        await ensure_vectors(self.store, namespace, embedder)
        said = f"{who} ({source_id})" if who and source_id else (who or source_id or "")
        items = Items.of(ex, said.strip()[:256] or None)
        found = await lookup(self.store, namespace, items)

        # -- entities: the extraction's own (typed), then the names other items use ------
        ents = Entities(found.entities)
        explicit = _explicit_entities(items, found, ents)
        ends = _ItemEnds.of(items, found, ents)
        for link in items.links:
            link.c = stored_causal(link.cause, found)
            link.e = stored_causal(link.effect, found)

        # -- one embedding call for every text stored or matched by meaning -------------
        c_rows, concept_text = concept_rows(items, found, text)
        vec = await self._embed(items, ents, c_rows, concept_text, text)

        # -- one k-NN query: near-duplicate entities, causal paraphrases, similar concepts
        pending = [(li, end) for li, link in enumerate(items.links) for end in link.open_ends()]
        near = await nearest(
            self.store,
            namespace,
            [(i, resolver.max_candidates + 3, ents.rows[i]["vec"]) for i in sorted(ents.embed)],
            [(n, _CAUSAL_K, vec[items.links[li].text(end)]) for n, (li, end) in enumerate(pending)],
            [(i, CONCEPT_K + 1, c_rows[i]["vec"]) for i in concept_text],
        )
        self._match_causal(items.links, pending, near, vec)
        stored_similar(c_rows, concept_text, found, near)

        # -- writes: entities, relations, events, facts, causal links, concepts, memory --
        stored = await merge_entity_rows(self.store, namespace, ents.rows)

        def real(ref: str | None) -> str | None:
            if ref is None or not is_row(ref):
                return ref
            got = stored.get(int(ref[4:]))
            return got[0].uuid if got else None

        entity_nodes = [
            n if isinstance(n, WrittenNode) else entity_node(resolver, n, ents, stored, near)
            for n in explicit
        ]
        represented = {n.name: n.uuid for n in entity_nodes}
        entity_nodes += _created_implicitly(resolver, ents, stored, near)
        relations = await self._relations(namespace, items, ends.relations, real)
        event_nodes = await self._events(namespace, items, ends.events, found, real)
        facts, invalidated = await self._facts(namespace, items, ends.subjects, real)
        causal = await self._causal(namespace, items, ends.links, event_nodes, real)
        concepts = await self._concepts(namespace, items, c_rows, represented)
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

    async def _embed(
        self,
        items: Items,
        ents: Entities,
        c_rows: list[dict[str, Any]],
        concept_text: dict[int, str],
        text: str,
    ) -> dict[str, list[float]]:
        """Embed every text stored or matched by meaning in one call; set the rows' vectors."""
        texts = [ents.rows[i]["name"] for i in sorted(ents.embed)]
        texts += [m for link in items.links for m in link.unmatched()]
        texts += list(concept_text.values())
        texts.append(text)
        unique = list(dict.fromkeys(texts))
        vec = dict(zip(unique, await embed_texts(self.entities.embedder, unique), strict=True))
        for i in ents.embed:
            ents.rows[i]["vec"] = vec[ents.rows[i]["name"]]
        for i, shown in concept_text.items():
            c_rows[i]["vec"] = vec[shown]
        return vec

    async def _concepts(
        self,
        namespace: str,
        items: Items,
        c_rows: list[dict[str, Any]],
        represented: dict[str, str],
    ) -> list[WrittenNode]:
        """Write the concepts, linked to the entities they name and to similar concepts."""
        for i, (cname, cdesc) in enumerate(items.concepts.values()):
            named = represented_entities(cname, cdesc, represented)
            c_rows[i]["ents"] = list(dict.fromkeys(represented[n] for n in named))
        written = await write_concepts(self.store, namespace, c_rows)
        concepts = [
            WrittenNode(uuid=c.uuid, name=c.name, label=CONCEPT, created=created)
            for c, created in (written[i] for i in sorted(written))
        ]
        await link_similar_uuids(self.store, namespace, similar_within(c_rows, written))
        return concepts

    # -- pieces -----------------------------------------------------------------------------

    def _match_causal(
        self,
        links: list[CausalItem],
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
        items: Items,
        ends: list[tuple[str, str] | None],
        real: Callable[[str | None], str | None],
    ) -> list[str]:
        written: list[str] = []
        rows: list[tuple[str, str, str, None]] = []
        dates: list[RelationDates] = []
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
            dates.append(
                (
                    epoch_ms(r.valid_from) if r.valid_from else None,
                    epoch_ms(r.valid_to) if r.valid_to else None,
                )
            )
            written.append(label)
        await self.entities.link_many(namespace, rows, dates)
        return written

    async def _events(
        self,
        namespace: str,
        items: Items,
        eids: list[list[str]],
        found: Lookup,
        real: Callable[[str | None], str | None],
    ) -> list[WrittenNode]:
        rows: dict[tuple[str, int], dict[str, Any]] = {}
        for (desc, t, _), refs in zip(items.events, eids, strict=True):
            ids = [u for u in (real(r) for r in refs) if u]
            row = rows.get((desc, t))
            if row is None:
                row = rows[(desc, t)] = event_row(desc, t, None, ids)
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
        items: Items,
        subjects: list[str | None],
        real: Callable[[str | None], str | None],
    ) -> tuple[list[WrittenNode], list[WrittenNode]]:
        facts: list[WrittenNode] = []
        invalidated: list[WrittenNode] = []
        for (f, p), subject in zip(items.facts, subjects, strict=True):
            if p is None:
                invalidated.extend(await self._end_stated_fact(namespace, f))
                await self._end_stated_relations(namespace, f)
                continue
            uid = real(subject)
            if not uid:
                continue
            fw = await write_fact(self.store, namespace, {**p, "eids": [uid]})
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
        current: list[Fact] = []
        try:
            for predicate in _ended_predicates(f.predicate):
                current += await self.temporal.facts(
                    namespace, subject=f.subject, predicate=predicate
                )
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

    async def _end_stated_relations(self, namespace: str, f: ExtractedFact) -> int:
        """End the open relations `f` names ("Sam left the Atlas team": Sam -member_of->
        Atlas team) at its end, so what holds now no longer names them; their start is
        kept. Writes no relation where none is stored. The count ended."""
        assert f.valid_to is not None
        end = epoch_ms(f.valid_to)
        try:
            source = await self.entities.resolve(namespace, f.subject)
        except (NodeNotFound, AmbiguousName, InvalidInput) as exc:
            logger.info("ended relation %s not applied: %s", f, exc)
            return 0
        ends = {name_key(p) for p in _ended_predicates(f.predicate)}
        rows: list[tuple[str, str, str, None]] = []
        for r in await self.entities.relations_of(namespace, source.uuid, "out"):
            if (
                name_key(r.relationship_type) in ends
                and normalize_name(r.target_name or "") == normalize_name(f.object)
                and r.valid_to is None
                and (r.valid_from is None or epoch_ms(r.valid_from) < end)
            ):
                rows.append((r.source, r.target, r.relationship_type, None))
        await self.entities.link_many(namespace, rows, [(None, end)] * len(rows))
        return len(rows)

    async def _causal(
        self,
        namespace: str,
        items: Items,
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
