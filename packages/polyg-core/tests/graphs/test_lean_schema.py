"""What a namespace indexes: full-text indexes only where word search reads them.

Names, causal descriptions, concepts and memories are found by their vectors, their
normalised keys and recall's lexical catalogue; events and facts, which carry no
vector, by their words. A namespace written before kept full-text indexes on the other
labels too: it still reads and writes the same.
"""

from __future__ import annotations

import uuid

import pytest
from polyg_core.graphs.entity import EntityGraph
from polyg_core.graphs.temporal import TemporalGraph
from polyg_core.storage.fulltext import word_search
from polyg_core.storage.schema import FULLTEXT_INDEXES
from polyg_core.storage.store import FalkorStore

pytestmark = pytest.mark.anyio

OLD_FULLTEXT = {
    "E_Entity": ("name",),
    "C_Node": ("description",),
    "S_Concept": ("name", "description"),
    "S_Memory": ("content",),
    "G_Node": ("name",),
}
"""The full-text indexes namespaces were given before, besides events' and facts'."""


def fresh() -> str:
    return f"lean-{uuid.uuid4().hex[:8]}"


async def fulltext_labels(store: FalkorStore, ns: str) -> set[str]:
    res = await store.query(ns, "CALL db.indexes() YIELD label, types RETURN label, types")
    return {str(label) for label, types in res.rows if "FULLTEXT" in str(types)}


async def write_and_read(entities: EntityGraph, temporal: TemporalGraph, ns: str) -> None:
    """Writes and reads a user makes: entities by name, events found by their words."""
    await entities.add(ns, "Quill Press", "Company", {"city": "Tarn"})
    await temporal.add_event(
        ns,
        "Quill Press shipped the spring catalogue",
        "2026-03-02T09:00:00Z",
        entities=["Quill Press"],
    )
    got = await entities.get(ns, "quill press")
    assert got.name == "Quill Press" and got.properties == {"city": "Tarn"}
    hits = await word_search(entities.store, ns, "T_Event", "when did the catalogue ship?", 5)
    assert [h.properties["description"] for h in hits] == [
        "Quill Press shipped the spring catalogue"
    ]


async def test_a_new_namespace_has_full_text_indexes_only_on_events_and_facts(
    store: FalkorStore, entities: EntityGraph, temporal: TemporalGraph
) -> None:
    ns = fresh()
    await write_and_read(entities, temporal, ns)
    assert await fulltext_labels(store, ns) == {"T_Event", "T_Fact"} == set(FULLTEXT_INDEXES)


async def test_a_namespace_with_the_older_full_text_indexes_reads_and_writes_the_same(
    store: FalkorStore, entities: EntityGraph, temporal: TemporalGraph
) -> None:
    ns = fresh()
    for label, props in OLD_FULLTEXT.items():
        quoted = ", ".join(f"'{p}'" for p in props)
        await store.query(ns, f"CALL db.idx.fulltext.createNodeIndex('{label}', {quoted})")
    await write_and_read(entities, temporal, ns)
    # Nothing was dropped or added: the older indexes stay, the schema adds its own.
    assert await fulltext_labels(store, ns) == set(OLD_FULLTEXT) | set(FULLTEXT_INDEXES)
