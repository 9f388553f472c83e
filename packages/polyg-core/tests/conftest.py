"""Fixtures every polyg-core test may use: the embedded FalkorDB ones, a plain `memory`, a
Memory with a scripted loopback LLM, and the shared invented service notes."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import datetime
from typing import Any

import pytest
from polyg_core.config import Settings
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.storage.store import FalkorStore
from polyg_core.testing.fixtures import *  # noqa: F403  # pyright: ignore[reportWildcardImportFromLibrary]
from polyg_core.testing.llm_server import ScriptedLLMServer

Responder = Callable[[list[dict[str, Any]]], str]


@pytest.fixture
async def memory(store: FalkorStore, embedder: Embedder, namespace: str) -> Memory:
    return Memory(store=store, embedder=embedder, namespace=namespace)


async def add_said(memory: Memory, text: str, created_at: datetime, **kw: Any) -> str:
    """Store one memory said at `created_at` (keywords go to `add_memory`); its uuid."""
    mem, _ = await memory.semantic.add_memory(memory.namespace, text, created_at=created_at, **kw)
    return mem.uuid


def extraction_reply(**parts: Any) -> str:
    """An extractor's JSON reply: the given parts, every other part empty, category episodic."""
    empty: dict[str, Any] = {
        "entities": [],
        "relations": [],
        "events": [],
        "facts": [],
        "causal_links": [],
        "concepts": [],
        "category": "episodic",
    }
    return json.dumps(empty | parts)


ScriptedMemory = Callable[[Responder], AbstractAsyncContextManager[Memory]]
"""Opens a Memory on the test's store whose LLM is a loopback model answering by a responder."""


@pytest.fixture
def scripted_memory(store: FalkorStore, embedder: Embedder, namespace: str) -> ScriptedMemory:
    @asynccontextmanager
    async def open_memory(responder: Responder) -> AsyncGenerator[Memory]:
        async with ScriptedLLMServer(responder=responder) as server:
            llm = server.provider(timeout_s=5, max_retries=3)
            yield Memory(
                store=store, embedder=embedder, llm=llm, settings=Settings(), namespace=namespace
            )

    return open_memory


LEDGER_NOTES = [
    ("Wiremu Tane moved the invoicing queue to the Rotorua cluster.", "2026-02-02"),
    (
        "The Rotorua cluster ran out of disk, which caused the invoicing queue to stall.",
        "2026-02-09",
    ),
    ("Ines Albarran took over the ledger service from Wiremu Tane.", "2026-03-01"),
    ("Ines Albarran fixed the stalled invoicing queue by adding disk.", "2026-03-04"),
    ("Kofi Mensah met Ines Albarran at the Hamilton office.", "2026-03-04"),
    ("Kofi Mensah likes sea kayaking and sourdough baking.", "2026-03-10"),
    ("The ledger service now runs on the Hamilton cluster.", "2026-04-01"),
]
"""Invented notes about a team's services, remembered on their days by `ledger_memory`."""


@pytest.fixture
async def ledger_memory(store: FalkorStore, embedder: Embedder, namespace: str) -> Memory:
    """A Memory holding LEDGER_NOTES and the ledger service's two dated `runs_on` facts."""
    memory = Memory(store=store, embedder=embedder, namespace=namespace)
    for text, day in LEDGER_NOTES:
        await memory.remember(text, reference_time=day)
    await memory.temporal.add_fact(
        namespace, "ledger service", "runs_on", "Rotorua cluster", valid_from="2026-01-01"
    )
    await memory.temporal.add_fact(
        namespace, "ledger service", "runs_on", "Hamilton cluster", valid_from="2026-04-01"
    )
    return memory
