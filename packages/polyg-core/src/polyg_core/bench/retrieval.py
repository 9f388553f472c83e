"""Retrieval quality on a conversational dataset: polyg's recall against BM25 and dense k-NN.

Each conversation goes to its own namespace. Every turn is written through
`Memory.remember` (`speaker: text`, the session's time as reference time, the turn id
as `source_id`). Each question is then asked with `Memory.recall` (reference time: the
conversation's last session) and the returned nodes, best first, are turned into
turn ids:

* `S_Memory`: its `source_id`;
* `S_Concept`: the memories about it (`S_ABOUT`), oldest first;
* entities, events, facts, causal nodes: the turns whose words contain most of the
  node's words (at least 60%, at most 3 turns, conversation order).

The first k distinct turn ids are polyg's top k. The baselines rank the same turns of
the same conversation: BM25 (bm25s, English stop words) and dense k-NN (cosine over
the same embedder's vectors). Evidence recall@k is the fraction of a question's
evidence turns among the top k, averaged per category and overall.
"""

from __future__ import annotations

import logging
import re
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from polyg_shared.retrieval import ContextNode

from polyg_core.bench.dataset import Dataset
from polyg_core.bench.stats import Timing, percentile
from polyg_core.memory import Memory

logger = logging.getLogger(__name__)

KS = (1, 5, 10, 20)
SYSTEMS = ("polyg", "bm25", "dense")
USAGE_FIELDS = ("prompt_tokens", "completion_tokens", "cost_usd", "llm_calls")
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "it",
        "its",
        "this",
        "that",
        "with",
        "by",
        "from",
        "as",
        "i",
        "you",
        "he",
        "she",
        "we",
        "they",
        "my",
        "your",
        "his",
        "her",
        "our",
        "their",
        "me",
        "him",
        "us",
        "them",
        "do",
        "did",
        "does",
        "so",
        "but",
        "not",
        "no",
        "yes",
    ]
)
_WORD = re.compile(r"[a-z0-9]+")
MATCH_AT = 0.6
MAX_TURNS_PER_NODE = 3


def words(text: str) -> set[str]:
    """Lower-case word tokens of `text` without common stop words."""
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def text_matches(text: str, turns: dict[str, str]) -> list[str]:
    """Turn ids whose words cover the most of `text`'s words (>= MATCH_AT, at most 3)."""
    want = words(text)
    if not want:
        return []
    scored = [(len(want & words(t)) / len(want), tid) for tid, t in turns.items()]
    best = max((s for s, _ in scored), default=0.0)
    if best < MATCH_AT:
        return []
    return [tid for s, tid in scored if s == best][:MAX_TURNS_PER_NODE]


def recall_at(ranked: Sequence[str], evidence: Sequence[str], k: int) -> float:
    """Fraction of `evidence` among the first k of `ranked` (1.0 when there is no evidence)."""
    if not evidence:
        return 1.0
    top = set(ranked[:k])
    return sum(1 for e in set(evidence) if e in top) / len(set(evidence))


@dataclass
class QuestionResult:
    """One question's ranked turn ids per system."""

    conversation_id: str
    question: str
    category: str
    evidence: list[str]
    ranked: dict[str, list[str]] = field(default_factory=lambda: {})


@dataclass
class RetrievalReport:
    """Recall per system, category and k, with costs and timings."""

    questions: list[QuestionResult] = field(default_factory=lambda: [])
    turns: int = 0
    ingest_seconds: float = 0.0
    recall_timing: Timing = field(default_factory=lambda: Timing("recall", []))
    remember_timing: Timing = field(default_factory=lambda: Timing("remember", []))
    remember_usage: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    recall_usage: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    remember_calls: list[dict[str, float]] = field(default_factory=lambda: [])
    recall_calls: list[dict[str, float]] = field(default_factory=lambda: [])
    degraded_recalls: int = 0

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
                row[f"{name}_mean"] = round(float(np.mean(values)), digits) if values else 0.0
            rows.append(row)
        return rows

    def table(self, ks: Sequence[int] = KS) -> list[dict[str, Any]]:
        """Rows of {system, category, n, recall@k...}; category `overall` last."""
        cats = sorted({q.category for q in self.questions})
        rows: list[dict[str, Any]] = []
        for system in SYSTEMS:
            for cat in [*cats, "overall"]:
                qs = [q for q in self.questions if cat in ("overall", q.category)]
                row: dict[str, Any] = {"system": system, "category": cat, "n": len(qs)}
                for k in ks:
                    vals = [recall_at(q.ranked.get(system, []), q.evidence, k) for q in qs]
                    row[f"R@{k}"] = round(float(np.mean(vals)), 3) if vals else 0.0
                rows.append(row)
        return rows


def _add_usage(total: dict[str, float], usage: Any, calls: list[dict[str, float]]) -> None:
    sample = {name: float(getattr(usage, name)) for name in USAGE_FIELDS}
    calls.append(sample)
    for name, value in sample.items():
        total[name] += value


async def node_turns(
    memory: Memory, namespace: str, nodes: Sequence[ContextNode], turns: dict[str, str]
) -> list[str]:
    """Distinct turn ids behind `nodes`, in the nodes' order (see module doc)."""
    ids = [n.uuid for n in nodes]
    res = await memory.store.query(
        namespace,
        "MATCH (m:S_Memory) WHERE m.uuid IN $ids RETURN m.uuid, m.source_id",
        {"ids": ids},
        read_only=True,
    )
    memory_source = {str(u): str(s) for u, s in res.rows if s is not None}
    res = await memory.store.query(
        namespace,
        "MATCH (m:S_Memory)-[:S_ABOUT]->(c:S_Concept) WHERE c.uuid IN $ids "
        "RETURN c.uuid, m.source_id ORDER BY m.created_at",
        {"ids": ids},
        read_only=True,
    )
    concept_sources: dict[str, list[str]] = defaultdict(list)
    for u, s in res.rows:
        if s is not None:
            concept_sources[str(u)].append(str(s))
    out: list[str] = []
    for n in nodes:
        if n.uuid in memory_source:
            found = [memory_source[n.uuid]]
        elif n.uuid in concept_sources:
            found = concept_sources[n.uuid][:MAX_TURNS_PER_NODE]
        else:
            found = text_matches(n.text, turns)
        out.extend(t for t in found if t not in out)
    return out


def bm25_rank(corpus_ids: list[str], corpus: list[str], query: str, k: int) -> list[str]:
    """The top-k turn ids for `query` by BM25 (bm25s).

    Raises:
        ImportError: bm25s is not installed (the message gives the install line).
    """
    try:
        import bm25s
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "the BM25 baseline needs bm25s: uv sync --dev, or pip install bm25s"
        ) from exc
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize(corpus, stopwords="en", show_progress=False), show_progress=False
    )  # pyright: ignore[reportUnknownMemberType]
    docs, _ = retriever.retrieve(  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        bm25s.tokenize([query], stopwords="en", show_progress=False),
        k=min(k, len(corpus)),
        show_progress=False,
    )
    return [corpus_ids[int(i)] for i in docs[0]]  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]


async def run_retrieval(
    memory: Memory,
    dataset: Dataset,
    *,
    namespace_prefix: str = "bench_retrieval",
    keep: bool = False,
    max_k: int = max(KS),
) -> RetrievalReport:
    """Ingest, ask and score every question of `dataset` (see module doc).

    Each conversation's namespace (`<prefix>_<index>`) is replaced before ingesting
    and deleted afterwards unless `keep`.
    """
    report = RetrievalReport()
    t_ingest = 0.0
    for ci, conv in enumerate(dataset.conversations):
        ns = f"{namespace_prefix}_{ci}"
        await memory.store.delete_graph(ns)
        turns = dataset.turn_texts(conv.id)
        try:
            t0 = time.perf_counter()
            for session in conv.sessions:
                for turn in session.turns:
                    t1 = time.perf_counter()
                    res = await memory.remember(
                        turns[turn.id],
                        graph=ns,
                        reference_time=session.date_time,
                        source_id=turn.id,
                    )
                    report.remember_timing.samples.append((time.perf_counter() - t1) * 1000)
                    _add_usage(report.remember_usage, res.usage, report.remember_calls)
            t_ingest += time.perf_counter() - t0
            report.turns += len(turns)
            ref = conv.sessions[-1].date_time if conv.sessions else None
            ids = list(turns)
            texts = [turns[i] for i in ids]
            turn_vectors = await memory.embedder.embed(texts)
            for q in (q for q in dataset.questions if q.conversation_id == conv.id):
                t1 = time.perf_counter()
                result = await memory.recall(q.question, graph=ns, reference_time=ref)
                report.recall_timing.samples.append((time.perf_counter() - t1) * 1000)
                _add_usage(report.recall_usage, result.usage, report.recall_calls)
                report.degraded_recalls += int(result.degraded)
                ours = (await node_turns(memory, ns, result.nodes, turns))[:max_k]
                qv = (await memory.embedder.embed([q.question]))[0]
                order = np.argsort(-(turn_vectors @ qv))[:max_k]
                report.questions.append(
                    QuestionResult(
                        conversation_id=conv.id,
                        question=q.question,
                        category=q.category,
                        evidence=list(q.evidence),
                        ranked={
                            "polyg": ours,
                            "bm25": bm25_rank(ids, texts, q.question, max_k),
                            "dense": [ids[int(i)] for i in order],
                        },
                    )
                )
        finally:
            if not keep:
                await memory.store.delete_graph(ns)
    report.ingest_seconds = t_ingest
    return report
