from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import pytest
from polyg_core.config import Settings
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.storage.store import FalkorStore
from polyg_core.testing.fixtures import *  # noqa: F403  # pyright: ignore[reportWildcardImportFromLibrary]
from polyg_core.testing.llm_server import ScriptedLLMServer

Responder = Callable[[list[dict[str, Any]]], str]
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
