"""The conversational memory dataset format read by the retrieval benchmark.

{"conversations": [{"id", "speakers": [..], "sessions": [{"id", "date_time",
  "turns": [{"id", "speaker", "text"}]}]}],
 "questions": [{"conversation_id", "question", "answer", "evidence": [turn ids],
  "category"}]}
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError, model_validator

from polyg_core.errors import InvalidInput


class Turn(BaseModel):
    id: str
    speaker: str
    text: str = Field(min_length=1)


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
    """A dataset; evidence must name turns of the question's conversation."""

    conversations: list[Conversation]
    questions: list[Question]

    @model_validator(mode="after")
    def _check_references(self) -> Dataset:
        turns = {c.id: {t.id for s in c.sessions for t in s.turns} for c in self.conversations}
        for i, q in enumerate(self.questions):
            if q.conversation_id not in turns:
                raise ValueError(
                    f"question {i} names conversation {q.conversation_id!r}, "
                    f"which is not in the file; known: {sorted(turns)[:5]}"
                )
            missing = [e for e in q.evidence if e not in turns[q.conversation_id]]
            if missing:
                raise ValueError(
                    f"question {i} cites turns {missing} that conversation "
                    f"{q.conversation_id!r} does not have"
                )
        return self

    def turn_texts(self, conversation_id: str) -> dict[str, str]:
        """Turn id to `speaker: text`, in conversation order."""
        for c in self.conversations:
            if c.id == conversation_id:
                return {t.id: f"{t.speaker}: {t.text}" for s in c.sessions for t in s.turns}
        raise InvalidInput(f"no conversation {conversation_id!r} in the dataset")


def load_dataset(path: Path) -> Dataset:
    """Read and validate a dataset file.

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
