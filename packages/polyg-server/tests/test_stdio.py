from __future__ import annotations

import anyio
import pytest
from mcp import Client
from polyg_core.storage.embedded import EmbeddedFalkorDB
from polyg_core.storage.store import FalkorStore
from polyg_server.testing import stdio_server

pytestmark = pytest.mark.anyio


async def test_stdio_process_initializes_lists_tools_and_answers(
    falkordb_server: EmbeddedFalkorDB, store: FalkorStore, namespace: str
) -> None:
    await store.ensure_schema(namespace)
    await store.query(namespace, "CREATE (:E_Entity {uuid: 'e1', name: 'a'})")
    # The memory profile and one admin tool by name.
    params = stdio_server(falkordb_server.data_dir, namespace, POLYG_TOOLS="memory,get_statistics")
    with anyio.fail_after(60):
        async with Client(params) as client:
            assert client.server_info is not None and client.server_info.name == "polyg"
            tools = {t.name for t in (await client.list_tools()).tools}
            result = await client.call_tool("get_statistics", {})
            bad = await client.call_tool("get_statistics", {"graph": "../etc"})
            again = await client.call_tool("get_statistics", {"graph": namespace})
    assert tools == {
        "recall",
        "remember",
        "get_entity",
        "query_facts",
        "query_timeline",
        "explain_why",
        "update_entity",
        "invalidate_fact",
        "delete_node",
        "get_job",
        "get_statistics",
    }
    assert not result.is_error
    assert result.structured_content["namespace"] == namespace
    assert result.structured_content["graphs"]["entity"]["nodes"] == 1
    assert bad.is_error
    # Live worker counts may change between the calls (the job worker starts once the
    # store is open, in the background).
    for content in (again.structured_content, result.structured_content):
        content["jobs"].pop("workers")
    assert again.structured_content == result.structured_content
    # the process reused the session's FalkorDB and did not stop it on exit
    assert falkordb_server.running_socket() is not None
