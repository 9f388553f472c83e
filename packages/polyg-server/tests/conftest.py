from __future__ import annotations

from collections.abc import AsyncIterator

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
    """Settings whose default graph is the test's fresh namespace, with every tool and its
    output schema offered (test_profiles.py checks the defaults)."""
    return Settings(
        storage=falkordb_settings.model_copy(update={"graph": namespace}),
        tools="all",
        output_schemas=True,
    )


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


@pytest.fixture(scope="session")
def cached_embedder(embedder: Embedder) -> Embedder:
    # The local embedder caches vectors itself, so tests embed each text once per session.
    return embedder


@pytest.fixture
def memory_ctx(
    store: FalkorStore, server_settings: Settings, cached_embedder: Embedder
) -> ServerContext:
    """A context with the real local embedder, so the memory and MAGMA tools work."""
    return ServerContext(store=store, settings=server_settings, embedder=cached_embedder)


@pytest.fixture
async def memory_client(memory_ctx: ServerContext) -> AsyncIterator[Client]:
    """An in-memory MCP client session on a server with memory."""
    async with Client(create_server(memory_ctx)) as c:
        yield c
