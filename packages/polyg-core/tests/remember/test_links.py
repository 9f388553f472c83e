"""remember creates X_REPRESENTS and X_REFERS_TO from the words of one text."""

from __future__ import annotations

import anyio
import pytest
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.remember.links import mentions, referred_events, represented_entities
from polyg_core.storage.store import FalkorStore

pytestmark = pytest.mark.anyio

TEXT = (
    "The auth-service crashed on 2026-01-07 because AUTH_SECRET was missing after the "
    "deploy-v2.3.1 deployment. Caching with Redis reduced latency for the auth-service."
)


def test_mentions_match_whole_words_in_any_spelling() -> None:
    assert mentions("Caching with Redis reduced latency", "redis")
    assert mentions("the auth-service crashed", "Auth Service")
    assert not mentions("the auth-services crashed", "auth service x")
    assert not mentions("Redistribution", "Redis")


def test_a_concept_represents_the_entities_it_mentions() -> None:
    names = ["auth-service", "Redis", "AUTH_SECRET"]
    assert represented_entities("caching", "Caching with Redis for the auth-service", names) == [
        "auth-service",
        "Redis",
    ]


def test_a_causal_link_refers_to_the_events_stating_its_cause_or_effect() -> None:
    events = [("e1", "The auth-service crashed on startup"), ("e2", "Disk filled up")]
    assert referred_events("missing secret", "auth-service crashed", None, events) == ["e1"]
    assert referred_events("a", "b", "Disk filled up, then b", events) == ["e2"]


async def test_remember_without_an_llm_creates_represents_and_refers_to_links(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    mem = Memory(store=store, embedder=embedder, namespace=namespace)
    with anyio.fail_after(60):
        result = await mem.remember(TEXT, reference_time="2026-01-10T12:00:00Z")
    assert result.created
    represents = await store.query(
        namespace,
        "MATCH (c:S_Concept {name: 'caching'})-[:X_REPRESENTS]->(e:E_Entity) "
        "RETURN e.name ORDER BY e.name",
    )
    assert [r[0] for r in represents.rows] == ["Redis", "auth-service"]
    refers = await store.query(
        namespace,
        "MATCH (c:C_Node)-[:X_REFERS_TO]->(ev:T_Event) RETURN c.description, ev.description",
    )
    assert refers.rows
    assert {str(r[0]) for r in refers.rows} >= {"auth-service crashed"}
