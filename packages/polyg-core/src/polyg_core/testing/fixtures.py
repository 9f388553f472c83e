"""pytest fixtures: one embedded FalkorDB per test session, a fresh namespace per test."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from polyg_core.config import StorageSettings
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.storage.embedded import EmbeddedFalkorDB
from polyg_core.storage.store import FalkorStore
from polyg_core.testing.restart import RestartableFalkorDB

__all__ = [
    "anyio_backend",
    "embedder",
    "falkordb_server",
    "falkordb_settings",
    "namespace",
    "other_store",
    "restartable_falkordb",
    "store",
]


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def falkordb_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedFalkorDB]:
    """The embedded FalkorDB for the whole test session, in its own data dir."""
    server = EmbeddedFalkorDB(Path(tmp_path_factory.mktemp("polyg-data")))
    server.ensure_running()
    yield server
    server.stop(force=True)  # the session's server, whatever a test left registered


@pytest.fixture(scope="session")
def falkordb_settings(falkordb_server: EmbeddedFalkorDB) -> StorageSettings:
    """Settings that point at the session's embedded server (no external host). A store
    that starts a server of its own from a copy of them (another data dir) stops it with
    its last user (no linger): a test leaves no server behind."""
    return StorageSettings(
        data_dir=falkordb_server.data_dir,
        query_timeout_ms=30_000,
        max_retries=3,
        embedded_linger_s=0,
    )


@pytest.fixture
def restartable_falkordb(tmp_path: Path) -> Iterator[RestartableFalkorDB]:
    """A started embedded FalkorDB of this test alone, which it may stop, kill and restart."""
    server = RestartableFalkorDB(tmp_path / "restartable")
    server.start()
    yield server
    server.stop()


@pytest.fixture
async def store(falkordb_settings: StorageSettings) -> AsyncIterator[FalkorStore]:
    """A connected store on the session server."""
    s = FalkorStore(falkordb_settings)
    await s.connect()
    yield s
    await s.close()


@pytest.fixture
async def other_store(falkordb_settings: StorageSettings) -> AsyncIterator[FalkorStore]:
    """A second connection of its own to the session server: another process writing to
    the same data."""
    s = FalkorStore(falkordb_settings)
    await s.connect()
    yield s
    await s.close()


@pytest.fixture
async def namespace(store: FalkorStore) -> AsyncIterator[str]:
    """A fresh namespace name, deleted after the test."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    yield name
    with contextlib.suppress(Exception):  # the test may have stopped the server on purpose
        await store.delete_graph(name)


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The real local MiniLM embedder (loaded once per session)."""
    from polyg_core.providers.embeddings.local import MiniLMEmbedder

    return MiniLMEmbedder()
