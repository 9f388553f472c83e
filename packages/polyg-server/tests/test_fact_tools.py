"""query_facts and fact_history over MCP: facts as of a time and a statement's history."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client
from polyg_server.testing import call

pytestmark = pytest.mark.anyio


async def test_query_facts_as_of_a_date_and_the_history_of_a_fact(memory_client: Client) -> None:
    for obj, since, who in (
        ("Payment Service", "2024-01-10", "HR"),
        ("Auth Service", "2025-06-01", "Bob"),
    ):
        await call(
            memory_client,
            "add_fact",
            {
                "subject": "Alice",
                "predicate": "works_on",
                "object": obj,
                "valid_from": since,
                "source": who,
            },
        )
    then = await call(memory_client, "query_facts", {"subject": "Alice", "as_of": "2025-03-15"})
    assert [f["object"] for f in then["facts"]] == ["Payment Service"]
    now = await call(memory_client, "query_facts", {"subject": "Alice"})
    assert [f["object"] for f in now["facts"]] == ["Auth Service"]
    period = await call(
        memory_client,
        "query_facts",
        {"entity": "Alice", "start": "2025-05-01", "end": "2025-06-30"},
    )
    assert period["count"] == 2
    history = await call(
        memory_client, "fact_history", {"subject": "Alice", "predicate": "works_on"}
    )
    old, new = history["versions"]
    assert (old["object"], old["source"]) == ("Payment Service", "HR")
    assert old["valid_to"].startswith("2025-06-01")
    assert old["invalidated_by"] == new["uuid"] and old["invalidated_at"] is not None
    assert history["current"]["uuid"] == new["uuid"]
    by_uuid = await call(memory_client, "fact_history", {"fact": old["uuid"]})
    assert [v["uuid"] for v in by_uuid["versions"]] == [old["uuid"], new["uuid"]]


async def test_fact_history_without_a_fact_says_what_to_give(memory_client: Client) -> None:
    with anyio.fail_after(30):
        result = await memory_client.call_tool("fact_history", {"subject": "Alice"})
    assert result.is_error
    text = str(result.content[0])
    assert "subject and predicate" in text


async def test_add_fact_takes_a_cardinality_and_multi_values_accumulate(
    memory_client: Client,
) -> None:
    for club, kind in (("chess", None), ("rowing", "multi")):
        args: dict[str, Any] = {"subject": "Maren Holt", "predicate": "joined_club", "object": club}
        if kind:
            args["cardinality"] = kind
        await call(memory_client, "add_fact", args)
    now = await call(memory_client, "query_facts", {"subject": "Maren Holt"})
    assert sorted(f["object"] for f in now["facts"]) == ["chess", "rowing"]
    assert {f["cardinality"] for f in now["facts"]} == {"single", "multi"}
    bad = await memory_client.call_tool(
        "add_fact",
        {"subject": "Maren Holt", "predicate": "city", "object": "Oslo", "cardinality": "x"},
    )
    assert bad.is_error
