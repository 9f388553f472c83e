"""Retrieval quality on a conversational dataset: polyg's recall against BM25 and dense k-NN.

Each conversation goes to its own namespace. Every non-empty turn is written through
`Memory.remember` (`speaker: text`, the session's time as reference time, the turn id
as `source_id`, the speaker as `who`). Each question is then asked with
`Memory.recall` (reference time: the conversation's last session) and scored on
`RecallResult.memories`, the stored memories best first (the answer itself is graded
too: token F1 against the gold answer and confidence calibration, `polyg_bench.answers`;
that grading does not touch how memories are scored):

* a memory stands for its `source_id` and for every other turn with the same text:
  remember stores identical texts (same content hash) once, under the first turn's id,
  so identical texts keep every turn id;
* polyg's ranked turns are the memories' turn ids in order, without repeats. Nothing
  else of the result (entities, events, concepts) is mapped to turns.

The baselines rank the same non-empty turns of the same conversation: BM25 (bm25s as
published: English stop words, no stemming, indexed once per conversation, its top k
as returned) and dense k-NN (cosine over the same
embedder's vectors of `speaker: text`). Evidence recall@k is the fraction of a
question's evidence turns among the top k, averaged per category and overall.

With `ablation`, every question is asked again on the same data with each retriever
alone and with each left out ("all - X"); recall reads only, so the full system's
answers do not change by being asked first.
"""

from __future__ import annotations

import logging
import math
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from polyg_core.graphs.semantic import content_hash
from polyg_core.memory import Memory
from polyg_core.recall.memories import check_retrievers
from polyg_core.recall.packing import item_cost
from polyg_core.recall.warm import freeze_heap, warm_recall
from polyg_shared.retrieval import RETRIEVERS, RecalledMemory

from polyg_bench.answers import (
    Graded,
    calibration_table,
    expected_calibration_error,
    f1_table,
    grade,
    token_f1,
)
from polyg_bench.dataset import Conversation, Dataset, Question
from polyg_bench.stats import Timing, percentile

logger = logging.getLogger(__name__)

KS = (1, 5, 10, 20)
BUDGETS = (500, 1000, 2000)
BUDGET_DEPTH = 200
"""How many memories recall is asked for, so the largest budget can fill up."""
SYSTEMS = ("polyg", "bm25", "dense")
FULL = "all"
USAGE_FIELDS = ("prompt_tokens", "completion_tokens", "cost_usd", "llm_calls")

Progress = Callable[[str], None]


def recall_at(ranked: Sequence[str], evidence: Sequence[str], k: int) -> float:
    """Fraction of `evidence` among the first k of `ranked` (1.0 when there is no evidence)."""
    if not evidence:
        return 1.0
    top = set(ranked[:k])
    return sum(1 for e in set(evidence) if e in top) / len(set(evidence))


def turn_groups(turns: Mapping[str, str]) -> dict[str, list[str]]:
    """Content hash of each text to the ids of the turns with that text, in order."""
    groups: dict[str, list[str]] = defaultdict(list)
    for tid, text in turns.items():
        groups[content_hash(text)].append(tid)
    return dict(groups)


def memory_turns(
    memory: RecalledMemory, turns: Mapping[str, str], groups: Mapping[str, list[str]]
) -> list[str]:
    """The turn ids a recalled memory stands for: its source, then its identical texts."""
    source = memory.source_id
    out = [source] if source is not None and source in turns else []
    same = [content_hash(memory.content)]
    if out:
        same.append(content_hash(turns[out[0]]))
    for digest in same:
        out += [t for t in groups.get(digest, []) if t not in out]
    return out


def ranked_turns(
    memories: Sequence[RecalledMemory],
    turns: Mapping[str, str],
    groups: Mapping[str, list[str]],
    k: int,
) -> list[str]:
    """The first k distinct turn ids of `memories`, best memory first."""
    out: list[str] = []
    for m in memories:
        out += [t for t in memory_turns(m, turns, groups) if t not in out]
    return out[:k]


def within_budget(ranked: Sequence[str], texts: Mapping[str, str], budget: int) -> list[str]:
    """The turns of `ranked` whose texts fit `budget` tokens, taken best first.

    Each costs what recall's packing charges (`polyg_core.recall.packing.item_cost`); one
    that does not fit is skipped and later, shorter ones may still be taken, as recall's
    `max_tokens` packs its memories.
    """
    out: list[str] = []
    used = 0
    for tid in ranked:
        cost = item_cost(texts.get(tid, ""))
        if used + cost <= budget:
            out.append(tid)
            used += cost
    return out


GRAPH_SIDE = ("entity", "graph", "time")
"""The retrievers that read the graphs rather than the memories' text."""


def ablation_configs(
    chosen: Sequence[str], leave_one_out: bool = True
) -> dict[str, tuple[str, ...]]:
    """Each retriever alone (named by itself), then each left out (`all - X`), then the
    graph-side retrievers left out together (`all - graph side`) when two or more ran."""
    configs = {name: (name,) for name in chosen}
    if leave_one_out and len(chosen) > 1:
        configs |= {f"{FULL} - {name}": tuple(r for r in chosen if r != name) for name in chosen}
        text_side = tuple(r for r in chosen if r not in GRAPH_SIDE)
        if text_side and len(chosen) - len(text_side) >= 2:
            configs[f"{FULL} - graph side"] = text_side
    return configs


class Bm25Baseline:
    """BM25 over one conversation's turns, indexed once and asked per question."""

    def __init__(self, ids: list[str], corpus: list[str]) -> None:
        import bm25s

        self._bm25s = bm25s
        self._ids = ids
        self._retriever = bm25s.BM25()
        if corpus:  # bm25s cannot index nothing
            self._retriever.index(
                bm25s.tokenize(corpus, stopwords="en", show_progress=False), show_progress=False
            )

    def rank(self, query: str, k: int) -> list[str]:
        """The top-k turn ids for `query`, as bm25s returns them (ties at zero included)."""
        if not self._ids:
            return []
        docs, _ = self._retriever.retrieve(
            self._bm25s.tokenize([query], stopwords="en", show_progress=False),
            k=min(k, len(self._ids)),
            show_progress=False,
        )
        return [self._ids[int(i)] for i in docs[0].tolist()]


@dataclass
class MemoryHit:
    """One memory recall returned for a question: its scores and the turns it stands for."""

    uuid: str
    score: float
    retrievers: dict[str, float]
    turns: list[str]


@dataclass
class QuestionResult:
    """One question's ranked turn ids per system and per ablation configuration."""

    conversation_id: str
    question: str
    category: str
    evidence: list[str]
    ranked: dict[str, list[str]] = field(default_factory=lambda: {})
    ablation: dict[str, list[str]] = field(default_factory=lambda: {})
    within: dict[str, dict[int, list[str]]] = field(default_factory=lambda: {})
    """Per system and token budget: the turns whose texts fit the budget, best first."""
    memories: list[MemoryHit] = field(default_factory=lambda: [])
    gold: str = ""
    answer: str = ""
    confidence: float = 0.0
    intent: str = ""
    answer_f1: float = 0.0
    factors: dict[str, float] = field(default_factory=lambda: {})
    """What the answer's confidence rests on (`raw` before calibration, its route)."""


def _mean(values: list[float]) -> float:
    return float(np.mean(values)) if values else 0.0


@dataclass
class RetrievalReport:
    """Recall per system, category and k, the ablation, costs and timings."""

    retrievers: list[str] = field(default_factory=lambda: list(RETRIEVERS))
    configurations: dict[str, tuple[str, ...]] = field(default_factory=lambda: {})
    questions: list[QuestionResult] = field(default_factory=lambda: [])
    turns: int = 0
    empty_turns: int = 0
    identical_turns: int = 0
    ignored_evidence: int = 0
    skipped_questions: int = 0
    namespaces: list[str] = field(default_factory=lambda: [])
    kept: bool = False
    ingest_seconds: float = 0.0
    recall_timing: Timing = field(default_factory=lambda: Timing("recall", []))
    recall_round_trips: list[int] = field(default_factory=lambda: [])
    remember_timing: Timing = field(default_factory=lambda: Timing("remember", []))
    remember_usage: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    recall_usage: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    remember_calls: list[dict[str, float]] = field(default_factory=lambda: [])
    recall_calls: list[dict[str, float]] = field(default_factory=lambda: [])
    degraded_recalls: int = 0

    @property
    def categories(self) -> list[str]:
        return sorted({q.category for q in self.questions})

    def _questions(self, category: str) -> list[QuestionResult]:
        return [q for q in self.questions if category in ("overall", q.category)]

    def recall(
        self, ranking: Callable[[QuestionResult], list[str]], category: str, k: int
    ) -> float:
        """Mean recall@k of `ranking` over the questions of `category` (or `overall`)."""
        return _mean([recall_at(ranking(q), q.evidence, k) for q in self._questions(category)])

    def graded(self) -> list[Graded]:
        """The full system's answers graded against the gold answers (questions with one)."""
        return [grade(q.category, q.answer, q.gold, q.confidence) for q in self.questions if q.gold]

    def answer_table(self) -> list[dict[str, Any]]:
        """Answer token F1 per category: {category, n, F1, right (share with F1 >= 0.5)}."""
        return f1_table(self.graded())

    def calibration(self) -> list[dict[str, Any]]:
        """Answers bucketed by confidence, with how often each bucket is right."""
        return calibration_table(self.graded())

    def ece(self) -> float | None:
        """The answers' expected calibration error (ten buckets)."""
        return expected_calibration_error(self.graded())

    def usage_table(self) -> list[dict[str, Any]]:
        """LLM usage per call of remember and recall: p50 and mean of each usage field.

        Rows are {call, n, <field>_p50, <field>_mean} for prompt_tokens,
        completion_tokens, total_tokens, cost_usd and llm_calls (all zero on the
        rule-based path).
        """
        rows: list[dict[str, Any]] = []
        for call, samples in (("remember", self.remember_calls), ("recall", self.recall_calls)):
            row: dict[str, Any] = {"call": call, "n": len(samples)}
            for name in (*USAGE_FIELDS[:2], "total_tokens", *USAGE_FIELDS[2:]):
                values = [
                    s["prompt_tokens"] + s["completion_tokens"]
                    if name == "total_tokens"
                    else s[name]
                    for s in samples
                ]
                digits = 8 if name == "cost_usd" else 1
                row[f"{name}_p50"] = round(percentile(values, 0.5), digits)
                row[f"{name}_mean"] = round(_mean(values), digits)
            rows.append(row)
        return rows

    def table(self, ks: Sequence[int] = KS) -> list[dict[str, Any]]:
        """Rows of {system, category, n, recall@k...}; category `overall` last."""
        rows = self._system_rows()
        for row in rows:
            system, cat = row["system"], row["category"]
            for k in ks:
                row[f"R@{k}"] = round(
                    self.recall(lambda q, s=system: q.ranked.get(s, []), cat, k), 3
                )
        return rows

    def _system_rows(self) -> list[dict[str, Any]]:
        """A row head {system, category, n} per system and category, `overall` last."""
        return [
            {"system": system, "category": cat, "n": len(self._questions(cat))}
            for system in SYSTEMS
            for cat in [*self.categories, "overall"]
        ]

    def budget_table(self, budgets: Sequence[int] = BUDGETS) -> list[dict[str, Any]]:
        """Rows of {system, category, n, R@k=10, R<=N tokens...}: evidence recall when
        what each system ranks is packed into N tokens, best first (`within_budget`)."""
        rows = self._system_rows()
        for row in rows:
            system, cat = row["system"], row["category"]
            row["R@10"] = round(self.recall(lambda q, s=system: q.ranked.get(s, []), cat, 10), 3)
            for b in budgets:
                row[f"R<={b} tok"] = round(
                    self.recall(
                        lambda q, s=system, b=b: q.within.get(s, {}).get(b, []),
                        cat,
                        10**6,
                    ),
                    3,
                )
        return rows

    def ablation_table(self, ks: Sequence[int] = KS) -> list[dict[str, Any]]:
        """Rows of {configuration, retrievers, R@k overall..., R@10 <category>...}.

        The full system (`all`) first, then each configuration of the ablation; empty
        when no ablation ran.
        """
        if not self.configurations:
            return []
        configs = {FULL: tuple(self.retrievers), **self.configurations}
        rows: list[dict[str, Any]] = []
        for name, chosen in configs.items():

            def ranking(q: QuestionResult, name: str = name) -> list[str]:
                return q.ranked.get("polyg", []) if name == FULL else q.ablation.get(name, [])

            row: dict[str, Any] = {"configuration": name, "retrievers": ",".join(chosen)}
            for k in ks:
                row[f"R@{k}"] = round(self.recall(ranking, "overall", k), 3)
            for cat in self.categories:
                row[f"R@10 {cat}"] = round(self.recall(ranking, cat, 10), 3)
            rows.append(row)
        return rows

    def invariant(self, ks: Sequence[int] = KS) -> list[dict[str, Any]]:
        """Per category: does polyg's R@k reach the best single retriever's, for every k?

        Rows are {category, holds, violations: ["R@k polyg x < <retriever> y", ...]};
        empty when no ablation ran (the single retrievers were not measured).
        """
        singles = [name for name, chosen in self.configurations.items() if len(chosen) == 1]
        if not singles:
            return []
        rows: list[dict[str, Any]] = []
        for cat in [*self.categories, "overall"]:
            violations: list[str] = []
            for k in ks:
                ours = self.recall(lambda q: q.ranked.get("polyg", []), cat, k)
                best, best_name = max(
                    (self.recall(lambda q, n=n: q.ablation.get(n, []), cat, k), n) for n in singles
                )
                # Rounded like the tables, so a violation is one a reader can see.
                if round(ours, 3) < round(best, 3):
                    violations.append(f"R@{k} polyg {ours:.3f} < {best_name} {best:.3f}")
            rows.append({"category": cat, "holds": not violations, "violations": violations})
        return rows

    def timings(self) -> dict[str, float]:
        """Ingest time and rate, recall p50/p95 and remember p50 (ms)."""
        return {
            "ingest_s": round(self.ingest_seconds, 1),
            "turns_per_s": round(self.turns / self.ingest_seconds, 2)
            if self.ingest_seconds
            else 0.0,
            "recall_p50_ms": round(self.recall_timing.p50, 1),
            "recall_p95_ms": round(self.recall_timing.p95, 1),
            "recall_round_trips": round(_mean([float(n) for n in self.recall_round_trips]), 1),
            "remember_p50_ms": round(self.remember_timing.p50, 1),
        }

    def data(self) -> dict[str, Any]:
        """Everything as plain JSON-ready data (tables, counts, every question's rankings)."""
        return {
            "retrievers": self.retrievers,
            "configurations": {k: list(v) for k, v in self.configurations.items()},
            "turns": self.turns,
            "empty_turns": self.empty_turns,
            "identical_turns": self.identical_turns,
            "ignored_evidence": self.ignored_evidence,
            "skipped_questions": self.skipped_questions,
            "namespaces": self.namespaces,
            "kept": self.kept,
            "timings": self.timings(),
            "table": self.table(),
            "answers": self.answer_table(),
            "calibration": self.calibration(),
            "ece": self.ece(),
            "ablation": self.ablation_table(),
            "budgets": self.budget_table(),
            "invariant": self.invariant(),
            "questions": [asdict(q) for q in self.questions],
        }


def _add_usage(total: dict[str, float], usage: Any, calls: list[dict[str, float]]) -> None:
    sample = {name: float(getattr(usage, name)) for name in USAGE_FIELDS}
    calls.append(sample)
    for name, value in sample.items():
        total[name] += value


class _Counter:
    """Reports `done/total` through `progress` about every tenth of the way."""

    def __init__(self, what: str, total: int, progress: Progress | None) -> None:
        self.what, self.total, self.progress = what, total, progress
        self.done = 0
        self.step = max(1, math.ceil(total / 10))
        self.started: float | None = None

    def begin(self) -> None:
        """Start the clock (once: the count runs across conversations)."""
        if self.started is None:
            self.started = time.perf_counter()

    def tick(self) -> None:
        self.begin()
        self.done += 1
        if self.progress is not None and (self.done % self.step == 0 or self.done == self.total):
            elapsed = time.perf_counter() - (self.started or 0.0)
            self.progress(f"{self.what}: {self.done}/{self.total} ({elapsed:.0f} s)")


async def run_retrieval(
    memory: Memory,
    dataset: Dataset,
    *,
    namespace_prefix: str = "bench_retrieval",
    keep: bool = False,
    max_k: int = max(KS),
    retrievers: Sequence[str] | None = None,
    ablation: bool = False,
    leave_one_out: bool = True,
    progress: Progress | None = None,
) -> RetrievalReport:
    """Ingest, ask and score every question of `dataset` (see module doc).

    Each conversation's namespace (`<prefix>_<index>`) is replaced before ingesting
    and deleted afterwards unless `keep`.

    Args:
        memory: the memory to ingest into and recall from.
        dataset: the conversations and questions.
        namespace_prefix: the namespaces' names are this plus `_<conversation index>`.
        keep: leave the namespaces in the store for inspection.
        max_k: how many turns each system ranks (and recall's memory limit).
        retrievers: what polyg's recall fuses (default all).
        ablation: also ask with each retriever alone and each left out.
        leave_one_out: with `ablation`, also each left out (the invariant needs only
            each retriever alone).
        progress: called with a line about every tenth of the turns and questions.

    Raises:
        InvalidInput: an unknown retriever name (before anything is ingested).
    """
    chosen = [r for r in RETRIEVERS if r in check_retrievers(retrievers)]
    configs = ablation_configs(chosen, leave_one_out) if ablation else {}
    report = RetrievalReport(
        retrievers=chosen,
        configurations=configs,
        ignored_evidence=len(dataset.ignored_evidence),
        skipped_questions=dataset.skipped_questions,
        kept=keep,
    )
    all_turns = [t for c in dataset.conversations for s in c.sessions for t in s.turns]
    report.empty_turns = sum(1 for t in all_turns if not t.text.strip())
    run = _Run(
        memory=memory,
        report=report,
        chosen=chosen,
        configs=configs,
        max_k=max_k,
        ingesting=_Counter("turns ingested", len(all_turns) - report.empty_turns, progress),
        asking=_Counter("questions asked", len(dataset.questions) * (1 + len(configs)), progress),
    )
    for ci, conv in enumerate(dataset.conversations):
        ns = f"{namespace_prefix}_{ci}"
        report.namespaces.append(ns)
        await memory.store.delete_graph(ns)
        try:
            await run.conversation(dataset, conv, ns)
        finally:
            if not keep:
                await memory.store.delete_graph(ns)
    return report


def _queries_served(memory: Memory) -> int:
    """Queries the store has sent so far (reads and writes, every server it uses)."""
    return sum(ep.reads + ep.writes for ep in memory.store.routing_stats())


@dataclass
class _Baselines:
    """BM25 and plain dense ranking over one conversation's turns."""

    ids: list[str]
    bm25: Bm25Baseline
    vectors: np.ndarray[Any, np.dtype[np.float64]]

    @classmethod
    async def build(cls, memory: Memory, turns: Mapping[str, str]) -> _Baselines:
        ids = list(turns)
        texts = [turns[i] for i in ids]
        vectors = (
            np.asarray(await memory.embedder.embed(texts), dtype=np.float64)
            if texts
            else np.zeros((0, memory.embedder.dimension))
        )
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return cls(ids, Bm25Baseline(ids, texts), vectors)

    async def dense(self, memory: Memory, question: str, depth: int) -> list[str]:
        qv = np.asarray((await memory.embedder.embed([question]))[0], dtype=np.float64)
        order = np.argsort(-(self.vectors @ qv), kind="stable")
        return [self.ids[int(i)] for i in order[:depth]]


@dataclass
class _Run:
    """One benchmark run: ingests each conversation, asks its questions, fills the report."""

    memory: Memory
    report: RetrievalReport
    chosen: list[str]
    configs: dict[str, tuple[str, ...]]
    max_k: int
    ingesting: _Counter
    asking: _Counter

    async def conversation(self, dataset: Dataset, conv: Conversation, ns: str) -> None:
        turns = dataset.turn_texts(conv.id)
        groups = turn_groups(turns)
        self.report.identical_turns += sum(len(g) - 1 for g in groups.values())
        # As the server does once it is up: recall's first-use parts loaded, and what the
        # process holds by then out of the garbage collector's full passes.
        warm_recall()
        freeze_heap()
        await self.ingest(conv, turns, ns)
        ref = conv.sessions[-1].date_time if conv.sessions else None
        baselines = await _Baselines.build(self.memory, turns)
        asked = [q for q in dataset.questions if q.conversation_id == conv.id]
        results: list[QuestionResult] = []
        self.asking.begin()
        for q in asked:
            results.append(await self.ask(q, conv.id, ns, ref, turns, groups, baselines))
            self.asking.tick()
        await self.ablate(asked, results, ns, ref, turns, groups)
        self.report.questions += results

    async def ingest(self, conv: Conversation, turns: Mapping[str, str], ns: str) -> None:
        report = self.report
        self.ingesting.begin()
        t0 = time.perf_counter()
        for session in conv.sessions:
            for turn in session.turns:
                if turn.id not in turns:
                    continue  # empty: remember refuses it and no question can need it
                t1 = time.perf_counter()
                res = await self.memory.remember(
                    turns[turn.id],
                    graph=ns,
                    reference_time=session.date_time,
                    source_id=turn.id,
                    who=turn.speaker.strip() or None,
                )
                report.remember_timing.samples.append((time.perf_counter() - t1) * 1000)
                _add_usage(report.remember_usage, res.usage, report.remember_calls)
                self.ingesting.tick()
        report.ingest_seconds += time.perf_counter() - t0
        report.turns += len(turns)

    async def ask(
        self,
        q: Question,
        conversation_id: str,
        ns: str,
        ref: str | None,
        turns: Mapping[str, str],
        groups: Mapping[str, list[str]],
        baselines: _Baselines,
    ) -> QuestionResult:
        report, max_k = self.report, self.max_k
        queries = _queries_served(self.memory)
        t1 = time.perf_counter()
        result = await self.memory.recall(
            q.question,
            graph=ns,
            reference_time=ref,
            retrievers=self.chosen,
            memory_limit=max(max_k, BUDGET_DEPTH),
        )
        report.recall_timing.samples.append((time.perf_counter() - t1) * 1000)
        report.recall_round_trips.append(_queries_served(self.memory) - queries)
        _add_usage(report.recall_usage, result.usage, report.recall_calls)
        report.degraded_recalls += int(result.degraded)
        deep = {
            "polyg": ranked_turns(result.memories, turns, groups, BUDGET_DEPTH),
            "bm25": baselines.bm25.rank(q.question, BUDGET_DEPTH),
            "dense": await baselines.dense(self.memory, q.question, BUDGET_DEPTH),
        }
        return QuestionResult(
            conversation_id=conversation_id,
            question=q.question,
            category=q.category,
            evidence=list(q.evidence),
            ranked={name: found[:max_k] for name, found in deep.items()},
            within={
                name: {b: within_budget(found, turns, b) for b in BUDGETS}
                for name, found in deep.items()
            },
            gold=q.answer,
            answer=result.answer,
            confidence=result.confidence,
            intent=str(result.intent.get("type", "")),
            factors=dict(result.confidence_factors),
            answer_f1=token_f1(result.answer, q.answer) if q.answer else 0.0,
            memories=[
                MemoryHit(
                    uuid=m.uuid,
                    score=m.score,
                    retrievers=dict(m.retrievers),
                    turns=memory_turns(m, turns, groups),
                )
                for m in result.memories[:max_k]
            ],
        )

    async def ablate(
        self,
        asked: list[Question],
        results: list[QuestionResult],
        ns: str,
        ref: str | None,
        turns: Mapping[str, str],
        groups: Mapping[str, list[str]],
    ) -> None:
        """Each question again with each configuration's retrievers only."""
        for name, subset in self.configs.items():
            for q, scored in zip(asked, results, strict=True):
                result = await self.memory.recall(
                    q.question,
                    graph=ns,
                    reference_time=ref,
                    retrievers=subset,
                    memory_limit=self.max_k,
                )
                scored.ablation[name] = ranked_turns(result.memories, turns, groups, self.max_k)
                self.asking.tick()
