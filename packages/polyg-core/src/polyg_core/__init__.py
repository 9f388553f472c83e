"""polyg-core: multi-graph memory for AI agents on FalkorDB."""

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
    "NodeNotFound",
    "PolygError",
    "ProviderError",
    "QueryTimeout",
    "Settings",
    "StorageError",
    "StorageSettings",
    "StorageUnavailable",
    "load_settings",
    "open_store",
]
