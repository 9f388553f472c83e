"""The causal_probability tool through a real MCP client session."""

from __future__ import annotations

import anyio
import pytest
from mcp import Client

pytestmark = pytest.mark.anyio


async def test_causal_probability_combines_chains_and_states_the_model(
    memory_client: Client,
) -> None:
    links = [
        ("cache flush", "cold cache", 0.9),
        ("cold cache", "database overload", 0.8),
        ("cache flush", "retry storm", 0.5),
        ("retry storm", "database overload", 0.6),
    ]
    with anyio.fail_after(60):
        for cause, effect, confidence in links:
            added = await memory_client.call_tool(
                "add_causal_link", {"cause": cause, "effect": effect, "confidence": confidence}
            )
            assert not added.is_error, added.content
        result = await memory_client.call_tool(
            "causal_probability", {"cause": "cache flush", "effect": "database overload"}
        )
    assert not result.is_error, result.content
    data = result.structured_content
    assert data is not None
    assert data["probability"] == pytest.approx(1 - (1 - 0.72) * (1 - 0.3))
    assert data["model"] == "noisy-OR over independent links"
    assert data["method"] == "exact" and data["exact"] is True
    assert data["paths"][0]["nodes"] == ["cache flush", "cold cache", "database overload"]


async def test_causal_probability_of_an_unknown_node_is_a_tool_error(
    memory_client: Client,
) -> None:
    with anyio.fail_after(30):
        await memory_client.call_tool(
            "add_causal_link", {"cause": "cache flush", "effect": "cold cache", "confidence": 0.9}
        )
        result = await memory_client.call_tool(
            "causal_probability", {"cause": "solar flare", "effect": "cold cache"}
        )
    assert result.is_error
