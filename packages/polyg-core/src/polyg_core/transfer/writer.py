"""Writing records into a memory namespace through the graph classes, in batches.

Records are buffered in batches; each batch is written kind by kind (entities
first, so relations and events find their typed entities), each kind in a few
queries: names resolved in one lookup, one UNWIND write (`EntityGraph.add_many`,
`graphs/bulk.py`, `graphs/semantic_batch.py`, `graphs/causal_batch.py` for causal
nodes, links and solutions; facts one `ADD_FACT` each, `TemporalGraph.add_facts`). The
writes deduplicate as the per-record graph methods do (a fact is matched by its
exported uuid, or by subject, predicate, object and start), so importing a file
twice creates nothing the second time. A record the graphs reject is reported with its line number and the import
goes on: a batch that fails as a whole on something one record can cause is written
again record by record, so that record fails alone.
"""

from __future__ import annotations

import logging
import time
import uuid as uuidlib
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

import anyio
from polyg_shared.nodes import Entity

from polyg_core.errors import (
    AmbiguousName,
    InvalidInput,
    NodeNotFound,
    StorageError,
    StorageUnavailable,
)
from polyg_core.graphs.base import stored_uuids
from polyg_core.graphs.bulk import (
    BulkResult,
    EventItem,
    RelationItem,
    add_events,
    add_relations,
    exact_entity_uuids,
)
from polyg_core.graphs.causal import CausalGraph
from polyg_core.graphs.causal_batch import (
    CausalLinkItem,
    CausalNodeItem,
    SolutionItem,
    add_causal_links,
    add_causal_nodes,
    add_solutions,
)
from polyg_core.graphs.entity import EntityGraph
from polyg_core.graphs.semantic import SemanticGraph
from polyg_core.graphs.semantic_batch import ConceptItem, MemoryItem, SemanticBatch
from polyg_core.graphs.temporal import FactItem, TemporalGraph
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.resolve import NameResolver
from polyg_core.storage.namespace import validate_namespace
from polyg_core.storage.schema import (
    CAUSAL,
    CONCEPT,
    ENTITY,
    EVENT,
    FACT,
    MEMORY,
    R_CAUSES,
    R_RELATES,
    R_SOLVED_BY,
)
from polyg_core.storage.store import FalkorStore
from polyg_core.text.normalize import normalize_description
from polyg_core.transfer.embedcache import PrefetchEmbedder
from polyg_core.transfer.records import (
    KINDS,
    CausalLinkRecord,
    CausalNodeRecord,
    ConceptRecord,
    EntityRecord,
    EventRecord,
    FactRecord,
    Item,
    LineError,
    MemoryRecord,
    Record,
    RelationRecord,
    SolutionRecord,
)
from polyg_core.transfer.stored import raw_props

logger = logging.getLogger(__name__)

DEFAULT_BATCH = 500

R = TypeVar("R", bound=Record)
_RECORD_ERRORS = (InvalidInput, NodeNotFound, AmbiguousName, StorageError)
"""Errors that concern one record; anything else (FalkorDB down, wrong embedding
model) stops the import. `StorageUnavailable` is a `StorageError` but concerns every
record, so it is re-raised before these are caught."""


async def _each(write: Callable[[list[Any]], Any], items: list[Any]) -> list[Any]:
    """Results of a batched write; when the batch fails as a whole on something one
    record can cause, the items one by one (each failure then its own result)."""
    try:
        return list(await write(items))
    except StorageUnavailable:
        raise
    except _RECORD_ERRORS:
        out: list[Any] = []
        for item in items:
            try:
                out.extend(await write([item]))
            except StorageUnavailable:
                raise
            except _RECORD_ERRORS as exc:
                out.append(exc)
        return out


@dataclass
class KindCounts:
    """What happened to the records of one kind."""

    created: int = 0
    merged: int = 0
    failed: int = 0


@dataclass
class ImportReport:
    """The outcome of an import: counts per kind and every failed record with its line.

    `merged` counts records that matched something already stored (a re-import
    merges everything); `skipped` counts records not written because the import
    was a dry run or was aborted by `strict` validation.
    """

    namespace: str
    records: int = 0
    skipped: int = 0
    kinds: dict[str, KindCounts] = field(default_factory=dict[str, KindCounts])
    errors: list[LineError] = field(default_factory=list[LineError])
    dry_run: bool = False
    aborted: bool = False
    elapsed_s: float = 0.0

    def kind(self, kind: str) -> KindCounts:
        """The counters of one kind (created on first use)."""
        return self.kinds.setdefault(kind, KindCounts())

    def count(self, kind: str, line: int, outcome: bool | Exception) -> bool:
        """Count one record's outcome: an error (kept with its line), something created
        (True) or something already stored it merged into (False). True when created."""
        counts = self.kind(kind)
        if isinstance(outcome, Exception):
            counts.failed += 1
            self.errors.append(LineError(line, f"{kind}: {outcome}"))
            return False
        if outcome:
            counts.created += 1
        else:
            counts.merged += 1
        return outcome

    @property
    def created(self) -> int:
        """Records that created something new."""
        return sum(k.created for k in self.kinds.values())

    @property
    def merged(self) -> int:
        """Records that matched something already stored."""
        return sum(k.merged for k in self.kinds.values())

    @property
    def failed(self) -> int:
        """Records that could not be read or written."""
        return len(self.errors)

    @property
    def rate(self) -> float:
        """Records per second."""
        return self.records / self.elapsed_s if self.elapsed_s > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary."""
        return {
            "graph": self.namespace,
            "records": self.records,
            "created": self.created,
            "merged": self.merged,
            "skipped": self.skipped,
            "failed": self.failed,
            "dry_run": self.dry_run,
            "aborted": self.aborted,
            "elapsed_s": round(self.elapsed_s, 3),
            "records_per_s": round(self.rate, 1),
            "kinds": {
                k: {"created": c.created, "merged": c.merged, "failed": c.failed}
                for k, c in sorted(self.kinds.items(), key=lambda kv: KINDS.index(kv[0]))
            },
            "errors": [{"line": e.line, "message": e.message} for e in self.errors],
        }


ProgressFn = Callable[[int], None]


def validate(items: Iterable[Item], report: ImportReport) -> None:
    """Read every record without writing: count them per kind, collect the errors."""
    for _, item in items:
        if isinstance(item, LineError):
            report.errors.append(item)
        else:
            report.records += 1
            report.kind(item.kind)


def texts_of(rec: Record) -> list[str]:
    """The texts the graphs will embed when writing `rec` (prefetched in one batch)."""
    if isinstance(rec, EntityRecord):
        return [rec.name]
    if isinstance(rec, RelationRecord):
        return []  # ends are found by name; only a fuzzy fallback embeds them
    if isinstance(rec, EventRecord):
        return []  # events carry no vector; an entity they create is embedded then
    if isinstance(rec, FactRecord):
        # facts carry no vector either; a subject kept as text names no entity
        return [rec.subject, *rec.entities] if rec.link_subject else list(rec.entities)
    if isinstance(rec, CausalLinkRecord):
        return [rec.cause, rec.effect, *rec.entities]
    if isinstance(rec, CausalNodeRecord):
        return [rec.description, *rec.entities]
    if isinstance(rec, SolutionRecord):
        return [rec.problem, rec.solution]
    if isinstance(rec, ConceptRecord):
        shown = f"{rec.name}: {rec.description}" if rec.description else rec.name
        return [shown, *rec.entities]
    return [rec.content, *rec.concepts]


def _stored_origin(rec: Record) -> str | None:
    """The `origin` a node was stored with (an entity or concept only implied by another
    write), None for one named explicitly or a record written by hand."""
    origin = rec.stored.get("origin")
    return str(origin) if origin is not None else None


def _stored_uuid(rec: Record) -> str | None:
    """The uuid a record's node had where it was exported (None: written by hand)."""
    uid = rec.stored.get("uuid")
    return uid if isinstance(uid, str) and uid else None


CREATED_PROPS: Final[dict[str, tuple[str, ...]]] = {
    MEMORY: (
        "content",
        "category",
        "tags",
        "created_at",
        "created_at_iso",
        "last_accessed",
        "recorded_at",
        "source_id",
    ),
    CONCEPT: (
        "name",
        "description",
        "created_at",
        "created_at_iso",
        "updated_at",
        "updated_at_iso",
        "origin",
    ),
    CAUSAL: ("description", "node_type", "created_at", "created_at_iso"),
}
"""Per label, the properties its graph writes on a node it creates (the uuid, the keys it
is matched on and the embedding aside): those a stored node lacks are removed. An
entity's are filled by `graphs/entity.entity_row` itself."""


async def created_with(
    store: FalkorStore, namespace: str, label: str, records: Sequence[Record]
) -> list[dict[str, Any] | None]:
    """Per record, the exact properties a node it creates is written with: those its
    export stored (`raw_props`), None for the ones the graph would add that the stored
    node did not have, and no uuid where another node of `label` holds it already (that
    uuid stays with that node). None for a record without stored properties."""
    out: list[dict[str, Any] | None] = []
    for rec in records:
        if not rec.stored:
            out.append(None)
            continue
        props: dict[str, Any] = dict.fromkeys(CREATED_PROPS.get(label, ()))
        props.update(raw_props(rec))
        out.append(props)
    taken = await stored_uuids(
        store, namespace, label, [p["uuid"] for p in out if p is not None and p.get("uuid")]
    )
    for p in out:
        if p is not None and p.get("uuid") in taken:
            del p["uuid"]
    return out


@dataclass
class RecordWriter:
    """Writes records into one namespace through the graph classes.

    Args:
        store: the FalkorDB store.
        entities / temporal / causal / semantic: the graphs records are written through.
        batch_size: records buffered per batch (entities of a batch are one query).
    """

    store: FalkorStore
    entities: EntityGraph
    temporal: TemporalGraph
    causal: CausalGraph
    semantic: SemanticGraph
    batch_size: int = DEFAULT_BATCH

    cache: PrefetchEmbedder | None = None
    # Called with the namespace after an import that wrote memories: `of(memory)` sets it
    # to recall's catalogue update, so the first recall after a bulk import does not
    # build the lexical catalogue itself.
    after_memories: Callable[[str], Awaitable[object]] | None = None
    _similar: list[tuple[str, dict[str, float]]] = field(
        default_factory=list[tuple[str, dict[str, float]]], init=False, repr=False
    )

    @classmethod
    def of(cls, memory: Any, batch_size: int = DEFAULT_BATCH) -> RecordWriter:
        """A writer over the store and embedder of a `polyg_core.memory.Memory`.

        After an import that wrote memories it brings the memory's recall catalogue up
        to date (the file a new process reads for its first recall).
        """
        writer = cls.build(memory.store, memory.embedder, batch_size=batch_size)
        writer.after_memories = memory.pipeline.catalogue.get
        return writer

    @classmethod
    def build(
        cls, store: FalkorStore, embedder: Embedder, batch_size: int = DEFAULT_BATCH
    ) -> RecordWriter:
        """A writer whose graphs embed each batch's texts in batched calls."""
        cache = PrefetchEmbedder(embedder)
        resolver = NameResolver(store, cache)
        entities = EntityGraph(store, cache, resolver)
        return cls(
            store,
            entities,
            TemporalGraph(store, cache, resolver),
            CausalGraph(store, cache, resolver),
            SemanticGraph(store, cache, resolver, entities),
            batch_size=batch_size,
            cache=cache,
        )

    async def run(
        self,
        namespace: str,
        items: Callable[[], Iterator[Item]],
        *,
        strict: bool = False,
        dry_run: bool = False,
        on_progress: ProgressFn | None = None,
    ) -> ImportReport:
        """Import records into `namespace`.

        Args:
            namespace: the memory graph written to.
            items: opens the record stream (called twice with `strict`: validate, then write).
            strict: validate the whole stream, then rehearse the import on a staging
                namespace seeded with the target's entities and events; any record
                failing either way aborts before writing.
            dry_run: validate only; nothing is written.
            on_progress: called with the number of records handled so far.

        Raises:
            StorageUnavailable: FalkorDB cannot be reached.
            EmbeddingMismatch: the namespace was built with another embedding model.
        """
        validate_namespace(namespace)
        report = ImportReport(namespace=namespace, dry_run=dry_run)
        started = time.perf_counter()
        if dry_run or strict:
            validate(items(), report)
            if not dry_run and not report.errors:
                # A record can also fail when written (a self-relation, a missing typed
                # end, an ambiguous name): rehearse the whole import on a copy of the
                # namespace, so a strict import that would fail writes nothing.
                rehearsal = await self._rehearse(namespace, items)
                report.errors = rehearsal.errors
            if dry_run or report.errors:
                report.aborted = strict and bool(report.errors) and not dry_run
                report.skipped = report.records
                report.elapsed_s = time.perf_counter() - started
                if on_progress:
                    on_progress(report.records + len(report.errors))
                return report
            report.records = 0
            report.kinds.clear()
        return await self._write_all(namespace, items, report, started, on_progress)

    async def _rehearse(self, namespace: str, items: Callable[[], Iterator[Item]]) -> ImportReport:
        """Import into a throwaway namespace seeded from `namespace`; what failed there.

        The staging namespace holds the target's entities and events (without
        embeddings): the names and event references a record can fail on resolve by
        uuid, exact or normalised name, which need no vectors. GRAPH.COPY would be
        exact but forks the server, and fails while an AOF rewrite is running.
        """
        staging = f"{namespace[:40]}.strict-{uuidlib.uuid4().hex[:12]}"
        try:
            if namespace in await self.store.list_graphs():
                await self._seed(namespace, staging)
            report = ImportReport(namespace=staging)
            return await self._write_all(staging, items, report, time.perf_counter(), None)
        finally:
            await self.store.delete_graph(staging)

    async def _seed(self, namespace: str, staging: str) -> None:
        ents = await self.store.query(
            namespace,
            f"MATCH (e:{ENTITY}) RETURN e.uuid, e.name, e.name_key, e.entity_type, e.properties",
            read_only=True,
        )
        evs = await self.store.query(
            namespace,
            f"MATCH (ev:{EVENT}) RETURN ev.uuid, ev.description, ev.occurred_at",
            read_only=True,
        )
        await self.store.ensure_schema(staging)
        await self.store.query(
            staging,
            f"UNWIND $rows AS r CREATE (:{ENTITY} {{uuid: r[0], name: r[1], name_key: r[2], "
            "entity_type: r[3], properties: r[4]})",
            {"rows": [list(r) for r in ents.rows]},
        )
        await self.store.query(
            staging,
            f"UNWIND $rows AS r CREATE (:{EVENT} {{uuid: r[0], description: r[1], "
            "occurred_at: r[2]})",
            {"rows": [list(r) for r in evs.rows]},
        )

    async def _write_all(
        self,
        namespace: str,
        items: Callable[[], Iterator[Item]],
        report: ImportReport,
        started: float,
        on_progress: ProgressFn | None,
    ) -> ImportReport:
        """Write the records batch by batch; the next batch's texts are embedded while
        the current one is written (the model and FalkorDB work on separate cores)."""

        def batches() -> Iterator[tuple[list[tuple[int, Record]], int]]:
            batch: list[tuple[int, Record]] = []
            seen = 0
            for line, item in items():
                seen += 1
                if isinstance(item, LineError):
                    report.errors.append(item)
                    continue
                batch.append((line, item))
                if len(batch) >= self.batch_size:
                    yield batch, seen
                    batch = []
            yield batch, seen

        def texts(batch: Sequence[tuple[int, Record]]) -> list[str]:
            return [t for _, rec in batch for t in texts_of(rec)]

        cache = self.cache
        pending = batches()
        current: tuple[list[tuple[int, Record]], int] | None = next(pending)
        if cache is not None:
            await cache.prefetch(texts(current[0]))
        try:
            while current is not None:
                nxt = next(pending, None)
                upcoming = texts(nxt[0]) if cache is not None and nxt is not None else []
                async with anyio.create_task_group() as tg:
                    if cache is not None and upcoming:
                        tg.start_soon(cache.prefetch, upcoming)
                    await self._write_batch(namespace, current[0], report)
                if cache is not None:
                    cache.retain(upcoming)
                if on_progress:
                    on_progress(current[1])
                current = nxt
        except BaseExceptionGroup as group:
            # Callers expect polyg's own error (storage down, embedder failed), not a group.
            raise group.exceptions[0] from group
        finally:
            if cache is not None:
                cache.clear()
        similar, self._similar = self._similar, []
        for name, links in similar:
            await self.semantic.link_similar(namespace, name, links)
        wrote = report.kinds.get("memory")
        if self.after_memories is not None and wrote is not None and wrote.created + wrote.merged:
            await self.after_memories(namespace)
        report.errors.sort(key=lambda e: e.line)
        report.elapsed_s = time.perf_counter() - started
        return report

    async def _write_batch(
        self, namespace: str, batch: Sequence[tuple[int, Record]], report: ImportReport
    ) -> None:
        if not batch:
            return
        by_kind: dict[str, list[tuple[int, Any]]] = {k: [] for k in KINDS}
        for line, rec in batch:
            by_kind[rec.kind].append((line, rec))
        report.records += len(batch)
        await self._write_kinds(namespace, by_kind, report)

    async def _write_kinds(
        self, namespace: str, by_kind: dict[str, list[tuple[int, Any]]], report: ImportReport
    ) -> None:
        restore = _Restore()
        await self._entities(namespace, by_kind["entity"], report)
        await self._relations(namespace, by_kind["relation"], report, restore)
        await restore.edges(self.store, namespace, ENTITY, R_RELATES, ENTITY)
        await self._events(namespace, by_kind["event"], report, restore)
        await restore.nodes(self.store, namespace, EVENT)
        await self._facts(namespace, by_kind["fact"], report, restore)
        await restore.nodes(self.store, namespace, FACT)
        await self._causal_nodes(namespace, by_kind["causal_node"], report, restore)
        await restore.nodes(self.store, namespace, CAUSAL)
        await self._causal_links(namespace, by_kind["causal_link"], report, restore)
        await restore.edges(self.store, namespace, CAUSAL, R_CAUSES, CAUSAL)
        await self._solutions(namespace, by_kind["solution"], report, restore)
        await restore.edges(self.store, namespace, CAUSAL, R_SOLVED_BY, CAUSAL)
        await self._concepts(namespace, by_kind["concept"], report, restore)
        await restore.nodes(self.store, namespace, CONCEPT)
        await self._memories(namespace, by_kind["memory"], report)

    async def _one(self, report: ImportReport, kind: str, line: int, write: Any) -> None:
        try:
            outcome: bool | Exception = await write
        except StorageUnavailable:
            raise
        except _RECORD_ERRORS as exc:
            outcome = exc
        report.count(kind, line, outcome)

    async def _created_with(
        self, namespace: str, label: str, items: Sequence[tuple[int, Record]]
    ) -> dict[int, dict[str, Any] | None]:
        """Per record (by `id`), the properties a node it creates is written with
        (`created_with`)."""
        records = [r for _, r in items]
        exact = await created_with(self.store, namespace, label, records)
        return dict(zip((id(r) for r in records), exact, strict=True))

    # -- entities and relations ----------------------------------------------------------------

    async def _entities(
        self, namespace: str, items: list[tuple[int, EntityRecord]], report: ImportReport
    ) -> None:
        if not items:
            return
        try:
            written = await self._add_entities(namespace, [r for _, r in items])
        except StorageUnavailable:
            raise
        except _RECORD_ERRORS:
            # One bad record fails the whole query; write them one by one to find it.
            for line, rec in items:
                await self._one(report, "entity", line, self._entity(namespace, rec))
            return
        for (line, _), (_, created) in zip(items, written, strict=True):
            report.count("entity", line, created)

    async def _add_entities(
        self, namespace: str, records: Sequence[EntityRecord]
    ) -> list[tuple[Entity, bool]]:
        """Write entity records, each with the `origin` it was stored with: a record of an
        entity only implied by another write (`origin` "ensure") must not make the stored
        one explicit, or a second import of the same file would change the namespace.

        A record of an export carries its node's stored properties: a node it creates
        is written with them in the same query (`created_with`), so each node is written
        once and its vector indexed once."""
        out: list[tuple[Entity, bool] | None] = [None] * len(records)
        exact = await created_with(self.store, namespace, ENTITY, records)
        by_origin: dict[str | None, list[int]] = {}
        for i, rec in enumerate(records):
            by_origin.setdefault(_stored_origin(rec), []).append(i)
        for origin, idx in by_origin.items():
            rows = [(records[i].name, records[i].type, records[i].properties or None) for i in idx]
            written = await self.entities.add_many(
                namespace, rows, origin=origin, stored=[exact[i] for i in idx]
            )
            for i, got in zip(idx, written, strict=True):
                out[i] = got
        return [got for got in out if got is not None]

    async def _entity(self, namespace: str, rec: EntityRecord) -> bool:
        ((_, created),) = await self._add_entities(namespace, [rec])
        return created

    async def _relations(
        self,
        namespace: str,
        items: list[tuple[int, RelationRecord]],
        report: ImportReport,
        restore: _Restore,
    ) -> None:
        if not items:
            return
        typed: dict[tuple[str, str], None] = {}
        for _, r in items:
            if r.source_type:
                typed[(r.source, r.source_type)] = None
            if r.target_type:
                typed[(r.target, r.target_type)] = None
        known = await self._typed_ends(namespace, list(typed))
        written = await add_relations(
            self.entities,
            namespace,
            [
                RelationItem(
                    (r.source, r.source_type),
                    (r.target, r.target_type),
                    r.type,
                    r.properties,
                    r.valid_from,
                    r.valid_to,
                )
                for _, r in items
            ],
            known=known,
        )
        self._count(report, "relation", [line for line, _ in items], written)
        for (_, rec), outcome, ends in zip(items, written.outcomes, written.keys, strict=True):
            if outcome is True and ends is not None:
                restore.edge(ends[0], ends[1], rec, ends[2])

    async def _typed_ends(
        self, namespace: str, typed: list[tuple[str, str]]
    ) -> dict[tuple[str, str | None], str]:
        """The uuids of relations' typed ends: those stored found by one read of their
        normalised names, the others created (an end an entity record implied, by its
        `origin`, stays implied). An end that cannot be written is left to the
        relation's own resolution, which fails that relation alone."""
        if not typed:
            return {}
        known = await exact_entity_uuids(self.store, namespace, typed)
        missing = [ref for ref in typed if ref not in known]
        if not missing:
            return known
        try:
            made = await self.entities.add_many(
                namespace, [(n, t, None) for n, t in missing], unmark=False
            )
        except StorageUnavailable:
            raise
        except _RECORD_ERRORS as exc:
            logger.info("typed relation endpoints written one by one: %s", exc)
            return known
        for ref, (entity, _) in zip(missing, made, strict=True):
            known[ref] = entity.uuid
        return known

    def _count(
        self, report: ImportReport, kind: str, lines: list[int], written: BulkResult
    ) -> None:
        for line, outcome in zip(lines, written.outcomes, strict=True):
            report.count(kind, line, outcome)

    # -- temporal -----------------------------------------------------------------------------

    async def _events(
        self,
        namespace: str,
        items: list[tuple[int, EventRecord]],
        report: ImportReport,
        restore: _Restore,
    ) -> None:
        if not items:
            return
        # An event is created with its export's stored properties in the same write
        # (`created_with`); only the stored properties of its links are restored after.
        exact = await self._created_with(namespace, EVENT, items)
        written = await add_events(
            self.entities,
            namespace,
            [
                EventItem(
                    r.description, r.occurred_at, r.duration_ms, list(r.entities), exact[id(r)]
                )
                for _, r in items
            ],
        )
        self._count(report, "event", [line for line, _ in items], written)
        restore.links_only()
        for (_, rec), outcome, uuid in zip(items, written.outcomes, written.keys, strict=True):
            if outcome is True and uuid is not None:
                restore.node(uuid, rec)

    def _outcomes(
        self,
        report: ImportReport,
        kind: str,
        items: Sequence[tuple[int, Record]],
        results: Sequence[Any],
        restore: _Restore | None,
        created_of: Callable[[Any], tuple[str, bool]],
    ) -> None:
        """Count per-record results of a batched write (an error, or what `created_of`
        reads as (uuid, created)) and restore the stored form of what was created
        (`restore` None: the write created it in its stored form already)."""
        for (line, rec), got in zip(items, results, strict=True):
            if isinstance(got, StorageUnavailable):
                raise got
            if isinstance(got, _RECORD_ERRORS):
                report.count(kind, line, got)
                continue
            uuid, created = created_of(got)
            if report.count(kind, line, created) and restore is not None:
                restore.node(uuid, rec)

    async def _facts(
        self,
        namespace: str,
        items: list[tuple[int, FactRecord]],
        report: ImportReport,
        restore: _Restore,
    ) -> None:
        await self._nodes_of_kind(
            "fact",
            items,
            lambda r: FactItem(
                r.subject,
                r.predicate,
                r.object,
                r.valid_from,
                r.valid_to,
                list(r.entities),
                link_subject=r.link_subject,
                uuid=_stored_uuid(r),
                cardinality=r.cardinality,
                # Created with its export's stored properties in its one write (a fact
                # whose stored uuid is taken is that stored fact, and is not created).
                stored=raw_props(r) if r.stored else None,
            ),
            lambda batch: self.temporal.add_facts(namespace, batch),
            lambda w: (w.fact.uuid, w.status in ("created", "superseded")),
            report,
            restore.links_only(),
        )

    async def _nodes_of_kind(
        self,
        kind: str,
        items: Sequence[tuple[int, R]],
        item_of: Callable[[R], Any],
        write: Callable[[list[Any]], Any],
        created_of: Callable[[Any], tuple[str, bool]],
        report: ImportReport,
        restore: _Restore | None,
    ) -> list[Any]:
        """Write one kind of node records as batch items, count what each did and
        restore the stored form of what was created; the per-record results."""
        if not items:
            return []
        written = await _each(write, [item_of(r) for _, r in items])
        self._outcomes(report, kind, items, written, restore, created_of)
        return written

    # -- causal and semantic ------------------------------------------------------------------

    async def _existing_pairs(
        self, namespace: str, rel: str, pairs: list[list[str]]
    ) -> set[tuple[str, str]]:
        """The (cause, effect) normalised descriptions already linked by `rel`."""
        res = await self.store.query(
            namespace,
            f"UNWIND $keys AS k MATCH (a:{CAUSAL} {{key: k[0]}})-[:{rel}]->"
            f"(b:{CAUSAL} {{key: k[1]}}) RETURN DISTINCT k",
            {"keys": pairs},
            read_only=True,
        )
        return {(str(k[0]), str(k[1])) for (k,) in res.rows}

    async def _causal_links(
        self,
        namespace: str,
        items: list[tuple[int, CausalLinkRecord]],
        report: ImportReport,
        restore: _Restore,
    ) -> None:
        await self._links_of_kind(
            namespace,
            "causal_link",
            R_CAUSES,
            items,
            lambda r: (r.cause, r.effect),
            lambda r: CausalLinkItem(
                r.cause, r.effect, r.confidence, r.evidence, list(r.entities), list(r.events)
            ),
            lambda batch: add_causal_links(self.causal, namespace, batch),
            report,
            restore,
        )

    async def _solutions(
        self,
        namespace: str,
        items: list[tuple[int, SolutionRecord]],
        report: ImportReport,
        restore: _Restore,
    ) -> None:
        await self._links_of_kind(
            namespace,
            "solution",
            R_SOLVED_BY,
            items,
            lambda r: (r.problem, r.solution),
            lambda r: SolutionItem(r.problem, r.solution, r.evidence),
            lambda batch: add_solutions(self.causal, namespace, batch),
            report,
            restore,
        )

    async def _links_of_kind(
        self,
        namespace: str,
        kind: str,
        rel: str,
        items: Sequence[tuple[int, R]],
        ends_of: Callable[[R], tuple[str, str]],
        item_of: Callable[[R], Any],
        write: Callable[[list[Any]], Any],
        report: ImportReport,
        restore: _Restore,
    ) -> None:
        """Write one kind of causal link records, counted by the (from, to) descriptions
        `rel` already linked before the batch."""
        if not items:
            return
        keys = [[normalize_description(end) for end in ends_of(r)] for _, r in items]
        existing = await self._existing_pairs(namespace, rel, keys)
        written = await _each(write, [item_of(r) for _, r in items])
        self._pairs(report, kind, items, keys, existing, written, restore)

    def _pairs(
        self,
        report: ImportReport,
        kind: str,
        items: Sequence[tuple[int, Record]],
        keys: Sequence[Sequence[str]],
        existing: set[tuple[str, str]],
        written: Sequence[Any],
        restore: _Restore,
    ) -> None:
        """Count what a batch of links did, by the (cause, effect) normalised descriptions
        already linked before it (`existing`), and restore the links it created."""
        for (line, rec), (a, b), got in zip(items, keys, written, strict=True):
            if isinstance(got, StorageUnavailable):
                raise got
            if isinstance(got, _RECORD_ERRORS):
                report.count(kind, line, got)
                continue
            if report.count(kind, line, (a, b) not in existing):
                existing.add((a, b))
                restore.edge(got[0], got[1], rec)

    async def _causal_nodes(
        self,
        namespace: str,
        items: list[tuple[int, CausalNodeRecord]],
        report: ImportReport,
        restore: _Restore,
    ) -> None:
        # A node is created with its export's stored properties in the same write
        # (`created_with`); only the stored properties of its links are restored after.
        exact = await self._created_with(namespace, CAUSAL, items)
        await self._nodes_of_kind(
            "causal_node",
            items,
            lambda r: CausalNodeItem(
                r.description,
                r.node_type,
                list(r.entities),
                list(r.events),
                stored=exact[id(r)],
            ),
            lambda batch: add_causal_nodes(self.causal, namespace, batch),
            lambda w: (w[0].uuid, w[1]),
            report,
            restore.links_only(),
        )

    async def _concepts(
        self,
        namespace: str,
        items: list[tuple[int, ConceptRecord]],
        report: ImportReport,
        restore: _Restore,
    ) -> None:
        # Stored similarity links are added once every concept is there (a concept's
        # record can come before the one it points to).
        # A concept is created with its export's stored properties in the same write
        # (`created_with`); only the stored properties of its links are restored after.
        exact = await self._created_with(namespace, CONCEPT, items)
        written = await self._nodes_of_kind(
            "concept",
            items,
            lambda r: ConceptItem(
                r.name,
                r.description,
                list(r.entities),
                origin=_stored_origin(r),
                similar={} if r.similar is not None else None,
                stored=exact[id(r)],
            ),
            lambda batch: SemanticBatch(self.semantic).add_concepts(namespace, batch),
            lambda w: (w[0].uuid, w[1]),
            report,
            restore.links_only(),
        )
        for (_, rec), got in zip(items, written, strict=True):
            if rec.similar and not isinstance(got, Exception):
                self._similar.append((rec.name, rec.similar))

    async def _memories(
        self,
        namespace: str,
        items: list[tuple[int, MemoryRecord]],
        report: ImportReport,
    ) -> None:
        # A memory is created with its export's stored properties in the same write
        # (`created_with`): one write per node, its vector indexed once.
        exact = await self._created_with(namespace, MEMORY, items)
        await self._nodes_of_kind(
            "memory",
            items,
            lambda r: MemoryItem(
                r.content,
                r.category,
                r.tags,
                r.concepts,
                r.created_at,
                r.source_id,
                stored=exact[id(r)],
            ),
            lambda batch: SemanticBatch(self.semantic).add_memories(namespace, batch),
            lambda w: (w[0].uuid, w[1]),
            report,
            None,
        )


@dataclass
class _Restore:
    """The stored properties of what a batch created, restored kind by kind.

    A node or edge the import created gets the exact properties its record carries
    (uuid, record times, keys: `io.stored.raw_props`), its embedding kept; what an
    import merged into is left as stored. A record without `stored` (written by hand,
    not exported) keeps what the graphs wrote.
    """

    _nodes: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    _edges: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    node_props: bool = True
    """False: the nodes were created with their stored properties (only the links the
    import wrote with them are restored)."""

    def links_only(self) -> _Restore:
        """This restore, for nodes a write created in their stored form already."""
        self.node_props = False
        return self

    def node(self, uuid: str, rec: Record) -> None:
        if rec.stored:
            self._nodes.append(
                {
                    "u": uuid,
                    "p": raw_props(rec) if self.node_props else {"uuid": uuid},
                    "x": getattr(rec, "links_stored", None) or {},
                }
            )

    def edge(self, a: str, b: str, rec: Record, rel_key: str | None = None) -> None:
        if rec.stored:
            self._edges.append({"a": a, "b": b, "k": rel_key, "p": raw_props(rec)})

    async def nodes(self, store: FalkorStore, namespace: str, label: str) -> None:
        rows, self._nodes = self._nodes, []
        whole, self.node_props = self.node_props, True
        if not rows:
            return
        # A stored uuid already taken by another node stays with that node.
        wanted = [r["p"]["uuid"] for r in rows if r["p"].get("uuid") not in (None, r["u"])]
        taken = await stored_uuids(store, namespace, label, wanted)
        for r in rows:
            if r["p"].get("uuid") in taken:
                r["p"]["uuid"] = r["u"]
        links = [
            {"u": r["p"].get("uuid", r["u"]), "t": rel, "m": uid, "p": p}
            for r in rows
            for rel, by_uuid in r.pop("x").items()
            for uid, p in by_uuid.items()
        ]
        if whole:
            await store.query(
                namespace,
                f"UNWIND $rows AS row MATCH (n:{label} {{uuid: row.u}}) "
                "WITH n, row, n.embedding AS v SET n = row.p SET n.embedding = v",
                {"rows": rows},
            )
        if links:
            # The links the import wrote with the node, found from it (few per node).
            await store.query(
                namespace,
                f"UNWIND $rows AS row MATCH (n:{label} {{uuid: row.u}})-[r]->(m) "
                "WHERE type(r) = row.t AND m.uuid = row.m SET r = row.p",
                {"rows": links},
            )

    async def edges(self, store: FalkorStore, namespace: str, a: str, rel: str, b: str) -> None:
        rows, self._edges = self._edges, []
        if rows:
            await store.query(
                namespace,
                f"UNWIND $rows AS row MATCH (:{a} {{uuid: row.a}})-[r:{rel}]->(:{b} {{uuid: row.b}}) "
                "WHERE row.k IS NULL OR r.rel_key = row.k SET r = row.p",
                {"rows": rows},
            )
