"""The `Memory` facade: remember and recall, plus every graph, from a plain Python program.

async with await Memory.open() as memory:
    await memory.remember("Deploy v2.3.1 removed AUTH_SECRET; the auth-service crashed.")
    result = await memory.recall("Why did the auth service fail?")
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import TracebackType
from typing import Self

from polyg_shared.intents import ExtractedFact, Extraction, Intent
from polyg_shared.nodes import Fact
from polyg_shared.results import SimilarNode
from polyg_shared.retrieval import (
    RecallResult,
    RememberResult,
    WrittenNode,
)
from polyg_shared.stats import GraphStatistics
from polyg_shared.timeutil import utc_now

from polyg_core.agents.extractor import UNKNOWN_START, extract
from polyg_core.config import Settings
from polyg_core.errors import AmbiguousName, InvalidInput
from polyg_core.graphs.causal import CausalGraph
from polyg_core.graphs.crosslinks import CrossLinker
from polyg_core.graphs.entity import EntityGraph
from polyg_core.graphs.semantic import SemanticGraph, content_hash
from polyg_core.graphs.stats import graph_statistics
from polyg_core.graphs.temporal import TemporalGraph
from polyg_core.graphs.temporal_queries import parse_time
from polyg_core.providers.embeddings import make_embedder
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.providers.llm.base import LLM
from polyg_core.recall.pipeline import (
    RecallOptions,
    RecallPipeline,
    mentioned_entities,
    usage_report,
)
from polyg_core.remember.links import referred_events, represented_entities
from polyg_core.resolve import ENTITY_NAMES, NameResolver
from polyg_core.retrieval.decay import refresh_access
from polyg_core.retrieval.filters import prefixed_tags
from polyg_core.retrieval.probability import CausalProbability, causal_probability
from polyg_core.storage.namespace import validate_namespace
from polyg_core.storage.store import FalkorStore
from polyg_core.text import normalize_name

logger = logging.getLogger(__name__)


@dataclass
class Memory:
    """polyg's memory for one store: the four graphs, remember and recall.

    Args:
        store: a connected FalkorStore.
        embedder: the embedding provider (the local MiniLM model by default).
        llm: the LLM, or None for the rule-based path.
        settings: tuning (depths, budgets, timeouts); environment is not read here.
        namespace: the default graph name (`FALKORDB_GRAPH`, default `polyg`).

    Recall's tuning (decay policy, ranking and fusion weights) lives on `pipeline`.
    """

    store: FalkorStore
    embedder: Embedder
    llm: LLM | None = None
    settings: Settings = field(default_factory=Settings)
    namespace: str = "polyg"
    owns_store: bool = False
    resolver: NameResolver = field(init=False)
    entities: EntityGraph = field(init=False)
    temporal: TemporalGraph = field(init=False)
    causal: CausalGraph = field(init=False)
    semantic: SemanticGraph = field(init=False)
    crosslinks: CrossLinker = field(init=False)
    pipeline: RecallPipeline = field(init=False)

    def __post_init__(self) -> None:
        validate_namespace(self.namespace)
        self.resolver = NameResolver(self.store, self.embedder)
        self.entities = EntityGraph(self.store, self.embedder, self.resolver)
        self.temporal = TemporalGraph(self.store, self.embedder, self.resolver)
        self.causal = CausalGraph(self.store, self.embedder, self.resolver)
        self.semantic = SemanticGraph(
            self.store, self.embedder, self.resolver, entities=self.entities
        )
        self.crosslinks = CrossLinker(self.store)
        self.pipeline = RecallPipeline(
            self.store,
            self.embedder,
            self.resolver,
            llm=self.llm,
            settings=self.settings,
        )

    @classmethod
    async def open(
        cls, settings: Settings | None = None, *, namespace: str | None = None
    ) -> Memory:
        """Connect to FalkorDB (the embedded server unless one is configured) and build a Memory.

        Raises:
            StorageUnavailable: FalkorDB cannot be reached.
            EmbeddedServerError: the embedded server cannot start (message says what to do).
        """
        from polyg_core.providers.llm import make_llm

        settings = settings or Settings()
        store = await FalkorStore(settings.storage).connect()
        embedder = make_embedder(settings.embedding_model, api_base=settings.llm_base_url)
        return cls(
            store=store,
            embedder=embedder,
            llm=make_llm(settings),
            settings=settings,
            namespace=namespace or settings.namespace,
            owns_store=True,
        )

    async def close(self) -> None:
        """Close the store if this Memory opened it."""
        if self.owns_store:
            await self.store.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def _ns(self, graph: str | None) -> str:
        return validate_namespace(graph or self.namespace)

    # -- recall -------------------------------------------------------------------------------

    async def recall(
        self,
        question: str,
        *,
        graph: str | None = None,
        reference_time: datetime | str | None = None,
        max_tokens: int | None = None,
        intent: Intent | None = None,
        mode: str | None = None,
        decay: bool = True,
        ppr: bool | None = None,
        category: str | None = None,
        tags: list[str] | None = None,
        project: str | None = None,
        who: str | None = None,
        retrievers: Sequence[str] | None = None,
        memory_limit: int = 20,
    ) -> RecallResult:
        """Answer a question from memory through the MAGMA pipeline.

        Classify → seed → expand (entity, temporal, causal, and PPR for multi-hop
        questions, in parallel) → merge → filter, decay and rank → linearize →
        synthesize. Without an LLM (or when it fails) rule-based steps answer and the
        result says `degraded: true` with the reasons.

        Args:
            question: the question.
            graph: the namespace (default: this memory's).
            reference_time: what "now" is (relative times, decay).
            max_tokens: the context budget.
            intent: a pre-classified intent (skips the classifier).
            mode: "execution" (5 core results), "planning" (5 + 15 extended),
                "brainstorming" (5 + 25), or None / "auto" to read it from the question.
            decay: False ignores memories' age (no e^(-days/30) weight).
            ppr: force the personalized-PageRank view (and the graph memory retriever) on
                or off; None runs them for multi-hop questions (the classifier says so, or
                2+ entities).
            category: keep only memories of this category (procedural/episodic/semantic).
            tags: keep only memories carrying all these tags.
            project: keep only memories tagged `project:<project>`.
            who: keep only memories tagged `who:<who>`.
            retrievers: the memory retrievers to fuse (default all: lexical, dense,
                entity, time, neighbours, graph); see `polyg_core.recall.memories`.
            memory_limit: how many ranked memories `memories` holds (1-200).

        Recall reads only; `mark_accessed` records that memories were used.

        Raises:
            InvalidInput: an empty question, a bad graph name, mode or filter value.
            StorageUnavailable: FalkorDB cannot be reached.
        """
        return await self.pipeline.run(
            question,
            self._ns(graph),
            RecallOptions(
                reference_time=reference_time,
                max_tokens=max_tokens,
                intent=intent,
                mode=mode,
                decay=decay,
                ppr=ppr,
                category=category,
                tags=tags,
                project=project,
                who=who,
                retrievers=retrievers,
                memory_limit=memory_limit,
            ),
        )

    async def mark_accessed(
        self,
        memory_uuids: Sequence[str],
        *,
        graph: str | None = None,
        at: datetime | str | None = None,
    ) -> int:
        """Record that memories were used (their decay restarts from `at`, default now).

        Recall never writes; call this with the memories an answer was built from.

        Returns:
            How many memories were marked.

        Raises:
            InvalidInput: a bad graph name or time.
        """
        when = parse_time(at, "at") if at is not None else utc_now()
        return await refresh_access(self.store, self._ns(graph), list(memory_uuids), when)

    async def causal_probability(
        self, cause: str, effect: str, *, graph: str | None = None
    ) -> CausalProbability:
        """P(cause leads to effect) under noisy-OR over the causal graph's links.

        `cause` and `effect` are causal nodes by uuid or description (resolved like
        every causal name). See `polyg_core.retrieval.probability`.

        Raises:
            NodeNotFound: no causal node matches (carries the closest candidates).
            AmbiguousName: a description matches several nodes.
        """
        namespace = self._ns(graph)
        a = await self.causal.get(namespace, cause)
        b = await self.causal.get(namespace, effect)
        return await causal_probability(self.store, namespace, a.uuid, b.uuid)

    # -- remember -----------------------------------------------------------------------------

    async def remember(
        self,
        content: str,
        *,
        graph: str | None = None,
        reference_time: datetime | str | None = None,
        category: str | None = None,
        tags: list[str] | None = None,
        source_id: str | None = None,
        who: str | None = None,
        project: str | None = None,
        why: str | None = None,
    ) -> RememberResult:
        """Extract entities, relations, events, facts, causal links and concepts from text and
        write them with their cross-links; keep the text as an S_Memory linked to its concepts.

        Re-remembering the same content (same words, any spacing or case) changes nothing
        and answers `created: false`. `who`, `project` and `why` are stored as the tags
        `who:...`, `project:...`, `why:...`; WHEN is the memory's `created_at`, the
        reference time (default now).

        Raises:
            InvalidInput: empty content, a bad graph name or a blank who/project/why.
            StorageUnavailable: FalkorDB cannot be reached (nothing is reported as stored).
        """
        if not content or not content.strip():
            raise InvalidInput("nothing to remember: the content is empty")
        namespace = self._ns(graph)
        ref = (
            parse_time(reference_time, "reference_time")
            if reference_time is not None
            else utc_now()
        )
        tags = prefixed_tags(tags or [], who=who, project=project, why=why)
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        digest = content_hash(content)
        await self.store.ensure_schema(namespace)
        existing = await self.store.query(
            namespace,
            "MATCH (m:S_Memory {content_hash: $h}) RETURN m.uuid, m.category",
            {"h": digest},
            read_only=True,
        )
        if existing.rows:
            uuid, cat = existing.rows[0]
            return RememberResult(
                graph=namespace,
                memory_uuid=str(uuid),
                created=False,
                category=str(cat or "episodic"),
            )

        known = await mentioned_entities(self.store, namespace, content)
        outcome = await extract(
            content, known, ref, llm=self.llm, max_tokens=self.settings.classifier_max_tokens * 4
        )
        timings["extract"] = (time.perf_counter() - t0) * 1000
        extraction: Extraction = outcome.extraction
        reasons = [f"extractor: {outcome.reason}"] if outcome.degraded and outcome.reason else []

        t1 = time.perf_counter()
        result = await self._write_extraction(
            namespace,
            content,
            extraction,
            category=category,
            tags=tags,
            source_id=source_id,
            created_at=ref,
            who=who.strip() if who else None,
        )
        timings["write"] = (time.perf_counter() - t1) * 1000
        timings["total"] = (time.perf_counter() - t0) * 1000
        return result.model_copy(
            update={
                "degraded": bool(reasons),
                "degraded_reasons": reasons,
                "usage": usage_report(outcome.usage),
                "timings_ms": {k: round(v, 2) for k, v in timings.items()},
            }
        )

    async def _end_stated_fact(self, namespace: str, f: ExtractedFact) -> list[WrittenNode]:
        """End the current facts `f` names (same subject, predicate and object) at its end."""
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

    async def _write_extraction(
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
        # Entities first (with their types), so later writes link to them instead of
        # creating untyped ones; the S_Memory node is written last and marks completion.
        # A name that already names one entity reuses it whatever type the extractor
        # guessed, so remembering never splits one entity into several types. A name
        # several entities answer to (graphs/entity_refs.py) is written with the
        # extractor's type: the entity of that name and type, or a new one.
        entities: list[WrittenNode] = []
        fresh: list[tuple[str, str, None]] = []
        for e in ex.entities:
            try:
                found = await self.resolver.find(namespace, ENTITY_NAMES, e.name, fuzzy=False)
            except AmbiguousName:
                found = None
            if found is None:
                fresh.append((e.name, e.entity_type, None))
            else:
                entities.append(
                    WrittenNode(uuid=found.uuid, name=found.name, label="E_Entity", created=False)
                )
        if fresh:
            written = await self.entities.add_many(namespace, fresh)
            for ent, created in written:
                near = (
                    await self.resolver.similar_existing(
                        namespace, ENTITY_NAMES, ent.name, exclude=ent.uuid
                    )
                    if created
                    else []
                )
                entities.append(
                    WrittenNode(
                        uuid=ent.uuid,
                        name=ent.name,
                        label="E_Entity",
                        created=created,
                        similar_existing=[
                            SimilarNode(
                                uuid=c.uuid, name=c.name, label=c.label, similarity=c.similarity
                            )
                            for c in near
                        ],
                    )
                )
        # The entities just resolved or written, by normalised name: the later writes of
        # this memory name them by uuid, so a name several stored entities answer to
        # links to the one chosen above instead of failing the whole memory.
        chosen = {normalize_name(n.name): n.uuid for n in entities}

        def refs(names: Sequence[str]) -> list[str]:
            return [chosen.get(normalize_name(n), n) for n in names]

        relations: list[str] = []
        for rel in ex.relations:
            try:
                source, target = refs([rel.source, rel.target])
                await self.entities.ensure(namespace, [source, target])
                await self.entities.link(namespace, source, target, rel.relationship_type)
                relations.append(f"{rel.source} -{rel.relationship_type}-> {rel.target}")
            except Exception as exc:  # one bad relation must not lose the rest of the memory
                logger.info("relation %s skipped: %s", rel, exc)
        events: list[WrittenNode] = []
        for ev in ex.events:
            event = await self.temporal.add_event(
                namespace, ev.description, ev.occurred_at, entities=refs(ev.entities)
            )
            events.append(
                WrittenNode(uuid=event.uuid, name=event.description, label="T_Event", created=True)
            )
        facts: list[WrittenNode] = []
        invalidated: list[WrittenNode] = []
        # Who stated the facts, kept with each one for its history.
        said = f"{who} ({source_id})" if who and source_id else (who or source_id or "")
        source = said.strip()[:256] or None
        for f in ex.facts:
            if f.valid_from == UNKNOWN_START and f.valid_to is not None:
                # The note says when the fact ended, not since when it held ("moved from
                # the payments team"): end the stored fact it names; with none stored
                # there is nothing to end, and no start to invent.
                invalidated.extend(await self._end_stated_fact(namespace, f))
                continue
            try:
                fw = await self.temporal.add_fact(
                    namespace,
                    f.subject,
                    f.predicate,
                    f.object,
                    valid_from=f.valid_from,
                    valid_to=f.valid_to,
                    source=source,
                )
            except AmbiguousName as exc:  # the memory and its other parts are still written
                logger.info("fact %s skipped: %s", f, exc)
                continue
            facts.append(_fact_node(fw.fact, created=fw.status != "existing"))
            invalidated.extend(_fact_node(o, created=False) for o in fw.invalidated)
        causal: list[str] = []
        event_texts = [(e.uuid, e.name) for e in events]
        for link in ex.causal_links:
            cr = await self.causal.add_link(
                namespace,
                link.cause,
                link.effect,
                link.confidence,
                evidence=link.evidence,
                entities=refs(link.entities),
                events=referred_events(link.cause, link.effect, link.evidence, event_texts),
            )
            causal.append(
                f"{cr.cause.description} -> {cr.effect.description} ({cr.link.confidence:.2f})"
            )
        concepts: list[WrittenNode] = []
        concept_names: list[str] = []
        entity_uuid = {e.name: e.uuid for e in entities}
        for c in ex.concepts:
            named = represented_entities(c.name, c.description, entity_uuid)
            concept, created = await self.semantic.add_concept(
                namespace, c.name, c.description, [entity_uuid[n] for n in named]
            )
            concepts.append(
                WrittenNode(
                    uuid=concept.uuid, name=concept.name, label="S_Concept", created=created
                )
            )
            concept_names.append(concept.name)
        cat = category or (ex.category.value if ex.category else "episodic")
        # The S_Memory MERGE decides: of concurrent identical calls that all passed the
        # content-hash check above, only the one that created the node says created.
        memory, created = await self.semantic.add_memory(
            namespace,
            content,
            category=cat,
            tags=tags,
            concepts=concept_names,
            source_id=source_id,
            created_at=created_at,
        )
        return RememberResult(
            graph=namespace,
            memory_uuid=memory.uuid,
            created=created,
            category=cat,
            entities=entities,
            relations=relations,
            events=events,
            facts=facts,
            invalidated_facts=invalidated,
            causal_links=causal,
            concepts=concepts,
        )

    # -- convenience --------------------------------------------------------------------------

    async def statistics(self, graph: str | None = None) -> GraphStatistics:
        """Node and edge counts per graph and cross-link type."""
        return await graph_statistics(self.store, self._ns(graph))


def _fact_node(fact: Fact, *, created: bool) -> WrittenNode:
    """A written fact as remember reports it."""
    return WrittenNode(
        uuid=fact.uuid,
        name=f"{fact.subject} {fact.predicate} {fact.object}",
        label="T_Fact",
        created=created,
    )
