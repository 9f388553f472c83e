"""The LLM classifier and extractor: output checking, and falling back to rules when the LLM fails.

The LLM here is a protocol-level stand-in with scripted replies (validated against the
schema the agent asks for); the HTTP-level path through litellm is tested with the providers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

import anyio
import pytest
from polyg_core.errors import ProviderError
from polyg_core.providers.llm.base import LLM, LLMResult, Usage
from polyg_core.recall.classifier import LLMClassifier, classify
from polyg_core.remember.extractor import extract
from polyg_shared.intents import CausalDirection, IntentType
from polyg_shared.nodes import MemoryCategory
from pydantic import BaseModel

pytestmark = pytest.mark.anyio

T = TypeVar("T", bound=BaseModel)
REF = datetime(2026, 1, 14, 12, 0, tzinfo=UTC)
KNOWN = [("auth-service", "authservice"), ("AUTH_SECRET", "authsecret"), ("Alice", "alice")]


@dataclass
class ScriptedLLM:
    """Answers each call with the next scripted reply: a dict, or an exception to raise."""

    replies: list[dict[str, Any] | Exception]
    prompts: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])

    @property
    def model_name(self) -> str:
        return "scripted"

    async def complete_json(
        self, *, system: str, user: str, schema: type[T], max_tokens: int
    ) -> LLMResult[T]:
        self.prompts.append((system, user))
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        usage = Usage(prompt_tokens=120, completion_tokens=40, cost_usd=0.0001, calls=1)
        return LLMResult(value=schema.model_validate(reply), usage=usage, model="scripted")


def test_scripted_llm_implements_the_protocol() -> None:
    assert isinstance(ScriptedLLM([]), LLM)


async def test_llm_intent_is_used_and_costed() -> None:
    llm = ScriptedLLM(
        [
            {
                "type": "WHY",
                "entities": ["auth service"],
                "timeframe_phrase": "yesterday",
                "timeframe_start": "2026-01-13T00:00:00Z",
                "timeframe_end": "2026-01-13T23:59:59.999Z",
                "causal_direction": "upstream",
                "depth_hints": {"semantic": 1, "entity": 1, "temporal": 2, "causal": 4},
                "semantic_query": "auth service failure",
                "confidence": 0.92,
                "multi_hop": False,
            }
        ]
    )
    with anyio.fail_after(5):
        outcome = await classify("Why did auth fail yesterday?", KNOWN, REF, llm=llm)
    assert not outcome.degraded and outcome.reason is None
    intent = outcome.intent
    assert intent.type == IntentType.WHY
    assert intent.entities == ["auth-service"]  # mapped to the known spelling
    assert intent.causal_direction == CausalDirection.UPSTREAM
    assert (intent.depth_hints.temporal, intent.depth_hints.causal) == (2, 4)
    assert intent.timeframe is not None
    assert intent.timeframe.start == datetime(2026, 1, 13, tzinfo=UTC)
    assert intent.confidence == 0.92
    assert outcome.usage.calls == 1 and outcome.usage.total_tokens == 160
    system, user = llm.prompts[0]
    assert "WHY" in system and "Examples" in system
    assert "auth-service" in user and "2026-01-14T12:00:00.000Z" in user


async def test_llm_output_is_checked_and_completed() -> None:
    llm = ScriptedLLM(
        [
            {
                "type": "because",  # not a type: the rules' type stands
                "depth_hints": {"semantic": 0, "entity": 9, "causal": -3},  # clamped
                "confidence": 7.5,  # clamped
                "timeframe_phrase": "last Tuesday",  # unresolved: resolved here
                "causal_direction": "sideways",
                "unexpected": "ignored",
            }
        ]
    )
    with anyio.fail_after(5):
        outcome = await classify(
            "Why did the auth service crash last Tuesday?", KNOWN, REF, llm=llm
        )
    intent = outcome.intent
    assert not outcome.degraded
    assert intent.type == IntentType.WHY
    assert intent.causal_direction == CausalDirection.UPSTREAM
    hints = intent.depth_hints
    assert (hints.semantic, hints.entity, hints.temporal, hints.causal) == (1, 5, 1, 1)
    assert intent.confidence == 1.0
    assert intent.entities == ["auth-service"]  # the rules' known-name match is kept
    assert intent.timeframe is not None
    assert intent.timeframe.start == datetime(2026, 1, 13, tzinfo=UTC)
    assert intent.semantic_query == "auth service crash"


async def test_llm_timeframe_in_wrong_order_is_swapped() -> None:
    llm = ScriptedLLM(
        [{"type": "WHEN", "timeframe_start": "2026-01-10T00:00:00Z", "timeframe_end": "2026-01-01"}]
    )
    with anyio.fail_after(5):
        intent, _ = await LLMClassifier(llm).classify("What happened then?", KNOWN, REF)
    assert intent.timeframe is not None
    assert intent.timeframe.start == datetime(2026, 1, 1, tzinfo=UTC)
    assert intent.timeframe.end == datetime(2026, 1, 10, tzinfo=UTC)


async def test_classifier_falls_back_to_rules_when_the_llm_fails() -> None:
    llm = ScriptedLLM([ProviderError("LLM gpt-4o-mini timed out after 3 retries")])
    with anyio.fail_after(5):
        outcome = await classify("Who owns the auth service?", KNOWN, REF, llm=llm)
    assert outcome.degraded
    assert outcome.reason is not None and "timed out after 3 retries" in outcome.reason
    assert outcome.intent.type == IntentType.WHO
    assert outcome.intent.entities == ["auth-service"]
    assert outcome.usage.calls == 0


async def test_classifier_without_llm_says_it_is_degraded() -> None:
    with anyio.fail_after(5):
        outcome = await classify("Why did the auth service fail?", KNOWN, REF)
    assert outcome.degraded
    assert outcome.reason is not None and "LLM_MODEL" in outcome.reason
    assert outcome.intent.type == IntentType.WHY


NOTE = (
    "Deploy v2.3.1 removed AUTH_SECRET from the config. "
    "Because AUTH_SECRET was missing, the auth-service crashed at 14:30."
)


async def test_llm_extraction_is_checked() -> None:
    llm = ScriptedLLM(
        [
            {
                "entities": [{"name": "Auth Service", "entity_type": "Service"}, {"name": "  "}],
                "relations": [
                    {"source": "Alice", "target": "auth service", "relationship_type": "owns"},
                    {"source": "Alice", "relationship_type": "owns"},  # no target: dropped
                ],
                "events": [
                    {"description": "auth-service crashed", "occurred_at": "2026-01-14T14:30:00+02:00",
                     "entities": ["AUTH-SERVICE"]},
                    {"description": "secret removed", "occurred_at": "yesterday"},
                    {"description": "something", "occurred_at": "not a time at all"},
                    {"description": ""},
                ],
                "facts": [
                    {"subject": "Alice", "predicate": "owns", "object": "auth-service",
                     "valid_from": "2026-01-01", "valid_to": "2025-01-01"},
                    {"subject": "Alice", "predicate": "owns"},
                ],
                "causal_links": [
                    {"cause": "AUTH_SECRET missing", "effect": "auth-service crashed",
                     "confidence": 1.7, "entities": ["auth_secret"]},
                    {"cause": "x", "effect": "y", "confidence": -2},
                    {"cause": "a", "effect": "b"},
                    {"cause": "only a cause"},
                ],
                "concepts": [{"name": "secrets"}, {"description": "no name"}],
                "category": "memoir",
            }
        ]
    )  # fmt: skip
    with anyio.fail_after(5):
        outcome = await extract(NOTE, KNOWN, REF, llm=llm)
    assert not outcome.degraded and outcome.usage.calls == 1
    x = outcome.extraction
    assert [(e.name, e.entity_type) for e in x.entities] == [
        ("auth-service", "service"),
        ("Alice", "person"),  # listed because a relation names it; typed as a first name
        ("AUTH_SECRET", "config"),
    ]
    assert [(r.source, r.target) for r in x.relations] == [("Alice", "auth-service")]
    assert [(e.description, e.occurred_at) for e in x.events] == [
        ("auth-service crashed", datetime(2026, 1, 14, 12, 30, tzinfo=UTC)),
        ("secret removed", datetime(2026, 1, 13, tzinfo=UTC)),
        ("something", REF),
    ]
    assert x.events[0].entities == ["auth-service"]
    assert [(f.subject, f.valid_from, f.valid_to) for f in x.facts] == [
        ("Alice", datetime(2026, 1, 1, tzinfo=UTC), None)
    ]
    assert [c.confidence for c in x.causal_links] == [1.0, 0.0, 0.7]
    assert x.causal_links[0].entities == ["AUTH_SECRET"]
    assert [c.name for c in x.concepts] == ["secrets"]
    assert x.category == MemoryCategory.EPISODIC  # unknown category: the rules decide
    _, user = llm.prompts[0]
    assert NOTE in user and "Reference time: 2026-01-14T12:00:00.000Z" in user


async def test_extractor_falls_back_to_rules_when_the_llm_fails() -> None:
    llm = ScriptedLLM([ProviderError("the model's output never validated against the schema")])
    with anyio.fail_after(5):
        outcome = await extract(NOTE, KNOWN, REF, llm=llm)
    assert outcome.degraded
    assert outcome.reason is not None and "never validated" in outcome.reason
    assert {e.name for e in outcome.extraction.entities} >= {"AUTH_SECRET", "auth-service"}
    assert any(c.effect == "auth-service crashed" for c in outcome.extraction.causal_links)


async def test_extractor_without_llm_says_it_is_degraded() -> None:
    with anyio.fail_after(5):
        outcome = await extract(NOTE, KNOWN, REF)
    assert outcome.degraded and outcome.reason is not None
    assert len(outcome.extraction.events) == 2


async def test_extractor_falls_back_to_rules_when_the_llm_answer_has_invalid_values() -> None:
    # The reply passes the draft schema, but a name with a NUL is refused by the graph models.
    llm = ScriptedLLM([{"entities": [{"name": "build\x00server", "entity_type": "service"}]}])
    with anyio.fail_after(5):
        outcome = await extract(NOTE, KNOWN, REF, llm=llm)
    assert outcome.degraded
    assert outcome.reason is not None and "invalid values" in outcome.reason
    assert {e.name for e in outcome.extraction.entities} >= {"AUTH_SECRET", "auth-service"}
