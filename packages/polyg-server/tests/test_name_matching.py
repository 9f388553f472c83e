"""Reads may match a name by meaning but always say so; writes never match by meaning."""

from __future__ import annotations

import json

import anyio
import pytest
from mcp import Client
from polyg_server.testing import data_of, text_of

pytestmark = pytest.mark.anyio


async def _hosts(client: Client) -> None:
    for i in range(1, 4):
        data_of(await client.call_tool("add_entity", {"name": f"host-0{i}", "entity_type": "host"}))


async def test_get_entity_of_a_missing_name_says_what_it_matched_instead(
    memory_client: Client,
) -> None:
    with anyio.fail_after(120):
        for name, etype in (
            ("host-01", "host"),
            ("host-live-backup", "host"),
            ("billing-api", "service"),
        ):
            data_of(
                await memory_client.call_tool("add_entity", {"name": name, "entity_type": etype})
            )
        result = await memory_client.call_tool("get_entity", {"entity": "host-99"})
    match = data_of(result)["match"]
    assert match["requested"] == "host-99"
    assert match["matched"] == "host-01"
    assert match["how"] == "embedding" and match["by_meaning"] is True
    assert 0.75 <= match["score"] < 1.0
    assert match["note"] and "host-99" in match["note"]
    assert match["candidates"], "the other close names are listed"
    assert match["candidates"][0]["similarity"] <= match["score"]


async def test_get_entity_by_its_name_reports_an_exact_match(memory_client: Client) -> None:
    with anyio.fail_after(120):
        await _hosts(memory_client)
        exact = data_of(await memory_client.call_tool("get_entity", {"entity": "host-02"}))
        normalized = data_of(
            await memory_client.call_tool(
                "get_entity", {"entity": "HOST 02", "include_relationships": False}
            )
        )
    assert exact["match"]["how"] == "exact" and exact["match"]["by_meaning"] is False
    assert exact["match"]["score"] == 1.0 and exact["match"]["candidates"] == []
    assert normalized["match"]["how"] == "normalized"
    assert normalized["entity"]["name"] == "host-02"


async def test_update_entity_never_rewrites_a_similar_name(memory_client: Client) -> None:
    with anyio.fail_after(120):
        data_of(
            await memory_client.call_tool(
                "add_entity",
                {
                    "name": "payments-db-primary",
                    "entity_type": "database",
                    "properties": {"role": "primary"},
                },
            )
        )
        result = await memory_client.call_tool(
            "update_entity",
            {"entity": "payments-db-secondary", "properties": {"role": "replica"}},
        )
        assert result.is_error
        assert "payments-db-primary" in text_of(result)  # named as a candidate
        primary = data_of(
            await memory_client.call_tool("get_entity", {"entity": "payments-db-primary"})
        )
    assert primary["entity"]["properties"] == {"role": "primary"}
    assert json.dumps(primary["match"]).count("embedding") == 0
