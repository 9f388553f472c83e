"""How good recall's answers are: token F1 against a gold answer, and confidence calibration.

The F1 is the one LoCoMo and SQuAD report: both texts are normalised (lower case, commas
and other punctuation removed, the articles a/an/the dropped, whitespace collapsed), split
into tokens, and F1 is the harmonic mean of the shared tokens' precision and recall (no
stemming). An answer counts as right when its F1 is at least 0.5.

Calibration buckets answers by their confidence (ten buckets of 0.1) and reports how
often each bucket is right: a confidence that means something is right about as often as
it says. The expected calibration error (ECE) is the mean gap between a bucket's mean
confidence and its share right, weighted by the bucket's size.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

RIGHT_F1 = 0.5
BUCKETS = tuple(round(0.1 * i, 1) for i in range(11))

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    """Lower case, no punctuation, no articles, single spaces (LoCoMo's normalisation)."""
    text = text.replace(",", "").lower().translate(_PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def token_f1(prediction: str, gold: str) -> float:
    """Token F1 of `prediction` against `gold` after normalisation (0 when either is empty)."""
    pred = normalize_answer(prediction).split()
    truth = normalize_answer(gold).split()
    if not pred or not truth:
        return 0.0
    common = Counter(pred) & Counter(truth)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision = same / len(pred)
    recall = same / len(truth)
    return 2 * precision * recall / (precision + recall)


@dataclass(frozen=True)
class Graded:
    """One answer with its confidence and whether it is right."""

    category: str
    confidence: float
    f1: float | None
    right: bool


def grade(category: str, answer: str, gold: str, confidence: float) -> Graded:
    """An answer graded against its gold answer (right when token F1 >= 0.5)."""
    f1 = token_f1(answer, gold)
    return Graded(category, confidence, f1, f1 >= RIGHT_F1)


def bucket_of(confidence: float, edges: Sequence[float] = BUCKETS) -> int:
    """The index of the bucket [edges[i], edges[i+1]) holding `confidence` (1.0 in the last)."""
    for i in range(len(edges) - 1):
        if confidence < edges[i + 1]:
            return i
    return len(edges) - 2


def calibration_table(
    graded: Sequence[Graded], edges: Sequence[float] = BUCKETS
) -> list[dict[str, Any]]:
    """Rows of {confidence, n, right, accuracy, mean_confidence, mean_f1}, lowest bucket
    first (mean_f1 only when the answers have a gold answer)."""
    rows: list[dict[str, Any]] = []
    for i in range(len(edges) - 1):
        inside = [g for g in graded if bucket_of(g.confidence, edges) == i]
        right = sum(1 for g in inside if g.right)
        closing = "]" if i == len(edges) - 2 else ")"
        rows.append(
            {
                "confidence": f"[{edges[i]:.1f}, {edges[i + 1]:.1f}{closing}",
                "n": len(inside),
                "right": right,
                "accuracy": round(right / len(inside), 3) if inside else None,
                "mean_confidence": round(sum(g.confidence for g in inside) / len(inside), 3)
                if inside
                else None,
                "mean_f1": round(sum(f1s) / len(f1s), 3)
                if (f1s := [g.f1 for g in inside if g.f1 is not None])
                else None,
            }
        )
    return rows


def expected_calibration_error(
    graded: Sequence[Graded], edges: Sequence[float] = BUCKETS
) -> float | None:
    """Sum over buckets of |mean confidence - share right| x the bucket's share of answers
    (None when there are no answers)."""
    if not graded:
        return None
    total = 0.0
    for i in range(len(edges) - 1):
        inside = [g for g in graded if bucket_of(g.confidence, edges) == i]
        if inside:
            gap = sum(g.confidence for g in inside) / len(inside) - sum(
                1 for g in inside if g.right
            ) / len(inside)
            total += abs(gap) * len(inside) / len(graded)
    return round(total, 4)


def f1_table(graded: Sequence[Graded]) -> list[dict[str, Any]]:
    """Rows of {category, n, F1, right} (mean token F1, share with F1 >= 0.5); overall last."""
    rows: list[dict[str, Any]] = []
    categories = sorted({g.category for g in graded})
    for cat in [*categories, "overall"]:
        inside = [g for g in graded if cat in ("overall", g.category)]
        n = len(inside)
        rows.append(
            {
                "category": cat,
                "n": n,
                "F1": round(sum(f1s) / len(f1s), 3)
                if (f1s := [g.f1 for g in inside if g.f1 is not None])
                else None,
                "right": round(sum(1 for g in inside if g.right) / n, 3) if n else 0.0,
            }
        )
    return rows


# -- the shipped scenarios --------------------------------------------------------------------

SCENARIO_REFERENCE_TIME = "2026-01-14T12:00:00Z"
"""Every shipped scenario's data lies before this instant; "now" for its questions."""


@dataclass(frozen=True)
class ScenarioAnswer:
    """One scenario question's answer and whether it says what it should.

    `kind` is "answerable" for a scenario's query, else the probe's kind (what the data
    lacks: "unanswerable", "wrong_entity", "wrong_time", "partial").
    """

    scenario: str
    question: str
    answer: str
    confidence: float
    right: bool
    missing: list[str]
    unwanted: list[str]
    kind: str = "answerable"
    factors: dict[str, float] = field(default_factory=dict[str, float])


def _comparable(text: str) -> str:
    # Answers write times as "2026-01-05 09:15", expectations may use ISO 8601's "T".
    return re.sub(r"(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})", r"\1 \2", text).lower()


def check_expected(
    answer: str, contains: Sequence[str], not_contains: Sequence[str]
) -> tuple[list[str], list[str]]:
    """What the answer misses of `contains` and holds of `not_contains` (case-insensitive)."""
    low = _comparable(answer)
    missing = [w for w in contains if _comparable(w) not in low]
    unwanted = [w for w in not_contains if _comparable(w) in low]
    return missing, unwanted


async def run_scenario_answers(
    memory: Any,
    names: Sequence[str] | None = None,
    *,
    namespace_prefix: str = "bench_answers",
    keep: bool = False,
    reference_time: str = SCENARIO_REFERENCE_TIME,
    probes: bool = True,
) -> list[ScenarioAnswer]:
    """Load each shipped scenario into its own namespace and ask its questions.

    An answer is right when it holds every `expected_answer_contains` and none of the
    `expected_answer_not_contains` (the scenarios carry no gold answer for token F1).
    With `probes`, the scenarios' probes are asked too and graded by the same rule: each
    expects what the data does not hold, so none is right, and calibration shows whether
    their confidence falls below the answerable queries'.
    Namespaces (`<prefix>_<scenario>`) are replaced first and deleted after unless `keep`.
    """
    from polyg_core.scenarios import available, load_scenario, read_scenario

    out: list[ScenarioAnswer] = []
    for name in names or available():
        ns = f"{namespace_prefix}_{name}"
        await memory.store.delete_graph(ns)
        try:
            report = await load_scenario(memory, name, ns)
            if report.errors or report.aborted:
                # A scenario that did not load would grade its answers as wrong.
                raise RuntimeError(f"scenario {name} did not load: {report.errors[:3]}")
            scenario = read_scenario(name)
            for q in [*scenario.queries, *(scenario.probes if probes else [])]:
                result = await memory.recall(q.input, graph=ns, reference_time=reference_time)
                missing, unwanted = check_expected(
                    result.answer, q.expected_answer_contains, q.expected_answer_not_contains
                )
                out.append(
                    ScenarioAnswer(
                        name,
                        q.input,
                        result.answer,
                        result.confidence,
                        not missing and not unwanted,
                        missing,
                        unwanted,
                        q.kind,
                        dict(result.confidence_factors),
                    )
                )
        finally:
            if not keep:
                await memory.store.delete_graph(ns)
    return out


def scenario_graded(answers: Sequence[ScenarioAnswer]) -> list[Graded]:
    """Scenario answers for the calibration table (no F1: right means as expected)."""
    return [Graded(a.scenario, a.confidence, None, a.right) for a in answers]


def kind_table(answers: Sequence[ScenarioAnswer]) -> list[dict[str, Any]]:
    """Rows of {kind, n, right, mean_confidence, max_confidence} per question kind
    (answerable queries first, then each kind of probe)."""
    kinds = ["answerable", *sorted({a.kind for a in answers} - {"answerable"})]
    rows: list[dict[str, Any]] = []
    for kind in kinds:
        inside = [a for a in answers if a.kind == kind]
        if not inside:
            continue
        rows.append(
            {
                "kind": kind,
                "n": len(inside),
                "right": sum(1 for a in inside if a.right),
                "mean_confidence": round(sum(a.confidence for a in inside) / len(inside), 3),
                "max_confidence": round(max(a.confidence for a in inside), 3),
            }
        )
    return rows
