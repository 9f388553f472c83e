"""Intent classification accuracy on a labelled question set (seed 000's accuracy table).

`intent_questions.yaml` holds at least 300 questions, each labelled with its type, the
entities it names, its timeframe (resolved against the file's reference time) and, for
WHY, the causal direction. The rule-based classifier is scored on each: precision,
recall and F1 per type, and the share of questions whose entities, timeframe and
direction it reads exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, cast

import yaml
from polyg_core.errors import InvalidInput
from polyg_core.recall.classifier import RuleClassifier
from polyg_core.text.normalize import normalize_name
from polyg_shared.intents import Intent, IntentType
from polyg_shared.timeutil import parse_timestamp

TYPES = [t.value for t in IntentType]


@dataclass(frozen=True)
class LabelledQuestion:
    """A question with the intent it should be read as."""

    question: str
    type: str
    entities: list[str]
    timeframe: tuple[str, str] | None
    direction: str | None = None


@dataclass(frozen=True)
class QuestionSet:
    """The labelled questions, the known entity names and the reference time."""

    reference_time: str
    known_entities: list[str]
    questions: list[LabelledQuestion]


def _strings(value: Any) -> list[str]:
    """A list of names as strings (none when the key is missing or empty)."""
    items: list[Any] = value or []
    return [str(e) for e in items]


def _window(timeframe: object) -> tuple[str, str] | None:
    """A labelled question's timeframe as (start, end), or None when it has none."""
    if not isinstance(timeframe, dict):
        return None
    span = cast(dict[str, Any], timeframe)
    return (str(span["start"]), str(span["end"]))


def load_questions(path: Path | None = None) -> QuestionSet:
    """The labelled set (the shipped one unless `path` is given).

    Raises:
        InvalidInput: the file is not a labelled set (says which question is wrong).
    """
    text = (
        path.read_text(encoding="utf-8")
        if path is not None
        else (resources.files(__package__ or "polyg_bench") / "intent_questions.yaml").read_text(
            encoding="utf-8"
        )
    )
    loaded: object = yaml.safe_load(text)
    if not isinstance(loaded, dict):
        raise InvalidInput("an intent question set needs 'reference_time' and a 'questions' list")
    raw = cast(dict[str, Any], loaded)
    if not isinstance(raw.get("questions"), list):
        raise InvalidInput("an intent question set needs 'reference_time' and a 'questions' list")
    out: list[LabelledQuestion] = []
    for i, item in enumerate(cast(list[object], raw["questions"])):
        if not isinstance(item, dict):
            raise InvalidInput(
                f"question {i + 1}: needs 'question' and a 'type' among {', '.join(TYPES)}"
            )
        q = cast(dict[str, Any], item)
        if q.get("type") not in TYPES or not q.get("question"):
            raise InvalidInput(
                f"question {i + 1}: needs 'question' and a 'type' among {', '.join(TYPES)}"
            )
        window = _window(q.get("timeframe"))
        out.append(
            LabelledQuestion(
                question=str(q["question"]),
                type=str(q["type"]),
                entities=_strings(q.get("entities")),
                timeframe=window,
                direction=str(q["direction"]) if q.get("direction") else None,
            )
        )
    return QuestionSet(str(raw.get("reference_time")), _strings(raw.get("known_entities")), out)


@dataclass
class IntentReport:
    """Per question: the label and what the classifier read."""

    pairs: list[tuple[LabelledQuestion, Intent]] = field(
        default_factory=list[tuple[LabelledQuestion, Intent]]
    )

    def type_table(self) -> list[dict[str, Any]]:
        """Rows of {intent, n, precision, recall, F1} per type, then overall accuracy."""
        rows: list[dict[str, Any]] = []
        for t in TYPES:
            tp = sum(1 for q, i in self.pairs if q.type == t and i.type.value == t)
            predicted = sum(1 for _, i in self.pairs if i.type.value == t)
            actual = sum(1 for q, _ in self.pairs if q.type == t)
            p = tp / predicted if predicted else 0.0
            r = tp / actual if actual else 0.0
            f1 = 2 * p * r / (p + r) if p + r else 0.0
            rows.append(
                {"intent": t, "n": actual, "precision": round(p, 3), "recall": round(r, 3),
                 "F1": round(f1, 3)}
            )  # fmt: skip
        n = len(self.pairs)
        right = sum(1 for q, i in self.pairs if q.type == i.type.value)
        rows.append(
            {"intent": "accuracy", "n": n, "precision": None, "recall": None,
             "F1": round(right / n, 3) if n else 0.0}
        )  # fmt: skip
        return rows

    def parts_table(self) -> list[dict[str, Any]]:
        """Share of questions whose entities, timeframe and (WHY) direction are read exactly."""
        n = len(self.pairs)

        def share(ok: list[bool]) -> float:
            return round(sum(ok) / len(ok), 3) if ok else 0.0

        entities = [
            sorted(normalize_name(e) for e in q.entities)
            == sorted(normalize_name(e) for e in i.entities)
            for q, i in self.pairs
        ]
        timeframes = [_same_window(q, i) for q, i in self.pairs]
        with_time = [_same_window(q, i) for q, i in self.pairs if q.timeframe is not None]
        directions = [
            i.causal_direction.value == q.direction
            for q, i in self.pairs
            if q.type == "WHY" and q.direction
        ]
        return [
            {"part": "entities (exact set)", "n": n, "accuracy": share(entities)},
            {"part": "timeframe (exact, or none when none is asked)", "n": n,
             "accuracy": share(timeframes)},
            {"part": "timeframe, questions that name a time", "n": len(with_time),
             "accuracy": share(with_time)},
            {"part": "causal direction (WHY)", "n": len(directions),
             "accuracy": share(directions)},
        ]  # fmt: skip

    def mistakes(self, limit: int = 20) -> list[dict[str, Any]]:
        """The first questions read wrongly, and how."""
        out: list[dict[str, Any]] = []
        for q, i in self.pairs:
            wrong: list[str] = []
            if q.type != i.type.value:
                wrong.append(f"type {i.type.value} (labelled {q.type})")
            if sorted(map(normalize_name, q.entities)) != sorted(map(normalize_name, i.entities)):
                wrong.append(f"entities {i.entities} (labelled {q.entities})")
            if not _same_window(q, i):
                wrong.append("timeframe")
            if wrong:
                out.append({"question": q.question, "wrong": "; ".join(wrong)})
            if len(out) >= limit:
                break
        return out


def _same_window(q: LabelledQuestion, i: Intent) -> bool:
    tf = i.timeframe
    if q.timeframe is None:
        return tf is None
    if tf is None or tf.start is None or tf.end is None:
        return False
    return (tf.start, tf.end) == (parse_timestamp(q.timeframe[0]), parse_timestamp(q.timeframe[1]))


def classify_all(questions: QuestionSet) -> IntentReport:
    """Classify every labelled question with the rule-based classifier."""
    known = [(name, normalize_name(name)) for name in questions.known_entities]
    ref = parse_timestamp(questions.reference_time)
    rules = RuleClassifier()
    return IntentReport([(q, rules.classify(q.question, known, ref)) for q in questions.questions])
