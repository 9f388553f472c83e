from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from mcp import Client
from polyg_core.config import Settings, StorageSettings
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
