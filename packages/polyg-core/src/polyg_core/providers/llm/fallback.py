"""One rule for every LLM step that has a rule-based stand-in: ask the model when there
is one, else (or when it fails) let the rules answer and say so (`degraded`, `reason`)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from polyg_core.errors import ProviderError
from polyg_core.providers.llm.base import LLM, Usage

logger = logging.getLogger(__name__)

V = TypeVar("V")


@dataclass(frozen=True)
class StepWork:
    """What an LLM step does, in the words its degraded reasons use."""

    verb: str
    """What the step does (`classify`): "... to classify with one"."""
    noun: str
    """What it makes (`classification`): "LLM classification failed"."""


@dataclass(frozen=True)
class Answered(Generic[V]):
    """What the model (or, degraded, the rules) answered, and what the model cost."""

    value: V
    degraded: bool = False
    reason: str | None = None
    usage: Usage = field(default_factory=Usage)


async def ask_or_rules(
    work: StepWork,
    llm: LLM | None,
    ask: Callable[[LLM], Awaitable[tuple[V, Usage]]],
    rules: Callable[[], V],
    *,
    unusable: Callable[[Exception], str | None] | None = None,
) -> Answered[V]:
    """The model's answer, or the rules' one marked degraded with the reason.

    Args:
        work: what the step does, for the reasons and the log.
        llm: the model to ask; None lets the rules answer.
        ask: asks the model; raises `ProviderError` when the model fails.
        rules: the rule-based answer.
        unusable: for an exception other than `ProviderError` that `ask` may raise
            (an answer the model gave but the step cannot use), the reason the rules
            answered; None (or a None reason) lets the exception through.
    """
    if llm is None:
        return Answered(
            rules(),
            degraded=True,
            reason=(
                "no LLM configured; set LLM_MODEL, or use an MCP client that supports "
                f"sampling, to {work.verb} with one"
            ),
        )
    try:
        value, usage = await ask(llm)
    except ProviderError as exc:
        logger.warning("LLM %s failed, using rules: %s", work.noun, exc)
        return Answered(
            rules(), degraded=True, reason=f"LLM {work.noun} failed ({exc}); used rules"
        )
    except Exception as exc:
        reason = unusable(exc) if unusable is not None else None
        if reason is None:
            raise
        logger.warning("LLM %s unusable, using rules: %s", work.noun, exc)
        return Answered(rules(), degraded=True, reason=reason)
    return Answered(value, usage=usage)
