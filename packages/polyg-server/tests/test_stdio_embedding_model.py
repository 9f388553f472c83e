"""A remote embedding model over stdio: every session is a new process, and each one
writes and reads from its first call.

`polyg-mcp` runs as a user runs it, with `EMBEDDING_MODEL=openai/text-embedding-3-small`
served by the loopback stand-in at a dimension the local model does not have.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from polyg_core.storage.embedded import EmbeddedFalkorDB
from polyg_core.testing.llm_server import ScriptedLLMServer
from polyg_server.testing import stdio_server

pytestmark = pytest.mark.anyio

MODEL = "openai/text-embedding-3-small"


def _params(server: EmbeddedFalkorDB, namespace: str, api_base: str) -> StdioServerParameters:
    return stdio_server(
        server.data_dir,
        namespace,
        EMBEDDING_MODEL=MODEL,
        LLM_BASE_URL=api_base,
        OPENAI_API_KEY="test-key",
        POLYG_TOOLS="all",
    )


async def _session(
    params: StdioServerParameters, calls: list[tuple[str, dict[str, Any]]]
) -> list[Any]:
    async with Client(params) as client:
        return [await client.call_tool(name, args) for name, args in calls]


async def test_each_stdio_session_writes_and_reads_with_a_remote_model(
    falkordb_server: EmbeddedFalkorDB, namespace: str
) -> None:
    async with ScriptedLLMServer(embedding_dimension=40) as stand_in:
        params = _params(falkordb_server, namespace, stand_in.api_base)
        with anyio.fail_after(180):
            written = await _session(
                params,
                [
                    ("add_entity", {"name": "Brannock Hale"}),
                    ("remember", {"content": "Brannock Hale relit the north beacon."}),
                ],
            )
            read = await _session(
                params,
                [
                    ("recall", {"question": "Who relit the north beacon?"}),
                    ("semantic_search", {"query": "Brannock Hale"}),
                ],
            )
        asked = len(stand_in.embedding_requests)
    for result in (*written, *read):
        assert not result.is_error, result.content
    assert asked > 0
    assert "north beacon" in str(read[0].structured_content)
    hits = read[1].structured_content["hits"]
    assert hits and hits[0]["text"] == "Brannock Hale"
