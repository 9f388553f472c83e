"""Write and delete tools over MCP: names on write are exact, near-duplicates are
reported, and deletes leave no current fact about a deleted entity."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client
from polyg_server.context import ServerContext

pytestmark = pytest.mark.anyio


async def call(client: Client, name: str, args: dict[str, Any]) -> dict[str, Any]:
    with anyio.fail_after(60):
        result = await client.call_tool(name, args)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def test_a_typo_on_add_entity_creates_it_and_reports_the_similar_name(
    memory_client: Client,
) -> None:
    first = await call(memory_client, "add_entity", {"name": "auth service"})
    typo = await call(memory_client, "add_entity", {"name": "auth servce"})
    assert typo["created"] and typo["entity"]["uuid"] != first["entity"]["uuid"]
    assert [s["name"] for s in typo["similar_existing"]] == ["auth service"]
    again = await call(memory_client, "add_entity", {"name": "Auth Service"})
    assert not again["created"] and again["similar_existing"] == []


async def test_a_causal_link_entity_is_not_merged_into_a_similar_name(
    memory_client: Client,
) -> None:
    await call(memory_client, "add_entity", {"name": "payments-db-primary"})
    await call(
        memory_client,
        "add_causal_link",
        {"cause": "disk full", "effect": "replica stopped", "entities": ["payments-db-secondary"]},
    )
    got = await call(memory_client, "get_entity", {"entity": "payments-db-secondary"})
    assert got["entity"]["name"] == "payments-db-secondary"


async def test_deleting_an_entity_over_mcp_ends_its_current_facts(
    memory_client: Client, memory_ctx: ServerContext, namespace: str
) -> None:
    await call(
        memory_client,
        "add_fact",
        {"subject": "Alice", "predicate": "works_on", "object": "Payments"},
    )
    deleted = await call(memory_client, "delete_node", {"node": "Alice", "confirm": True})
    assert deleted["deleted"] and deleted["label"] == "E_Entity"
    temporal = memory_ctx.require_memory().temporal
    assert await temporal.facts(namespace, subject="Alice") == []
    assert len(await temporal.facts(namespace, subject="Alice", history=True)) == 1


async def test_a_reported_near_duplicate_can_be_merged_on_purpose(memory_client: Client) -> None:
    await call(memory_client, "add_entity", {"name": "auth service"})
    typo = await call(memory_client, "add_entity", {"name": "auth servce"})
    similar = typo["similar_existing"][0]
    merged = await call(
        memory_client,
        "merge_entities",
        {"source": typo["entity"]["uuid"], "target": similar["uuid"], "confirm": True},
    )
    assert merged["entity"]["name"] == "auth service"
    assert merged["merged_from"] == ["auth servce"]
    with anyio.fail_after(30):
        gone = await memory_client.call_tool("get_entity", {"entity": typo["entity"]["uuid"]})
    assert gone.is_error
