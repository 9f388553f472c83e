"""Filters are filters: with a category / tags / project / who filter, an answer rests only
on what the matching memories hold.

Memories carry the filter's fields; the nodes extracted from them (facts, events, causal
nodes, concepts, entities) do not, and an entity is shared by every project that names
it. So with a filter set, the merged subgraph keeps:

* the memories that pass the filter;
* the concepts those memories are about, and the entities those concepts represent;
* facts, events and causal nodes whose words are found in one of those memories (what
  was extracted from them), and nothing else.

When no memory passes, nothing is left, and the answer says so (`no_match_answer`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from polyg_shared.retrieval import ContextNode, MergedSubgraph

from polyg_core.recall.catalogue import CatalogueEntry, NamespaceCatalogue
from polyg_core.recall.filters import MemoryFilter
from polyg_core.storage.schema import CAUSAL, CONCEPT, ENTITY, EVENT, FACT, MEMORY
from polyg_core.storage.store import FalkorStore

_WORD = re.compile(r"[a-z0-9]+")
DERIVED_SHARE = 0.7
"""The share of a fact's, event's or causal node's words one matching memory must hold."""
NO_MATCH_CONFIDENCE = 0.05


def passing(catalogue: NamespaceCatalogue, memory_filter: MemoryFilter) -> list[CatalogueEntry]:
    """The namespace's memories that pass the filter."""
    return [e for e in catalogue.entries if memory_filter.matches_entry(e.category, e.tags)]


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _derived(node: ContextNode, memories: Sequence[set[str]]) -> bool:
    want = _words(node.text)
    if not want:
        return False
    return any(len(want & have) >= DERIVED_SHARE * len(want) for have in memories)


async def _represented(store: FalkorStore, namespace: str, concepts: Iterable[str]) -> set[str]:
    ids = sorted(set(concepts))
    if not ids:
        return set()
    res = await store.query(
        namespace,
        f"MATCH (c:{CONCEPT}) WHERE c.uuid IN $ids WITH c "
        f"MATCH (c)-[:X_REPRESENTS]->(e:{ENTITY}) RETURN DISTINCT e.uuid",
        {"ids": ids},
        read_only=True,
    )
    return {str(r[0]) for r in res.rows}


async def scope_to_filter(
    store: FalkorStore,
    namespace: str,
    merged: MergedSubgraph,
    catalogue: NamespaceCatalogue,
    memory_filter: MemoryFilter,
) -> MergedSubgraph:
    """The merged subgraph restricted to what the matching memories hold (module doc)."""
    if not memory_filter.active:
        return merged
    scope = await _scope(store, namespace, _matching_memories(merged, catalogue, memory_filter))
    keep = {n.uuid for n in merged.nodes if scope.holds(n)}
    return merged.model_copy(
        update={
            "nodes": [n for n in merged.nodes if n.uuid in keep],
            "edges": [e for e in merged.edges if e.source in keep and e.target in keep],
        }
    )


def _matching_memories(
    merged: MergedSubgraph, catalogue: NamespaceCatalogue, memory_filter: MemoryFilter
) -> list[CatalogueEntry]:
    """The merged subgraph's memories that pass the filter."""
    out: list[CatalogueEntry] = []
    for n in merged.nodes:
        entry = catalogue.get(n.uuid) if n.label == MEMORY else None
        if entry is not None and memory_filter.matches_entry(entry.category, entry.tags):
            out.append(entry)
    return out


@dataclass(frozen=True)
class _Scope:
    """What the matching memories hold: themselves, their concepts, the entities those
    represent, and their words (for what was extracted from them)."""

    memories: frozenset[str]
    concepts: frozenset[str]
    entities: frozenset[str]
    texts: list[set[str]]

    def holds(self, node: ContextNode) -> bool:
        if node.label == MEMORY:
            return node.uuid in self.memories
        if node.label == CONCEPT:
            return node.uuid in self.concepts
        if node.label == ENTITY:
            return node.uuid in self.entities
        if node.label in (FACT, EVENT, CAUSAL):
            return _derived(node, self.texts)
        return False


async def _scope(store: FalkorStore, namespace: str, entries: Sequence[CatalogueEntry]) -> _Scope:
    concepts = {c for e in entries for c in e.concepts}
    return _Scope(
        memories=frozenset(e.uuid for e in entries),
        concepts=frozenset(concepts),
        entities=frozenset(await _represented(store, namespace, concepts)),
        texts=[_words(e.content) for e in entries],
    )


def no_match_answer(memory_filter: MemoryFilter) -> str:
    """What recall answers when no memory passes the filter."""
    said = ", ".join(f"{k}: {v}" for k, v in memory_filter.describe().items())
    return (
        f"Not known: no memory matches the filter ({said}). Recall without the filter, "
        "or check its spelling."
    )
