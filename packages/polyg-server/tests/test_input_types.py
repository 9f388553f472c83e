"""Tool arguments are read as their schema types: `true` is no number, and a graph name
with a trailing newline is no graph name."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from mcp import Client
from polyg_core.errors import InvalidNamespace
from polyg_core.storage.namespace import validate_namespace
from polyg_server.app import create_server
from polyg_server.context import ServerContext
from polyg_server.registry import list_tool_specs
from polyg_server.testing import text_of
from polyg_shared.engine import AddNodeInput
from polyg_shared.tools import SemanticSearchInput
from polyg_shared.types import is_graph_name
from pydantic import ValidationError

pytestmark = pytest.mark.anyio


def _number_fields(schema: dict[str, Any]) -> list[str]:
    """Top-level properties typed integer or number (alone or with null)."""
    out: list[str] = []
    for name, prop in schema.get("properties", {}).items():
        options = [prop, *prop.get("anyOf", [])]
        types = {o.get("type") for o in options}
        if types & {"integer", "number"} and "boolean" not in types:
            out.append(name)
    return out


@pytest.mark.parametrize("name", ["polyg\n", "polyg\r\n", "\npolyg", "po lyg", "", "x" * 65])
def test_graph_names_must_match_whole(name: str) -> None:
    assert not is_graph_name(name)
    with pytest.raises(InvalidNamespace):
        validate_namespace(name)
    with pytest.raises(ValidationError, match="graph"):
        SemanticSearchInput.model_validate({"query": "q", "graph": name})
    with pytest.raises(ValidationError, match="graph"):
        AddNodeInput.model_validate({"name": "n", "graph": name})


def test_valid_graph_names_still_pass() -> None:
    for name in ("polyg", "project-x", "scratch_1", "a.b", "x" * 64):
        assert validate_namespace(name) == name


async def test_a_trailing_newline_graph_is_refused_by_the_tools(memory_client: Client) -> None:
    with anyio.fail_after(60):
        for tool, args in (
            ("get_statistics", {}),
            ("add_entity", {"name": "Ines Varga", "entity_type": "person"}),
            ("add_node", {"name": "Ines Varga"}),
        ):
            result = await memory_client.call_tool(tool, {**args, "graph": "polyg\n"})
            assert result.is_error, tool
            assert "graph" in text_of(result), text_of(result)


def test_booleans_are_not_integers_in_models() -> None:
    with pytest.raises(ValidationError, match="boolean"):
        SemanticSearchInput.model_validate({"query": "q", "k": True})
    assert SemanticSearchInput.model_validate({"query": "q", "k": 3}).k == 3


async def test_every_number_argument_of_every_tool_refuses_true(memory_ctx: ServerContext) -> None:
    server = create_server(memory_ctx)
    specs = await list_tool_specs(server)
    checked = 0
    async with Client(server) as client:
        with anyio.fail_after(120):
            for spec in specs:
                for field in _number_fields(spec["inputSchema"]):
                    result = await client.call_tool(spec["name"], {field: True})
                    text = text_of(result)
                    assert result.is_error, (spec["name"], field)
                    assert f"- {field}:" in text and "boolean" in text, (spec["name"], text)
                    checked += 1
    assert checked >= 20


@pytest.mark.parametrize("fmt", ["json", "csv"])
async def test_an_import_with_a_lone_surrogate_is_refused_and_the_graph_stays_readable(
    memory_client: Client, namespace: str, fmt: str
) -> None:
    graph = f"{namespace}_s"
    bad = "Rena \ud800 Voss"
    content = (
        json.dumps({"nodes": [{"id": "a", "name": bad}, {"id": "b", "name": "Harbor"}]})
        if fmt == "json"
        else f"source,target,relation\n{bad},Harbor,visits\n"
    )
    with anyio.fail_after(60):
        result = await memory_client.call_tool(
            "import_graph_text", {"format": fmt, "content": content, "graph": graph}
        )
        assert result.is_error
        text = text_of(result)
        assert "lone surrogate" in text and "internal error" not in text, text
        for tool in ("get_graph_info", "pagerank", "list_nodes"):
            read = await memory_client.call_tool(tool, {"graph": graph})
            assert not read.is_error, (tool, text_of(read))
