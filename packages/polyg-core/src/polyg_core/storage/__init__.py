"""FalkorDB storage: the async store, the embedded server, the schema vocabulary."""

from polyg_core.storage.embedded import EmbeddedFalkorDB, default_data_dir
from polyg_core.storage.namespace import validate_namespace
from polyg_core.storage.store import FalkorStore, QueryResult, open_store

__all__ = [
    "EmbeddedFalkorDB",
    "FalkorStore",
    "QueryResult",
    "default_data_dir",
    "open_store",
    "validate_namespace",
]
