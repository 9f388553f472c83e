"""polyg-core: multi-graph memory for AI agents on FalkorDB.

from polyg_core import Memory

async with await Memory.open() as memory:
    await memory.remember("Deploy v2.3.1 removed AUTH_SECRET, so the auth-service crashed.")
    print((await memory.recall("Why did the auth service fail?")).answer)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from polyg_shared.retrieval import RecallResult, RememberResult

from polyg_core.config import Settings, StorageSettings, settings_from_env
from polyg_core.errors import (
    AmbiguousName,
    Candidate,
    EmbeddedServerError,
    EmbeddingMismatch,
    InvalidInput,
    InvalidNamespace,
    NodeNotFound,
    PolygError,
    ProviderError,
    QueryTimeout,
    StorageError,
    StorageUnavailable,
)
from polyg_core.lazy import lazy_exports

if TYPE_CHECKING:
    from polyg_core.memory import Memory
    from polyg_core.storage import EmbeddedFalkorDB, FalkorStore, open_store

# The memory facade and the store pull in the graphs, numpy and the Redis client (a
# few hundred ms): loaded on first use, so importing `polyg_core.errors` or
# `polyg_core.config` (the MCP server listing its tools) stays cheap.
_LAZY = {
    "Memory": "polyg_core.memory",
    "EmbeddedFalkorDB": "polyg_core.storage",
    "FalkorStore": "polyg_core.storage",
    "open_store": "polyg_core.storage",
}

__getattr__ = lazy_exports(__name__, _LAZY)


__all__ = [
    "AmbiguousName",
    "Candidate",
    "EmbeddedFalkorDB",
    "EmbeddedServerError",
    "EmbeddingMismatch",
    "FalkorStore",
    "InvalidInput",
    "InvalidNamespace",
    "Memory",
    "NodeNotFound",
    "PolygError",
    "ProviderError",
    "QueryTimeout",
    "RecallResult",
    "RememberResult",
    "Settings",
    "StorageError",
    "StorageSettings",
    "StorageUnavailable",
    "open_store",
    "settings_from_env",
]
