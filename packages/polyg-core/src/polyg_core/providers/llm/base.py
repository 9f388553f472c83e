"""The LLM provider protocol: structured (JSON-schema) output with usage accounting."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar, runtime_checkable

from polyg_shared.retrieval import UsageReport
from pydantic import BaseModel

T = TypeVar("T", bound=BaseModel)


@dataclass
class Usage:
    """Tokens and cost of one or more LLM calls."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, other: Usage) -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cost_usd += other.cost_usd
        self.calls += other.calls


@dataclass
class LLMResult(Generic[T]):
    """A validated structured reply and what it cost."""

    value: T
    usage: Usage = field(default_factory=Usage)
    model: str = ""


@runtime_checkable
class LLM(Protocol):
    """A chat model that answers with JSON validated against a pydantic model."""

    @property
    def model_name(self) -> str: ...

    async def complete_json(
        self, *, system: str, user: str, schema: type[T], max_tokens: int
    ) -> LLMResult[T]:
        """Ask for a reply matching `schema`.

        Raises:
            ProviderError: after retries (timeouts, HTTP errors, output that never validates).
        """
        ...


def usage_report(*usages: Usage) -> UsageReport:
    """The sum of several LLM calls' usage, as reported to callers."""
    total = Usage()
    for u in usages:
        total.add(u)
    return UsageReport(
        prompt_tokens=total.prompt_tokens,
        completion_tokens=total.completion_tokens,
        cost_usd=round(total.cost_usd, 6),
        llm_calls=total.calls,
    )
