"""LLM faults: every kind of bad answer ends in bounded retries and the rule-based path,
and `remember` reports success only for content it stored."""

from __future__ import annotations

import json
import time
from typing import Any

import anyio
import pytest
from polyg_core.errors import PolygError
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.providers.llm.litellm import LiteLLMProvider
from polyg_core.storage.store import FalkorStore
from polyg_core.testing.llm_server import Reply, ScriptedLLMServer

pytestmark = pytest.mark.anyio

REF = "2026-01-10T12:00:00Z"
MAX_RETRIES = 2
CONTENT = "The cache of report-service failed because the disk of node-7 was full."

FAULTS = {
    "garbage": Reply.text("<<< certainly! here is some prose, no JSON >>>"),
    "empty": Reply.text(""),
    "malformed_body": Reply(malformed=True),
    "wrong_schema": Reply.json({"entities": "not a list", "category": 42}),
    "slow": Reply.slow(2.0),
    "http429": Reply.error(429, retry_after=0.05),
    "http429_long_retry_after": Reply.error(429, retry_after=3600),
    "http500": Reply.error(500),
}


def provider(server: ScriptedLLMServer) -> LiteLLMProvider:
    return LiteLLMProvider(
        "openai/test-model",
        api_base=server.api_base,
        api_key="test",
        timeout_s=0.4,
        max_retries=MAX_RETRIES,
        backoff_base_s=0.01,
        backoff_max_s=0.2,
    )


async def stored_contents(store: FalkorStore, ns: str) -> list[str]:
    res = await store.query(ns, "MATCH (m:S_Memory) RETURN m.content", read_only=True)
    return [str(c) for (c,) in res.rows]


@pytest.mark.parametrize("fault", list(FAULTS))
async def test_llm_fault_ends_in_bounded_retries_and_the_rule_path(
    store: FalkorStore, embedder: Embedder, namespace: str, fault: str
) -> None:
    reply = FAULTS[fault]
    async with ScriptedLLMServer(responder=lambda _m: reply) as server:
        mem = Memory(store=store, embedder=embedder, llm=provider(server), namespace=namespace)
        started = time.monotonic()
        with anyio.fail_after(30):
            result = await mem.remember(CONTENT, reference_time=REF)
        elapsed = time.monotonic() - started
        calls = len(server.chat_requests)
    # One extraction: transport retries, plus at most one retry showing a validation error.
    assert 1 <= calls <= (MAX_RETRIES + 1) * 2, calls
    assert elapsed < 15, f"{fault}: {elapsed:.1f} s (Retry-After must be capped)"
    assert result.created and result.degraded
    assert any(r.startswith("extractor:") for r in result.degraded_reasons)
    assert result.causal_links, "the rule-based extractor should have found the causal link"
    assert await stored_contents(store, namespace) == [CONTENT]


@pytest.mark.parametrize("fault", ["garbage", "http500", "slow"])
async def test_recall_degrades_on_llm_faults_and_still_answers(
    store: FalkorStore, embedder: Embedder, namespace: str, fault: str
) -> None:
    reply = FAULTS[fault]
    async with ScriptedLLMServer(responder=lambda _m: reply) as server:
        mem = Memory(store=store, embedder=embedder, llm=provider(server), namespace=namespace)
        await mem.causal.add_link(namespace, "disk of node-7 full", "report cache failed", 0.9)
        with anyio.fail_after(30):
            result = await mem.recall("Why did the report cache fail?", reference_time=REF)
    assert result.degraded
    assert {r.split(":")[0] for r in result.degraded_reasons} >= {"classifier", "synthesizer"}
    assert "disk of node-7 full" in result.answer


HOSTILE_EXTRACTION: dict[str, Any] = {
    "entities": [
        {"name": "x" * 5000, "entity_type": "Thing"},
        {"name": "nul\x00name", "entity_type": "Thing"},
        {"name": "'}) MATCH (n) DETACH DELETE n //", "entity_type": "Service"},
        {"name": "", "entity_type": "Thing"},
    ],
    "relations": [{"source": "", "target": "nowhere", "relationship_type": "x" * 300}],
    "events": [{"description": "it broke", "occurred_at": "year 99999", "entities": []}],
    "facts": [],
    "causal_links": [
        {"cause": "a", "effect": "b", "confidence": float("nan"), "evidence": "", "entities": []}
    ],
    "concepts": [{"name": "\u202e\u200b", "description": "\ud800"}],
    "category": "episodic",
}


async def test_remember_with_a_hostile_extraction_stores_the_content_or_reports_failure(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    text = json.dumps(HOSTILE_EXTRACTION).replace("NaN", "1e999")
    async with ScriptedLLMServer(responder=lambda _m: Reply.text(text)) as server:
        mem = Memory(store=store, embedder=embedder, llm=provider(server), namespace=namespace)
        with anyio.fail_after(30):
            try:
                result = await mem.remember(CONTENT, reference_time=REF)
            except PolygError:
                result = None
    stored = await stored_contents(store, namespace)
    if result is None:
        assert stored == [], "remember failed but left its memory node behind"
    else:
        assert result.created
        assert stored == [CONTENT]
    # The injection-looking name deleted nothing and, if stored, is stored literally.
    names = await store.query(namespace, "MATCH (e:E_Entity) RETURN e.name", read_only=True)
    assert all("\x00" not in str(n) or n == "nul\x00name" for (n,) in names.rows)
