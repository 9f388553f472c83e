from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import pytest
from mcp import Client
from polyg_core.config import Settings, StorageSettings
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.storage.store import FalkorStore
from polyg_core.testing.fixtures import *  # noqa: F403  # pyright: ignore[reportWildcardImportFromLibrary]
from polyg_server.app import create_server
from polyg_server.context import ServerContext
from polyg_server.registry import PolygServer


@pytest.fixture
def server_settings(falkordb_settings: StorageSettings, namespace: str) -> Settings:
    """Settings whose default graph is the test's fresh namespace."""
    return Settings(storage=falkordb_settings.model_copy(update={"graph": namespace}))


@pytest.fixture
def server_ctx(store: FalkorStore, server_settings: Settings) -> ServerContext:
    return ServerContext(store=store, settings=server_settings)


@pytest.fixture
def mcp_server(server_ctx: ServerContext) -> PolygServer:
    return create_server(server_ctx)


@pytest.fixture
async def client(mcp_server: PolygServer) -> AsyncIterator[Client]:
    """An in-memory MCP client session connected to the server."""
    async with Client(mcp_server) as c:
        yield c


@dataclass
class CachedEmbedder:
    """The real embedder with a per-session cache: tests embed the same texts many times."""

    inner: Embedder
    cache: dict[str, npt.NDArray[np.float32]] = field(default_factory=lambda: {})

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        missing = list(dict.fromkeys(t for t in texts if t not in self.cache))
        if missing:
            vectors = await self.inner.embed(missing)
            self.cache.update(zip(missing, vectors, strict=True))
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self.cache[t] for t in texts])


@pytest.fixture(scope="session")
def cached_embedder(embedder: Embedder) -> CachedEmbedder:
    return CachedEmbedder(embedder)


@pytest.fixture
def memory_ctx(
    store: FalkorStore, server_settings: Settings, cached_embedder: CachedEmbedder
) -> ServerContext:
    """A context with the real local embedder, so the memory and MAGMA tools work."""
    return ServerContext(store=store, settings=server_settings, embedder=cached_embedder)


@pytest.fixture
async def memory_client(memory_ctx: ServerContext) -> AsyncIterator[Client]:
    """An in-memory MCP client session on a server with memory."""
    async with Client(create_server(memory_ctx)) as c:
        yield c
