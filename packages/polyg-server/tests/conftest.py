from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from mcp import Client
from polyg_core.config import Settings, StorageSettings
from polyg_core.jobs.queue import JobQueue
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.storage.store import FalkorStore
from polyg_core.testing.fixtures import *  # noqa: F403  # pyright: ignore[reportWildcardImportFromLibrary]
from polyg_server.app import create_server
from polyg_server.context import ServerContext
from polyg_server.http import create_http_app
from polyg_server.registry import PolygServer
from starlette.types import ASGIApp


@pytest.fixture
def server_settings(falkordb_settings: StorageSettings, namespace: str) -> Settings:
    """Settings whose default graph is the test's fresh namespace, with every tool and its
    output schema offered (test_profiles.py checks the defaults)."""
    return Settings(
        storage=falkordb_settings.model_copy(update={"graph": namespace}),
        tools="all",
        output_schemas=True,
    )


@pytest.fixture(scope="session")
def tool_schema_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One file that keeps the tools' JSON schemas for the session's in-process servers.

    A server generates its tools' schemas once per start (about a second on a busy
    machine); the cache keeps what `polyg-mcp` keeps between starts, keyed by the source
    of the loaded modules, so every server still advertises the schemas of the code
    under test (test_schema_cache.py checks the cache itself).
    """
    return tmp_path_factory.mktemp("tool-schemas") / "tool-schemas.json"


@pytest.fixture
def server_ctx(store: FalkorStore, server_settings: Settings) -> ServerContext:
    return ServerContext(store=store, settings=server_settings)


@pytest.fixture
def mcp_server(server_ctx: ServerContext, tool_schema_file: Path) -> PolygServer:
    return create_server(server_ctx, schema_cache=tool_schema_file)


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
async def memory_client(memory_ctx: ServerContext, tool_schema_file: Path) -> AsyncIterator[Client]:
    """An in-memory MCP client session on a server with memory."""
    async with Client(create_server(memory_ctx, schema_cache=tool_schema_file)) as c:
        yield c


@pytest.fixture
async def queue_name(store: FalkorStore) -> AsyncIterator[str]:
    """A job queue of the test's own, deleted afterwards."""
    name = f"tq_{uuid.uuid4().hex[:10]}"
    yield name
    queue = await JobQueue.open(store, name=name)
    keys = [k async for k in queue.redis.scan_iter(match=f"saq:*{name}*")]
    if keys:
        await queue.redis.delete(*keys)
    await queue.close()


@pytest.fixture
def make_app(store: FalkorStore, cached_embedder: Embedder) -> Callable[[Settings], ASGIApp]:
    """The HTTP app of a server with the given settings, on the test's store."""

    def make(settings: Settings) -> ASGIApp:
        ctx = ServerContext(store=store, settings=settings, embedder=cached_embedder)
        return create_http_app(create_server(ctx), ctx)

    return make
