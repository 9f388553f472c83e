"""The recall pipeline, once: classify → seeds and memories → expand → merge and rank →
linearize → synthesize.

`Memory.recall`, the MAGMA step tools (semantic_search, entity_lookup, temporal_expand,
causal_expand, subgraph_merge, linearize_context) and the explorer all go through a
`RecallPipeline`, so a step behaves the same whichever door it is called from. Every
step reads; nothing here writes to FalkorDB (`Memory.mark_accessed` records use).
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, TypeVar

import anyio
import numpy as np
import numpy.typing as npt
from polyg_shared.intents import Intent
from polyg_shared.retrieval import (
    AnswerSource,
    ContextNode,
    LinearizedContext,
    MergedSubgraph,
    RecallResult,
    Synthesis,
    ViewResult,
    ViewSummary,
)
from polyg_shared.timeutil import from_epoch_ms, iso, to_epoch_ms, utc_now

from polyg_core.config import Settings
from polyg_core.errors import InvalidInput
from polyg_core.graphs.entity import EntityGraph
from polyg_core.graphs.temporal import TemporalGraph
from polyg_core.graphs.temporal_queries import parse_time
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.providers.llm.base import LLM, Usage, usage_report
from polyg_core.recall.answer.history import history_answer, with_history
from polyg_core.recall.catalogue import MemoryCatalogue, NamespaceCatalogue, without_names
from polyg_core.recall.classifier import classify, without_hedges
from polyg_core.recall.concurrency import both as _both
from polyg_core.recall.currency import EndedValue
from polyg_core.recall.decay import DecayPolicy
from polyg_core.recall.filter_scope import (
    NO_MATCH_CONFIDENCE,
    no_match_answer,
    passing,
    scope_to_filter,
)
from polyg_core.recall.filters import MemoryFilter
from polyg_core.recall.graph_memories import graph_reach, people_reach
from polyg_core.recall.hybrid import RankedRecall, filtered_memory_view, rank_recall
from polyg_core.recall.hybrid_scores import Mode, RankingWeights, check_mode
from polyg_core.recall.linearizer import linearize
from polyg_core.recall.memories import (
    COMMON_NAME_SHARE,
    FirstStage,
    FusionWeights,
    MemoryRanking,
    check_retrievers,
    first_stage,
    rank_after,
    with_memories,
)
from polyg_core.recall.merger import merge_views
from polyg_core.recall.packing import check_budget, pack
from polyg_core.recall.synthesizer import SynthesisOutcome, Synthesizer
from polyg_core.recall.views import (
    Seeds,
    ViewContext,
    causal_view,
    entity_view,
    find_seeds,
    run_views,
    temporal_view,
)
from polyg_core.resolve import NameResolver
from polyg_core.storage.store import FalkorStore, check_embedding
from polyg_core.storage.write_stamp import StampedReads

logger = logging.getLogger(__name__)

MAX_MEMORY_LIMIT = 200
CONTEXT_MEMORIES = 10
SEMANTIC_ONLY_BELOW = 3

Vector = npt.NDArray[np.float32]
ViewKind = Literal["entity", "temporal", "causal"]


def source_nodes(uuids: Sequence[str], nodes: Sequence[ContextNode]) -> list[AnswerSource]:
    """The answer's sources with their text and time, in the order given."""
    by_id = {n.uuid: n for n in nodes}
    out: list[AnswerSource] = []
    for uid in uuids:
        node = by_id.get(uid)
        if node is None:
            continue
        when = next(
            (
                str(node.attributes[k])
                for k in ("occurred_at_iso", "valid_from_iso")
                if node.attributes.get(k)
            ),
            None,
        )
        # A memory's created_at is when it was said; other nodes' is only when they were written.
        if (
            when is None
            and node.label == "S_Memory"
            and isinstance(node.attributes.get("created_at"), int)
        ):
            when = iso(from_epoch_ms(int(node.attributes["created_at"])))
        out.append(AnswerSource(uuid=uid, label=node.label, text=node.text, when=when))
    return out


@dataclass(frozen=True)
class RecallOptions:
    """How one recall runs; see `Memory.recall` for each field."""

    reference_time: datetime | str | None = None
    max_tokens: int | None = None
    intent: Intent | None = None
    mode: str | None = None
    decay: bool = True
    ppr: bool | None = None
    category: str | None = None
    tags: list[str] | None = None
    project: str | None = None
    who: str | None = None
    retrievers: Sequence[str] | None = None
    memory_limit: int = 20


@dataclass
class RecallPipeline:
    """The steps of recall over one store, with the collaborators each step needs."""

    store: FalkorStore
    embedder: Embedder
    resolver: NameResolver
    llm: LLM | None = None
    settings: Settings = field(default_factory=Settings)
    decay_policy: DecayPolicy = field(default_factory=DecayPolicy)
    ranking_weights: RankingWeights = field(default_factory=RankingWeights)
    fusion_weights: FusionWeights = field(default_factory=FusionWeights)
    catalogue: MemoryCatalogue = field(init=False)
    entities: EntityGraph = field(init=False)
    temporal: TemporalGraph = field(init=False)
    synthesizer: Synthesizer = field(init=False)

    def __post_init__(self) -> None:
        self.catalogue = MemoryCatalogue(self.store)
        self.entities = EntityGraph(self.store, self.embedder, self.resolver)
        self.temporal = TemporalGraph(self.store, self.embedder, self.resolver)
        self.synthesizer = Synthesizer(self.llm, self.settings.synthesizer_max_tokens)

    def with_llm(self, llm: LLM | None) -> RecallPipeline:
        """This pipeline with `llm` classifying and synthesizing; the store, embedder,
        tuning and the memory catalogue's cache are shared."""
        twin = copy.copy(self)
        twin.llm = llm
        twin.synthesizer = Synthesizer(llm, self.settings.synthesizer_max_tokens)
        return twin

    # -- single steps (the MAGMA tools) -------------------------------------------------------

    async def embed(self, text: str) -> Vector:
        """The query vector of `text`."""
        return np.asarray((await self.embedder.embed([text]))[0], dtype=np.float32)

    async def embed_for(self, namespace: str, text: str) -> Vector:
        """The query vector of `text`, once the namespace is known to hold this model's vectors.

        Raises:
            EmbeddingMismatch: the namespace was built with another model or dimension (the
                same clear error writes give, instead of FalkorDB's or silently nothing).
        """
        vector, _stamp = await self._embed_and_stamp(namespace, text)
        return vector

    async def _embed_and_stamp(self, namespace: str, text: str) -> tuple[Vector, str | None]:
        """`embed_for`, and the namespace's write stamp read with its embedding record
        (`storage.write_stamp`: what this recall may reuse of earlier recalls' reads)."""
        # The namespace's record is read while the text is embedded (the local model runs
        # in a thread); it is checked with the vector made, so a remote model's first call
        # needs no probe.
        vector, (record, stamp) = await _both(
            self.embed(text), self.store.embedding_record_and_stamp(namespace)
        )
        model = self.embedder.model_name
        check_embedding(namespace, record, model, None)
        check_embedding(namespace, record, model, len(vector))
        return vector, stamp

    async def seeds(
        self,
        namespace: str,
        intent: Intent,
        vector: Vector | None,
        *,
        top_k: int | None = None,
        min_score: float | None = None,
        as_of: datetime | None = None,
    ) -> Seeds:
        """Step 2: k-NN over every embedded label plus the intent's names."""
        return await find_seeds(
            self.store,
            self.resolver,
            namespace,
            intent,
            vector,
            top_k=top_k if top_k is not None else self.settings.magma_semantic_top_k,
            min_score=min_score
            if min_score is not None
            else self.settings.magma_min_semantic_score,
            as_of=as_of,
        )

    async def expand(
        self, kind: ViewKind, namespace: str, intent: Intent, seeds: Seeds, depth: int
    ) -> ViewResult:
        """Step 3, one view: entity BFS, temporal, or causal expansion from `seeds`."""
        ctx = ViewContext(self.store, namespace, intent, seeds)
        if kind == "entity":
            return await entity_view(ctx, depth)
        if kind == "temporal":
            return await temporal_view(ctx, depth)
        return await causal_view(ctx, depth)

    def merge(self, views: Sequence[ViewResult], boost: float | None = None) -> MergedSubgraph:
        """Step 4: one node per uuid with the multi-view boost."""
        return merge_views(
            views, boost=boost if boost is not None else self.settings.magma_multi_view_boost
        )

    def linearize(
        self, merged: MergedSubgraph, intent_type: str, max_tokens: int | None = None
    ) -> LinearizedContext:
        """Step 5: the subgraph as text, ordered for the question type, within a budget."""
        return linearize(
            merged, intent_type, max_tokens=max_tokens or self.settings.magma_max_context_tokens
        )

    # -- the whole pipeline -------------------------------------------------------------------

    async def run(self, question: str, namespace: str, opts: RecallOptions) -> RecallResult:
        """Answer `question` from `namespace` (see `Memory.recall`).

        Raises:
            InvalidInput: an empty question, a bad mode, filter, retriever or limit.
            EmbeddingMismatch: the namespace was built with another embedding model.
            StorageUnavailable: FalkorDB cannot be reached.
        """
        run = _checked_run(question, namespace, opts)
        # The catalogue does not depend on the question: it is brought up to date while the
        # question is classified.
        await _both(self._classify(run), self._load_catalogue(run))
        await run.timed("seed", self._seed(run))
        views = await run.timed("expand", self._expand(run))
        merged, ranked = await run.timed("merge_rank", self._merge_and_rank(run, views))
        t_linearize = time.perf_counter()
        context = self.linearize(merged, run.intent.type.value, opts.max_tokens)
        run.timings["linearize"] = (time.perf_counter() - t_linearize) * 1000
        synth = await run.timed("synthesize", self._synthesize(run, merged, context))
        run.timings["total"] = (time.perf_counter() - run.started) * 1000
        synthesis = await self._answer(run, synth.synthesis)
        return _result(run, views, merged, ranked, context, synth, synthesis)

    async def _classify(self, run: _Run) -> None:
        """Step 1: the question's intent (given, or from the LLM or the rules)."""
        intent = run.opts.intent
        if intent is None:
            known = await self.entities.named_in(run.namespace, run.question)
            outcome = await classify(
                run.question,
                known,
                run.ref,
                llm=self.llm,
                max_tokens=self.settings.classifier_max_tokens,
            )
            intent = outcome.intent
            run.usages.append(outcome.usage)
            if outcome.degraded:
                run.reasons.append(f"classifier: {outcome.reason}")
        run.intent = intent
        run.timings["classify"] = (time.perf_counter() - run.started) * 1000

    async def _load_catalogue(self, run: _Run) -> None:
        run.catalogue = await self.catalogue.get(run.namespace)

    async def _prepare_query(self, run: _Run) -> None:
        """The query vector, the catalogue and the intent that seeds the graph views."""
        intent = run.intent
        # A one- or two-word search phrase ("cache") matches whole sentences poorly;
        # the question itself carries more of what is asked.
        query_text = (
            intent.semantic_query if len(intent.semantic_query.split()) >= 3 else run.question
        )
        if intent.inferential:
            query_text = without_hedges(query_text)
        run.speakers = run.catalogue.authors_in(run.question)
        common = run.catalogue.common_names([*intent.entities, *run.speakers], COMMON_NAME_SHARE)
        seed_text = without_names(query_text, common)
        # Values of the asked subjects that newer facts replaced (for ranking memories) are
        # read while the question is embedded.
        (run.vector, run.stamp), replaced = await _both(
            self._embed_and_stamp(run.namespace, seed_text),
            self.temporal.replaced_facts(run.namespace, intent.entities),
        )
        run.ended = [EndedValue(old.object, new.object) for old, new in replaced]
        run.reads = self.store.stamped_reads(run.namespace, run.stamp)
        # A name found in most memories (a speaker, the user) says little about which
        # ones answer: it does not seed the graph views on its own. Events and facts
        # are seeded by the words of the same text the vector embeds.
        run.seed_intent = intent.model_copy(
            update={
                "entities": [e for e in intent.entities if e not in common],
                "semantic_query": seed_text,
            }
        )
        run.use_ppr = (
            run.opts.ppr
            if run.opts.ppr is not None
            else (intent.multi_hop or len(intent.entities) >= 2)
        )

    async def _rank_memories(self, run: _Run) -> None:
        run.ranking = self._rank_after(run, await self._first_stage(run))

    async def _first_stage(self, run: _Run) -> FirstStage:
        return await first_stage(
            self.store,
            run.namespace,
            run.catalogue,
            run.question,
            run.intent,
            run.vector,
            retrievers=run.chosen,
            weights=self.fusion_weights,
            names=run.speakers,
            multi_hop=run.use_ppr,
        )

    def _rank_after(
        self, run: _Run, first: FirstStage, graph_nodes: Sequence[ContextNode] = ()
    ) -> MemoryRanking:
        return rank_after(
            first,
            now_ms=to_epoch_ms(run.ref),
            memory_filter=run.memory_filter,
            decay_tau_days=self.decay_policy.tau_days if run.opts.decay else 1e9,
            graph_nodes=graph_nodes,
            # Values of the asked subjects that newer facts replaced: a memory holding
            # one ranks below the memory holding its successor (recall.currency).
            ended=run.ended,
        )

    async def _graph_seeds(self, run: _Run) -> None:
        tf = run.intent.timeframe
        run.seeds = await self.seeds(
            run.namespace,
            run.seed_intent,
            run.vector,
            as_of=tf.end if tf and tf.end else run.ref,
        )

    async def _seed(self, run: _Run) -> None:
        """Step 2: the query, the graph seeds, and (unless the graph side goes first) the
        memories."""
        await self._prepare_query(run)
        if run.use_ppr:
            # A question that gathers or chains ranks memories with what the graph side
            # reached (the views and PPR), so the graph goes first.
            await self._graph_seeds(run)
            return
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._rank_memories, run)
                tg.start_soon(self._graph_seeds, run)
        except BaseExceptionGroup as group:
            # Callers expect polyg's own error (storage down, timeout), not a group of them.
            raise group.exceptions[0] from group

    async def _expand(self, run: _Run) -> list[ViewResult]:
        """Step 3: the expansion views (and the memories ranked with what they reached)."""
        ctx = ViewContext(
            self.store,
            run.namespace,
            run.seed_intent,
            run.seeds,
            now=run.ref,
            reads=run.reads,
        )
        expanding = run_views(ctx, timeout_s=self.settings.parallel_timeout_s, ppr=run.use_ppr)
        if run.use_ppr:
            # The named people's memories need no view, nor does the memory ranking's first
            # stage (lexical, dense, entity, time): both run while the views wait on FalkorDB.
            views, (people, first) = await _both(
                expanding,
                _both(
                    people_reach(
                        self.store,
                        run.namespace,
                        run.catalogue,
                        question=run.question,
                        people=[*run.intent.entities, *run.speakers],
                        vector=run.vector,
                    ),
                    self._first_stage(run),
                ),
            )
            reached = await graph_reach(
                self.store,
                run.namespace,
                run.catalogue,
                run.seeds,
                views,
                question=run.question,
                people=[*run.intent.entities, *run.speakers],
                vector=run.vector,
                people_found=people,
            )
            run.ranking = self._rank_after(run, first, reached)
        else:
            views = await expanding
        if run.memory_filter.active:
            views.append(
                await filtered_memory_view(self.store, run.namespace, run.vector, run.memory_filter)
            )
        # A view that failed or ran out of time leaves the answer built on less than usual.
        run.reasons.extend(
            f"{v.view} view {'timed out' if v.status == 'timeout' else 'failed'}"
            + (f": {v.error}" if v.error else "")
            for v in views
            if v.status in ("failed", "timeout")
        )
        return views

    async def _merge_and_rank(
        self, run: _Run, views: Sequence[ViewResult]
    ) -> tuple[MergedSubgraph, RankedRecall]:
        """Step 4: one subgraph with the best memories in it, scoped and ranked."""
        merged = with_memories(
            self.merge([run.seeds.semantic, *views]), run.ranking, CONTEXT_MEMORIES
        )
        merged = await scope_to_filter(
            self.store, run.namespace, merged, run.catalogue, run.memory_filter
        )
        ranked = await rank_recall(
            self.store,
            run.namespace,
            merged,
            vector=run.vector,
            mode=run.query_mode,
            now=run.ref,
            causal_seeds=run.seeds.causal,
            entity_seeds=run.seeds.entities,
            decay=run.opts.decay,
            policy=self.decay_policy,
            memory_filter=run.memory_filter,
            weights=self.ranking_weights,
            reads=run.reads,
        )
        return ranked.merged, ranked

    async def _synthesize(
        self, run: _Run, merged: MergedSubgraph, context: LinearizedContext
    ) -> SynthesisOutcome:
        """Step 6: the answer from the linearized context."""
        synth = await self.synthesizer.synthesize(
            run.question, run.intent, merged, context, now_ms=to_epoch_ms(run.ref)
        )
        run.usages.append(synth.usage)
        if synth.degraded and synth.reason:
            run.reasons.append(f"synthesizer: {synth.reason}")
        return synth

    async def _answer(self, run: _Run, synthesis: Synthesis) -> Synthesis:
        """The synthesis with the history of what changed, or "not known" when nothing
        passes the filter."""
        s = with_history(
            synthesis,
            await history_answer(
                TemporalGraph(self.store, self.embedder, self.resolver),
                run.namespace,
                run.intent,
                run.question,
            ),
        )
        if run.memory_filter.active and not passing(run.catalogue, run.memory_filter):
            # Nothing matches: say so, instead of answering from other memories.
            s = s.model_copy(
                update={
                    "answer": no_match_answer(run.memory_filter),
                    "confidence": NO_MATCH_CONFIDENCE,
                    "sources": [],
                    "follow_ups": [],
                }
            )
        return s


_T = TypeVar("_T")


@dataclass
class _Run:
    """One recall's checked options and what its steps have found so far."""

    question: str
    namespace: str
    opts: RecallOptions
    query_mode: Mode
    chosen: frozenset[str]
    memory_filter: MemoryFilter
    ref: datetime
    started: float = field(default_factory=time.perf_counter)
    timings: dict[str, float] = field(default_factory=dict[str, float])
    reasons: list[str] = field(default_factory=lambda: [])
    usages: list[Usage] = field(default_factory=lambda: [])
    intent: Intent = field(default_factory=Intent)
    catalogue: NamespaceCatalogue = field(init=False)
    speakers: list[str] = field(default_factory=lambda: [])
    vector: Vector = field(default_factory=lambda: np.zeros(0, dtype=np.float32))
    seed_intent: Intent = field(default_factory=Intent)
    use_ppr: bool = False
    ended: list[EndedValue] = field(default_factory=lambda: [])
    ranking: MemoryRanking = field(default_factory=MemoryRanking)
    seeds: Seeds = field(default_factory=Seeds)
    stamp: str | None = None
    reads: StampedReads | None = None

    async def timed(self, step: str, work: Awaitable[_T]) -> _T:
        """`work`'s result, its time recorded under `step`."""
        t = time.perf_counter()
        out = await work
        self.timings[step] = (time.perf_counter() - t) * 1000
        return out


def _checked_run(question: str, namespace: str, opts: RecallOptions) -> _Run:
    """A run with its options checked.

    Raises:
        InvalidInput: an empty question, a bad mode, filter, retriever, limit or budget.
    """
    if not question or not question.strip():
        raise InvalidInput("the question is empty; ask something like 'Why did the deploy fail?'")
    query_mode = check_mode(opts.mode, question)
    chosen = check_retrievers(opts.retrievers)
    if not 1 <= opts.memory_limit <= MAX_MEMORY_LIMIT:
        raise InvalidInput(
            f"memory_limit must be between 1 and {MAX_MEMORY_LIMIT}, got {opts.memory_limit}"
        )
    check_budget(opts.max_tokens)
    memory_filter = MemoryFilter.of(
        category=opts.category, tags=opts.tags, project=opts.project, who=opts.who
    )
    ref = (
        parse_time(opts.reference_time, "reference_time")
        if opts.reference_time is not None
        else utc_now()
    )
    return _Run(question, namespace, opts, query_mode, chosen, memory_filter, ref)


def _result(
    run: _Run,
    views: Sequence[ViewResult],
    merged: MergedSubgraph,
    ranked: RankedRecall,
    context: LinearizedContext,
    synth: SynthesisOutcome,
    s: Synthesis,
) -> RecallResult:
    """The recall's result: answer, evidence (packed to the budget when one is set), views."""
    summaries = [
        ViewSummary(
            view=v.view,
            status=v.status,
            nodes=len(v.nodes),
            elapsed_ms=v.elapsed_ms,
            error=v.error,
        )
        for v in [run.seeds.semantic, *views]
    ]
    included = set(context.node_ids)
    memories_out = run.ranking.to_models(run.opts.memory_limit)
    nodes_out = [n for n in merged.nodes if n.uuid in included][:50]
    packed = None
    if run.opts.max_tokens is not None:
        done = pack(memories_out, nodes_out, s.sources, run.opts.max_tokens)
        memories_out, nodes_out, packed = done.memories, done.nodes, done.report
        included = {n.uuid for n in nodes_out}
    return RecallResult(
        question=run.question,
        graph=run.namespace,
        answer=s.answer,
        confidence=s.confidence,
        reasoning=s.reasoning,
        sources=s.sources,
        source_nodes=source_nodes(s.sources, merged.nodes),
        confidence_factors=synth.factors,
        follow_ups=s.follow_ups,
        intent=run.intent.model_dump(mode="json"),
        context=context,
        memories=memories_out,
        nodes=nodes_out,
        edges=[e for e in merged.edges if e.source in included and e.target in included][:100],
        views=summaries,
        fallback="semantic_only" if _expanded(views) < SEMANTIC_ONLY_BELOW else None,
        degraded=bool(run.reasons),
        degraded_reasons=run.reasons,
        usage=usage_report(*run.usages),
        timings_ms={k: round(v, 2) for k, v in run.timings.items()},
        mode=run.query_mode,
        core=ranked.ranked.core,
        extended=ranked.ranked.extended,
        ranking=ranked.report,
        packed=packed,
    )


def _expanded(views: Sequence[ViewResult]) -> int:
    return sum(len(v.nodes) for v in views if v.status == "ok" and v.view != "semantic")
