"""The semantic graph and vector search against the real FalkorDB and the local embedder."""

from __future__ import annotations

from collections.abc import Sequence

import anyio
import numpy as np
import numpy.typing as npt
import pytest
from polyg_core.errors import EmbeddingMismatch, InvalidInput, NodeNotFound
from polyg_core.graphs.crosslinks import CrossLinker
from polyg_core.graphs.entity import EntityGraph
from polyg_core.graphs.semantic import SemanticGraph
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.resolve import NameResolver
from polyg_core.storage.store import FalkorStore
from polyg_shared import CrossLinkType, MemoryCategory

pytestmark = pytest.mark.anyio


class TinyEmbedder:
    """An 8-dimensional embedder: a namespace built with it cannot take MiniLM vectors."""

    model_name = "test/tiny"
    dimension = 8

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        rows = [np.random.default_rng(len(t)).random(8, dtype=np.float32) + 0.1 for t in texts]
        out = np.array(rows, dtype=np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


async def test_add_concept_is_deduplicated_on_its_name(
    semantic: SemanticGraph, namespace: str
) -> None:
    concept, created = await semantic.add_concept(namespace, "Rate Limiting", "Throttle clients")
    assert created
    assert (concept.name, concept.description) == ("Rate Limiting", "Throttle clients")
    again, created = await semantic.add_concept(namespace, "rate-limiting")
    assert not created
    assert (again.uuid, again.description) == (concept.uuid, "Throttle clients")
    updated, _ = await semantic.add_concept(namespace, "rate limiting", "Cap requests per key")
    assert updated.description == "Cap requests per key"
    assert (await semantic.get_concept(namespace, "RateLimiting")).uuid == concept.uuid


async def test_knn_returns_the_closest_concept_first(
    semantic: SemanticGraph, namespace: str
) -> None:
    for name, desc in [
        ("HTTP caching", "Keep responses in a cache so repeated requests are fast"),
        ("Team lunch", "Where the team eats on Fridays"),
        ("Database indexing", "B-tree indexes make SQL lookups fast"),
    ]:
        await semantic.add_concept(namespace, name, desc)
    with anyio.fail_after(20):
        hits = await semantic.search(namespace, "cache the API responses", k=3)
    assert hits[0].text == "HTTP caching"
    assert hits[0].label == "S_Concept"
    assert hits[0].graph == "semantic"
    assert all(0.0 <= h.similarity <= 1.0 for h in hits)
    assert [h.similarity for h in hits] == sorted((h.similarity for h in hits), reverse=True)
    assert "embedding" not in hits[0].properties


async def test_identical_text_has_similarity_one_and_threshold_filters(
    semantic: SemanticGraph, namespace: str
) -> None:
    await semantic.add_concept(namespace, "service mesh")
    await semantic.add_concept(namespace, "quarterly budget")
    hits = await semantic.search(namespace, "service mesh", k=5)
    assert hits[0].text == "service mesh"
    assert hits[0].similarity == pytest.approx(1.0, abs=1e-3)
    assert len(hits) == 2
    strict = await semantic.search(namespace, "service mesh", k=5, min_similarity=0.9)
    assert [h.text for h in strict] == ["service mesh"]


async def test_similar_concepts_are_linked_with_their_score(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    semantic = SemanticGraph(store, embedder, NameResolver(store, embedder), similar_threshold=0.7)
    a, _ = await semantic.add_concept(namespace, "response caching")
    b, _ = await semantic.add_concept(namespace, "caching of responses")
    c, _ = await semantic.add_concept(namespace, "office plants")
    similar = await semantic.similar_concepts(namespace, b.uuid)
    assert [x.uuid for x, _ in similar] == [a.uuid]
    assert 0.7 <= similar[0][1] <= 1.0
    assert await semantic.similar_concepts(namespace, c.uuid) == []
    await semantic.add_concept(namespace, "caching of responses", "now with a description")
    assert len(await semantic.similar_concepts(namespace, a.uuid)) == 1


async def test_concept_represents_entities_by_name(
    semantic: SemanticGraph, entities: EntityGraph, store: FalkorStore, namespace: str
) -> None:
    auth, _ = await entities.add(namespace, "auth service", "service")
    concept, _ = await semantic.add_concept(
        namespace, "authentication", "Login and tokens", entities=["AuthService", "Keycloak"]
    )
    links = await CrossLinker(store).links_of(namespace, concept.uuid)
    keycloak = await entities.get(namespace, "keycloak")
    assert {(link.type, link.target) for link in links} == {
        (CrossLinkType.REPRESENTS, auth.uuid),
        (CrossLinkType.REPRESENTS, keycloak.uuid),
    }


async def test_concept_without_entity_graph_takes_uuids_only(
    store: FalkorStore, embedder: Embedder, entities: EntityGraph, namespace: str
) -> None:
    semantic = SemanticGraph(store, embedder, NameResolver(store, embedder))
    alice, _ = await entities.add(namespace, "alice", "person")
    await semantic.add_concept(namespace, "ownership", entities=[alice.uuid])
    with pytest.raises(NodeNotFound):
        await semantic.add_concept(namespace, "ownership", entities=["bob"])


async def test_memory_is_deduplicated_and_about_its_concepts(
    semantic: SemanticGraph, store: FalkorStore, namespace: str
) -> None:
    caching, _ = await semantic.add_concept(namespace, "caching", "Keeping results around")
    memory, created = await semantic.add_memory(
        namespace,
        "The deploy failed because the cache was cold",
        category="procedural",
        tags=["WHY:deploy"],
        concepts=["Caching", "deployments"],
        created_at="2026-01-07T14:00:00+02:00",
    )
    assert created
    assert memory.category == MemoryCategory.PROCEDURAL
    assert memory.created_at.isoformat() == "2026-01-07T12:00:00+00:00"
    again, created = await semantic.add_memory(
        namespace, "The deploy  failed because the cache was cold ", tags=["WHEN:jan"]
    )
    assert not created
    assert again.uuid == memory.uuid
    assert again.tags == ["WHY:deploy", "WHEN:jan"]
    res = await store.query(
        namespace,
        "MATCH (:S_Memory {uuid: $u})-[:S_ABOUT]->(c:S_Concept) RETURN c.name ORDER BY c.name",
        {"u": memory.uuid},
    )
    assert [r[0] for r in res.rows] == ["caching", "deployments"]
    assert (await semantic.get_concept(namespace, "caching")).uuid == caching.uuid
    hits = await semantic.search(namespace, "why did the deploy fail", k=1, labels=["S_Memory"])
    assert (hits[0].label, hits[0].uuid, hits[0].text) == ("S_Memory", memory.uuid, memory.content)


async def test_search_covers_entities_and_can_be_limited_to_labels(
    semantic: SemanticGraph, entities: EntityGraph, namespace: str
) -> None:
    await entities.add(namespace, "payment gateway", "service")
    await semantic.add_concept(namespace, "payments", "Charging cards")
    hits = await semantic.search(namespace, "payment gateway", k=5)
    assert (hits[0].label, hits[0].graph, hits[0].text) == ("E_Entity", "entity", "payment gateway")
    only = await semantic.search(namespace, "payment gateway", k=5, labels=["S_Concept"])
    assert {h.label for h in only} == {"S_Concept"}


async def test_search_of_an_empty_namespace_is_empty(
    semantic: SemanticGraph, namespace: str
) -> None:
    assert await semantic.search(namespace, "anything") == []


async def test_search_refuses_bad_arguments(semantic: SemanticGraph, namespace: str) -> None:
    with pytest.raises(InvalidInput, match="k must be"):
        await semantic.search(namespace, "x", k=0)
    with pytest.raises(InvalidInput, match="G_Node"):
        await semantic.search(namespace, "x", labels=["G_Node"])
    with pytest.raises(InvalidInput, match="empty"):
        await semantic.search(namespace, "  ")
    with pytest.raises(InvalidInput, match="category"):
        await semantic.add_memory(namespace, "text", category="dreams")


async def test_dimension_mismatch_is_refused_with_the_fix(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    tiny = SemanticGraph(store, TinyEmbedder(), NameResolver(store, TinyEmbedder()))
    await tiny.add_concept(namespace, "built with tiny vectors")
    minilm = SemanticGraph(store, embedder, NameResolver(store, embedder))
    with pytest.raises(EmbeddingMismatch, match="EMBEDDING_MODEL=test/tiny"):
        await minilm.search(namespace, "built with tiny vectors")
    with pytest.raises(EmbeddingMismatch, match="dimension 8"):
        await minilm.add_concept(namespace, "another concept")
    with pytest.raises(EmbeddingMismatch, match="dimension 3"):
        await tiny.search(namespace, [0.1, 0.2, 0.3])
    hits = await tiny.search(namespace, [1.0] * 8, k=1)
    assert hits[0].text == "built with tiny vectors"


async def test_hostile_concept_names_are_stored_literally(
    semantic: SemanticGraph, namespace: str
) -> None:
    name = "x'}) MATCH (n) DETACH DELETE n //"
    concept, _ = await semantic.add_concept(namespace, name, 'desc with "quotes" and })')
    got = await semantic.get_concept(namespace, concept.uuid)
    assert (got.name, got.description) == (name, 'desc with "quotes" and })')
    memory, _ = await semantic.add_memory(namespace, "MATCH (n) RETURN n", concepts=[name])
    assert memory.content == "MATCH (n) RETURN n"
