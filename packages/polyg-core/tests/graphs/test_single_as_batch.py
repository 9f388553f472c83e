"""A single write is a batch of one: the per-record graph methods and the batch writers
store the same nodes and links, with the same property names."""

from __future__ import annotations

import anyio
import pytest
from polyg_core.graphs.causal import CausalGraph
from polyg_core.graphs.causal_batch import (
    CausalLinkItem,
    CausalNodeItem,
    SolutionItem,
    add_causal_links,
    add_causal_nodes,
    add_solutions,
)
from polyg_core.graphs.entity import EntityGraph
from polyg_core.graphs.semantic import SemanticGraph
from polyg_core.graphs.semantic_batch import ConceptItem, SemanticBatch
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.resolve import NameResolver
from polyg_core.storage.store import FalkorStore

pytestmark = pytest.mark.anyio


async def _shape(store: FalkorStore, ns: str) -> dict[str, list[object]]:
    """Per label and relationship type: the sorted property names of each node or link,
    and how many there are."""
    shape: dict[str, list[object]] = {}
    nodes = await store.query(ns, "MATCH (n) UNWIND labels(n) AS l RETURN l, keys(n)")
    rels = await store.query(ns, "MATCH ()-[r]->() RETURN type(r), keys(r)")
    for name, keys in [*nodes.rows, *rels.rows]:
        shape.setdefault(str(name), []).append(sorted(str(k) for k in keys))
    return {k: sorted(v, key=str) for k, v in shape.items()}


async def test_causal_and_concept_writes_store_the_same_one_by_one_and_in_a_batch(
    store: FalkorStore, embedder: Embedder, resolver: NameResolver, namespace: str
) -> None:
    batch_ns = f"{namespace}-batch"
    entities = EntityGraph(store, embedder, resolver)
    try:
        with anyio.fail_after(120):
            for ns in (namespace, batch_ns):
                graph = CausalGraph(store, embedder, resolver)
                semantic = SemanticGraph(store, embedder, resolver, entities=entities)
                if ns == namespace:
                    await graph.add_node(ns, "Orrin cache filled up", entities=["Orrin cache"])
                    await graph.add_link(ns, "Orrin cache filled up", "Orrin pages slow", 0.7)
                    await graph.add_solution(ns, "Orrin pages slow", "raise the Orrin cache size")
                    await semantic.add_concept(
                        ns, "cache sizing", "how big caches get", ["Orrin cache"]
                    )
                else:
                    nodes = [CausalNodeItem("Orrin cache filled up", entities=["Orrin cache"])]
                    links = [CausalLinkItem("Orrin cache filled up", "Orrin pages slow", 0.7)]
                    fixes = [SolutionItem("Orrin pages slow", "raise the Orrin cache size")]
                    await add_causal_nodes(graph, ns, nodes)
                    await add_causal_links(graph, ns, links)
                    await add_solutions(graph, ns, fixes)
                    concept = ConceptItem("cache sizing", "how big caches get", ["Orrin cache"])
                    await SemanticBatch(semantic).add_concepts(ns, [concept])
            single, batch = await _shape(store, namespace), await _shape(store, batch_ns)
    finally:
        await store.delete_graph(batch_ns)
    for name in ("C_Node", "C_CAUSES", "C_SOLVED_BY", "X_AFFECTS", "S_Concept", "X_REPRESENTS"):
        assert name in single, name
    assert single == batch
