"""The graphs on the test session's FalkorDB, sharing one name resolver per test."""

from __future__ import annotations

import pytest
from polyg_core.graphs.causal import CausalGraph
from polyg_core.graphs.entity import EntityGraph
from polyg_core.graphs.semantic import SemanticGraph
from polyg_core.graphs.temporal import TemporalGraph
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.resolve import NameResolver
from polyg_core.storage.store import FalkorStore


@pytest.fixture
def resolver(store: FalkorStore, embedder: Embedder) -> NameResolver:
    return NameResolver(store, embedder)


@pytest.fixture
def entities(store: FalkorStore, embedder: Embedder, resolver: NameResolver) -> EntityGraph:
    return EntityGraph(store, embedder, resolver)


@pytest.fixture
def temporal(store: FalkorStore, embedder: Embedder, resolver: NameResolver) -> TemporalGraph:
    return TemporalGraph(store, embedder, resolver)


@pytest.fixture
def causal(store: FalkorStore, embedder: Embedder, resolver: NameResolver) -> CausalGraph:
    return CausalGraph(store, embedder, resolver)


@pytest.fixture
def semantic(
    store: FalkorStore, embedder: Embedder, resolver: NameResolver, entities: EntityGraph
) -> SemanticGraph:
    """The semantic graph writing its concepts' entities through `entities`."""
    return SemanticGraph(store, embedder, resolver, entities=entities)
