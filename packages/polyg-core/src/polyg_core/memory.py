"""The `Memory` facade: remember and recall, plus every graph, from a plain Python program.

async with await Memory.open() as memory:
    await memory.remember("Deploy v2.3.1 removed AUTH_SECRET; the auth-service crashed.")
    result = await memory.recall("Why did the auth service fail?")
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import TracebackType
from typing import Self

from polyg_shared.intents import Extraction, Intent
from polyg_shared.retrieval import (
    RecallResult,
    RememberResult,
)
from polyg_shared.stats import GraphStatistics
from polyg_shared.timeutil import utc_now

from polyg_core.config import Settings
from polyg_core.errors import InvalidInput
from polyg_core.graphs.causal import CausalGraph
from polyg_core.graphs.crosslinks import CrossLinker
from polyg_core.graphs.entity import EntityGraph
from polyg_core.graphs.semantic import SemanticGraph, content_hash
from polyg_core.graphs.stats import graph_statistics
from polyg_core.graphs.temporal import TemporalGraph
from polyg_core.graphs.temporal_queries import parse_time
from polyg_core.providers.embeddings import make_embedder
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.providers.llm.base import LLM, usage_report
from polyg_core.recall.decay import refresh_access
from polyg_core.recall.filters import prefixed_tags
from polyg_core.recall.pipeline import (
    RecallOptions,
    RecallPipeline,
)
from polyg_core.recall.probability import CausalProbability, causal_probability
from polyg_core.remember.extractor import extract
from polyg_core.remember.write import RememberWriter
from polyg_core.resolve import NameResolver
from polyg_core.storage.namespace import validate_namespace
from polyg_core.storage.store import FalkorStore
from polyg_core.text.names import named_in_text
from polyg_core.text.normalize import normalize_name

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

    def with_llm(self, llm: LLM | None) -> Memory:
        """This memory with `llm` classifying, extracting and synthesizing (e.g. the model an
        MCP client lends for one call); the store, graphs and caches are shared and it does
        not own the store."""
        twin = copy.copy(self)
        twin.llm = llm
        twin.owns_store = False
        twin.pipeline = self.pipeline.with_llm(llm)
        return twin

    @classmethod
    async def open(
        cls, settings: Settings | None = None, *, namespace: str | None = None
    ) -> Memory:
        """Connect to FalkorDB (the embedded server unless one is configured) and build a Memory.

        Args:
            settings: what to connect to and with; the defaults when None. The environment
                is not read here: pass `settings_from_env(os.environ)` for that.
            namespace: the default namespace (else `settings.namespace`).

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
            max_tokens: the token budget of what is returned: the context, and the
                memories and the answer's nodes packed best first (`packed` lists what
                did not fit).
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
        every causal name). See `polyg_core.recall.probability`.

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

        known = await self.entities.named_in(namespace, content)
        speaker = who.strip() if who else ""
        if speaker and named_in_text(content, speaker):
            # Who wrote it is a name even when it is also a word ("June: ...", "Will").
            known.append((speaker, normalize_name(speaker)))
        outcome = await extract(
            content, known, ref, llm=self.llm, max_tokens=self.settings.classifier_max_tokens * 4
        )
        timings["extract"] = (time.perf_counter() - t0) * 1000
        extraction: Extraction = outcome.extraction
        reasons = [f"extractor: {outcome.reason}"] if outcome.degraded and outcome.reason else []

        t1 = time.perf_counter()
        # One lookup, one embedding call, one k-NN query and a write per kind; the
        # S_Memory node is written last and marks completion (remember/write.py).
        writer = RememberWriter(
            self.entities, self.temporal, causal_threshold=self.causal.match_threshold
        )
        result = await writer.write(
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

    # -- convenience --------------------------------------------------------------------------

    async def statistics(self, graph: str | None = None) -> GraphStatistics:
        """Node and edge counts per graph and cross-link type."""
        return await graph_statistics(self.store, self._ns(graph))
