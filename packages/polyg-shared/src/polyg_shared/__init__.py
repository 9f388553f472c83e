"""polyg's shared data models (pydantic only)."""

from polyg_shared.edges import (
    CausalLink,
    CausalPath,
    CrossLink,
    CrossLinkType,
    EntityRelation,
    Similarity,
)
from polyg_shared.nodes import (
    CausalNode,
    CausalNodeType,
    Concept,
    Entity,
    Event,
    Fact,
    GraphKind,
    Memory,
    MemoryCategory,
    NodeRef,
)
from polyg_shared.timeutil import from_epoch_ms, iso, parse_timestamp, to_epoch_ms, utc_now
from polyg_shared.types import Confidence, Content, Name, Properties, Text, Timestamp

__all__ = [
    "CausalLink",
    "CausalNode",
    "CausalNodeType",
    "CausalPath",
    "Concept",
    "Confidence",
    "Content",
    "CrossLink",
    "CrossLinkType",
    "Entity",
    "EntityRelation",
    "Event",
    "Fact",
    "GraphKind",
    "Memory",
    "MemoryCategory",
    "Name",
    "NodeRef",
    "Properties",
    "Similarity",
    "Text",
    "Timestamp",
    "from_epoch_ms",
    "iso",
    "parse_timestamp",
    "to_epoch_ms",
    "utc_now",
]
