"""add_entity through MCP: how many FalkorDB queries a call sends (a count, not a time)."""

from __future__ import annotations

import anyio
import pytest
from mcp import Client
from polyg_core.config import Settings
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.testing.counting import CountingStore
from polyg_server.app import create_server
from polyg_server.context import ServerContext

pytestmark = pytest.mark.anyio


async def test_add_entity_sends_three_queries_for_a_new_entity_and_two_for_a_known_one(
    server_settings: Settings, cached_embedder: Embedder
) -> None:
    """New: what exists (with the namespace's metadata check), the write, the near-duplicate
    search with the stored vector. Known: the read and the write, nothing to report."""
    store = CountingStore(server_settings.storage)
    await store.connect()
    ctx = ServerContext(store=store, settings=server_settings, embedder=cached_embedder)
    try:
        async with Client(create_server(ctx)) as client:
            with anyio.fail_after(60):
                await client.call_tool("add_entity", {"name": "auth service", "entity_type": "x"})
                # Enough entities that one vector search answers (a smaller graph is
                # searched a second time, asking for more).
                await ctx.require_memory().entities.add_many(
                    server_settings.namespace, [(f"billing job {i}", "job", None) for i in range(8)]
                )
                store.queries.clear()
                new = await client.call_tool("add_entity", {"name": "auth servce"})
                sent_new = len(store.queries)
                store.queries.clear()
                known = await client.call_tool("add_entity", {"name": "Auth-Servce"})
                sent_known = len(store.queries)
    finally:
        await store.close()
    assert new.structured_content is not None and known.structured_content is not None
    assert new.structured_content["created"] is True
    assert [s["name"] for s in new.structured_content["similar_existing"]] == ["auth service"]
    assert known.structured_content["created"] is False
    assert known.structured_content["similar_existing"] == []
    assert (sent_new, sent_known) == (3, 2), store.queries
