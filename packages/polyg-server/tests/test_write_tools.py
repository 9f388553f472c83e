"""Write and delete tools over MCP: names on write are exact, near-duplicates are
reported, and deletes leave no current fact about a deleted entity."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client
from polyg_server.context import ServerContext
from polyg_server.testing import call

pytestmark = pytest.mark.anyio


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


def created(result: dict[str, Any]) -> dict[str, list[str]]:
    """The entities a write created, by name, with the names it reported as similar."""
    return {
        e["name"]: [s["name"] for s in e["similar_existing"]] for e in result["created_entities"]
    }


async def both_uuids(client: Client) -> set[str]:
    """The uuids of payments-db-primary and payments-db-secondary (two entities)."""
    found = await call(client, "get_entity", {"entity": "payments-db-primary"})
    assert found["entity"]["name"] == "payments-db-primary"
    secondary = await call(client, "get_entity", {"entity": "payments-db-secondary"})
    return {found["entity"]["uuid"], secondary["entity"]["uuid"]}


async def test_add_event_creates_a_near_duplicate_name_and_reports_it(
    memory_client: Client,
) -> None:
    await call(memory_client, "add_entity", {"name": "payments-db-primary"})
    event = await call(
        memory_client,
        "add_event",
        {
            "description": "replica promoted",
            "occurred_at": "2025-03-01T10:00:00Z",
            "entities": ["payments-db-secondary", "Payments DB Primary"],
        },
    )
    assert created(event) == {"payments-db-secondary": ["payments-db-primary"]}
    assert len(await both_uuids(memory_client)) == 2
    assert sorted(event["entities"]) == ["payments-db-primary", "payments-db-secondary"]
    # Named again, exactly or normalised: the stored entities, nothing created or reported.
    again = await call(
        memory_client,
        "add_event",
        {
            "description": "replica demoted",
            "occurred_at": "2025-03-02T10:00:00Z",
            "entities": ["PAYMENTS_DB_SECONDARY", "payments-db-primary"],
        },
    )
    assert again["created_entities"] == []


async def test_add_fact_creates_a_near_duplicate_subject_and_reports_it(
    memory_client: Client,
) -> None:
    await call(memory_client, "add_entity", {"name": "payments-db-primary"})
    fact = await call(
        memory_client,
        "add_fact",
        {"subject": "payments-db-secondary", "predicate": "replicates_from", "object": "primary"},
    )
    assert created(fact) == {"payments-db-secondary": ["payments-db-primary"]}
    assert len(await both_uuids(memory_client)) == 2
    again = await call(
        memory_client,
        "add_fact",
        {"subject": "Payments DB Secondary", "predicate": "region", "object": "eu-west-1"},
    )
    assert again["created_entities"] == []
    exact = await call(
        memory_client,
        "add_fact",
        {"subject": "payments-db-primary", "predicate": "region", "object": "eu-west-1"},
    )
    assert exact["created_entities"] == []


async def test_add_causal_link_creates_a_near_duplicate_entity_and_reports_it(
    memory_client: Client,
) -> None:
    await call(memory_client, "add_entity", {"name": "payments-db-primary"})
    link = await call(
        memory_client,
        "add_causal_link",
        {"cause": "disk full", "effect": "replica stopped", "entities": ["payments-db-secondary"]},
    )
    assert created(link) == {"payments-db-secondary": ["payments-db-primary"]}
    uuids = await both_uuids(memory_client)
    assert set(link["entities"]) < uuids
    again = await call(
        memory_client,
        "add_causal_link",
        {
            "cause": "replica stopped",
            "effect": "stale reads",
            "entities": ["payments db secondary", "payments-db-primary"],
        },
    )
    assert again["created_entities"] == []
    assert set(again["entities"]) == uuids


async def test_two_new_near_duplicates_in_one_write_report_each_other(
    memory_client: Client,
) -> None:
    event = await call(
        memory_client,
        "add_event",
        {
            "description": "login outage",
            "occurred_at": "2025-03-01T10:00:00Z",
            "entities": ["auth service", "auth servce"],
        },
    )
    assert created(event) == {"auth service": ["auth servce"], "auth servce": ["auth service"]}
    typo = event["created_entities"][1]
    merged = await call(
        memory_client,
        "merge_entities",
        {"source": typo["uuid"], "target": typo["similar_existing"][0]["uuid"], "confirm": True},
    )
    assert merged["entity"]["name"] == "auth service"
    assert merged["merged_from"] == ["auth servce"]


async def test_link_entities_creates_no_entity_for_a_near_duplicate_name(
    memory_client: Client,
) -> None:
    await call(memory_client, "add_entity", {"name": "payments-db-primary"})
    await call(memory_client, "add_entity", {"name": "billing-api"})
    with anyio.fail_after(60):
        refused = await memory_client.call_tool(
            "link_entities",
            {"source": "billing-api", "target": "payments-db-secondary", "relationship": "uses"},
        )
    assert refused.is_error
    assert "payments-db-primary" in str(refused.content)
    # A read matches by meaning: the only entity near that name is the primary.
    near = await call(memory_client, "get_entity", {"entity": "payments-db-secondary"})
    assert near["entity"]["name"] == "payments-db-primary"


async def test_add_concept_and_update_event_report_the_entities_they_create(
    memory_client: Client,
) -> None:
    await call(memory_client, "add_entity", {"name": "payments-db-primary"})
    concept = await call(
        memory_client,
        "add_concept",
        {"name": "replication", "entities": ["payments-db-secondary", "payments-db-primary"]},
    )
    assert created(concept) == {"payments-db-secondary": ["payments-db-primary"]}
    event = await call(
        memory_client,
        "add_event",
        {"description": "failover drill", "occurred_at": "2025-03-01T10:00:00Z"},
    )
    assert event["created_entities"] == []
    updated = await call(
        memory_client,
        "update_event",
        {"event": event["uuid"], "entities": ["payments-db-tertiary", "Payments DB Primary"]},
    )
    near = created(updated)["payments-db-tertiary"]
    assert "payments-db-primary" in near and "payments-db-secondary" in near
    again = await call(
        memory_client,
        "update_event",
        {"event": event["uuid"], "entities": ["payments-db-tertiary", "payments-db-secondary"]},
    )
    assert again["created_entities"] == []
    assert sorted(again["entities"]) == ["payments-db-secondary", "payments-db-tertiary"]


@pytest.mark.parametrize(
    ("tool", "target", "fields"),
    [
        ("update_entity", "entity", ["properties", "new_name", "entity_type"]),
        ("update_event", "event", ["description", "occurred_at", "duration_ms", "entities"]),
    ],
)
async def test_an_update_that_changes_nothing_names_what_it_can_change(
    memory_client: Client, tool: str, target: str, fields: list[str]
) -> None:
    with anyio.fail_after(60):
        refused = await memory_client.call_tool(tool, {target: "harbour-crane-7"})
    assert refused.is_error
    text = str(refused.content)
    assert "nothing to update" in text
    assert all(name in text for name in fields)
