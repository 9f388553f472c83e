"""polyg-core: multi-graph memory for AI agents on FalkorDB.

from polyg_core import Memory

async with await Memory.open() as memory:
    await memory.remember("Deploy v2.3.1 removed AUTH_SECRET, so the auth-service crashed.")
    print((await memory.recall("Why did the auth service fail?")).answer)
"""

from polyg_shared.retrieval import RecallResult, RememberResult

from polyg_core.config import Settings, StorageSettings, load_settings
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
from polyg_core.memory import Memory
from polyg_core.storage import EmbeddedFalkorDB, FalkorStore, open_store

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
    "load_settings",
    "open_store",
]
