"""FalkorDB storage: the async store, the embedded server, the schema vocabulary."""

from __future__ import annotations

from typing import TYPE_CHECKING

from polyg_core.lazy import lazy_exports
from polyg_core.storage.namespace import validate_namespace

if TYPE_CHECKING:
    from polyg_core.storage.embedded import EmbeddedFalkorDB, default_data_dir
    from polyg_core.storage.store import FalkorStore, QueryResult, open_store

# The store and the embedded server import the Redis client: loaded on first use, so
# `polyg_core.storage.schema` and `.namespace` import nothing heavy.
_LAZY = {
    "EmbeddedFalkorDB": "polyg_core.storage.embedded",
    "default_data_dir": "polyg_core.storage.embedded",
    "FalkorStore": "polyg_core.storage.store",
    "QueryResult": "polyg_core.storage.store",
    "open_store": "polyg_core.storage.store",
}

__getattr__ = lazy_exports(__name__, _LAZY)


__all__ = [
    "EmbeddedFalkorDB",
    "FalkorStore",
    "QueryResult",
    "default_data_dir",
    "open_store",
    "validate_namespace",
]
