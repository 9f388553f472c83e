"""The conversational memory dataset format read by the retrieval benchmark.

{"conversations": [{"id", "speakers": [..], "sessions": [{"id", "date_time",
  "turns": [{"id", "speaker", "text"}]}]}],
 "questions": [{"conversation_id", "question", "answer", "evidence": [turn ids],
  "category"}]}

Files converted from other benchmarks are not always clean, so any file in this shape
loads: an evidence id that names no turn of the question's conversation is dropped with
a warning, a question left without evidence is skipped (it could not be scored), and a
turn may be empty (the benchmark does not ingest it). The dataset keeps the counts so
the report can say what was left out.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from polyg_core.errors import InvalidInput
from pydantic import BaseModel, Field, PrivateAttr, ValidationError, model_validator

logger = logging.getLogger(__name__)


class Turn(BaseModel):
    id: str
    speaker: str
    text: str


class Session(BaseModel):
    id: str
    date_time: str
    turns: list[Turn]


class Conversation(BaseModel):
    id: str
    speakers: list[str] = Field(default_factory=list)
    sessions: list[Session]


class Question(BaseModel):
    conversation_id: str
    question: str = Field(min_length=1)
    answer: str = ""
    evidence: list[str]
    category: str = "uncategorized"


class Dataset(BaseModel):
    """A dataset whose questions cite only turns of their conversation (others are dropped)."""

    conversations: list[Conversation]
    questions: list[Question]
    _ignored_evidence: list[tuple[int, str]] = PrivateAttr(default_factory=lambda: [])
    _skipped_questions: int = PrivateAttr(default=0)

    @model_validator(mode="after")
    def _drop_unknown_evidence(self) -> Dataset:
        turns = {c.id: {t.id for s in c.sessions for t in s.turns} for c in self.conversations}
        kept: list[Question] = []
        for i, q in enumerate(self.questions):
            known = turns.get(q.conversation_id, set())
            self._ignored_evidence += [(i, e) for e in q.evidence if e not in known]
            q.evidence = [e for e in q.evidence if e in known]
            if q.evidence:
                kept.append(q)
            else:
                self._skipped_questions += 1
        self.questions = kept
        if self._ignored_evidence:
            logger.warning(
                "ignored %d evidence id(s) that name no turn of their conversation "
                "(question index, id; first 5: %s)",
                len(self._ignored_evidence),
                self._ignored_evidence[:5],
            )
        if self._skipped_questions:
            logger.warning("skipped %d question(s) left without evidence", self._skipped_questions)
        return self

    @property
    def ignored_evidence(self) -> list[tuple[int, str]]:
        """(question index in the file, turn id) of every evidence id that named no turn."""
        return list(self._ignored_evidence)

    @property
    def skipped_questions(self) -> int:
        """Questions of the file left out because none of their evidence names a turn."""
        return self._skipped_questions

    def turn_texts(self, conversation_id: str) -> dict[str, str]:
        """Turn id to `speaker: text` of the non-empty turns, in conversation order.

        Raises:
            InvalidInput: no conversation has this id.
        """
        for c in self.conversations:
            if c.id == conversation_id:
                return {
                    t.id: f"{t.speaker}: {t.text}"
                    for s in c.sessions
                    for t in s.turns
                    if t.text.strip()
                }
        raise InvalidInput(f"no conversation {conversation_id!r} in the dataset")


def load_dataset(path: Path) -> Dataset:
    """Read and validate a dataset file (unknown evidence is dropped, see the module doc).

    Raises:
        InvalidInput: the file is missing, not JSON, or not in the format (says where).
    """
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidInput(f"cannot read the dataset {path}: {exc}") from exc
    try:
        return Dataset.model_validate(json.loads(raw))
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{path} is not JSON: {exc}") from exc
    except ValidationError as exc:
        raise InvalidInput(
            f"{path} is not in the retrieval dataset format "
            f"(conversations/sessions/turns + questions with evidence): {exc}"
        ) from exc
