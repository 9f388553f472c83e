"""The deployment-failure scenario, and Memories on the rule path and the scripted LLM path."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from polyg_core.config import Settings, StorageSettings
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.storage.store import FalkorStore
from polyg_core.testing.llm_server import ScriptedLLMServer, chain_synthesis

REF = "2026-01-14T12:00:00Z"  # a Wednesday; "last Tuesday" is 2026-01-06... see tests


async def load_deployment(memory: Memory, ns: str) -> None:
    """Seed 000's deployment-failure scenario plus Alice's changing assignment."""
    e = memory.entities
    await e.add(ns, "auth-service", "Service")
    await e.add(ns, "deploy-v2.3.1", "Deployment")
    await e.add(ns, "AUTH_SECRET", "EnvVar")
    await e.add(ns, "Alice", "Person")
    await e.add(ns, "Payment Service", "Service")
    await e.link(ns, "Alice", "auth-service", "owns")
    t = memory.temporal
    await t.add_event(
        ns, "Deployment v2.3.1 started", "2026-01-07T14:00:00Z", entities=["deploy-v2.3.1"]
    )
    await t.add_event(
        ns, "Auth service crashed", "2026-01-07T14:05:00Z", entities=["auth-service", "AUTH_SECRET"]
    )
    await t.add_fact(ns, "Alice", "works_on", "Payment Service", valid_from="2025-06-01T00:00:00Z")
    await t.add_fact(ns, "Alice", "works_on", "Auth Service", valid_from="2025-12-01T00:00:00Z")
    c = memory.causal
    await c.add_link(
        ns, "missing AUTH_SECRET", "auth service crash", 0.95, entities=["auth-service"]
    )
    await c.add_link(ns, "deploy-v2.3.1", "AUTH_SECRET missing", 0.88, entities=["deploy-v2.3.1"])
    await memory.semantic.add_concept(
        ns, "caching", "Redis caching layer in front of the auth-service", entities=["auth-service"]
    )


def scripted_responder(messages: list[dict[str, Any]]) -> str:
    """Answers like a model would, from what the request actually contains."""
    system = str(messages[0]["content"])
    user = str(messages[-1]["content"])
    if system.startswith("You classify"):
        question = user.split("<<<\n", 1)[-1].split("\n>>>", 1)[0]
        q = question.lower()
        if "why" in q:
            kind, direction, ents = "WHY", "upstream", ["auth-service"]
        elif "alice" in q:
            kind, direction, ents = "WHAT", "both", ["Alice"]
        elif "happened" in q or "when" in q:
            kind, direction, ents = "WHEN", "both", []
        else:
            kind, direction, ents = "EXPLORE", "both", []
        return json.dumps(
            {
                "type": kind,
                "entities": ents,
                "timeframe_phrase": None,
                "timeframe_start": None,
                "timeframe_end": None,
                "causal_direction": direction,
                "depth_hints": {"semantic": 1, "entity": 2, "temporal": 2, "causal": 3},
                "semantic_query": question[:120],
                "confidence": 0.9,
                "multi_hop": False,
            }
        )
    if system.startswith("You answer questions"):
        lines = [line for line in user.splitlines() if line.startswith("- ")]
        return json.dumps(chain_synthesis(user, lines, ["What fixed it?"]))
    # extractor
    return json.dumps(
        {
            "entities": [
                {"name": "deploy", "entity_type": "Deployment"},
                {"name": "DATABASE_URL", "entity_type": "EnvVar"},
            ],
            "relations": [],
            "events": [
                {"description": "The deploy failed", "occurred_at": REF, "entities": ["deploy"]}
            ],
            "facts": [],
            "causal_links": [
                {
                    "cause": "missing env var DATABASE_URL",
                    "effect": "deploy failed",
                    "confidence": 0.9,
                    "evidence": "The deploy failed due to missing env var",
                    "entities": ["deploy", "DATABASE_URL"],
                }
            ],
            "concepts": [{"name": "deployment", "description": "shipping a release"}],
            "category": "episodic",
        }
    )


@pytest.fixture
async def llm_server() -> AsyncIterator[ScriptedLLMServer]:
    async with ScriptedLLMServer(responder=scripted_responder) as server:
        yield server


@pytest.fixture
async def llm_memory(
    store: FalkorStore, embedder: Embedder, namespace: str, llm_server: ScriptedLLMServer
) -> Memory:
    llm = llm_server.provider(timeout_s=5, max_retries=1)
    return Memory(store=store, embedder=embedder, llm=llm, settings=Settings(), namespace=namespace)


@pytest.fixture(params=["rules", "llm"])
async def any_memory(
    request: pytest.FixtureRequest, store: FalkorStore, embedder: Embedder, namespace: str
) -> AsyncIterator[Memory]:
    """The same memory on the rule-based path and on the LLM path (scripted loopback model)."""
    if request.param == "rules":
        yield Memory(store=store, embedder=embedder, namespace=namespace)
        return
    async with ScriptedLLMServer(responder=scripted_responder) as server:
        llm = server.provider(timeout_s=5, max_retries=1)
        yield Memory(store=store, embedder=embedder, llm=llm, namespace=namespace)


@pytest.fixture
async def deployed(any_memory: Memory) -> Memory:
    await load_deployment(any_memory, any_memory.namespace)
    return any_memory


@pytest.fixture(scope="module")
async def module_store(
    anyio_backend: str, falkordb_settings: StorageSettings
) -> AsyncIterator[FalkorStore]:
    """A store shared by a module's tests (for data loaded once per module)."""
    store = FalkorStore(falkordb_settings)
    await store.connect()
    yield store
    await store.close()
