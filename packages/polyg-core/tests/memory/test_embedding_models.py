"""Any embedding model works from the first call of a new process, and reads under another
model get the same clear error as writes.

The remote model is litellm's real OpenAI path against the loopback stand-in, serving
vectors of a dimension the local model does not have. A "new process" is a new store
(no cached schema or vector state) and a new embedder (dimension not learned yet),
as every stdio session is.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import pytest
from polyg_core.config import StorageSettings
from polyg_core.errors import EmbeddingMismatch, NodeNotFound
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.providers.embeddings.litellm import LiteLLMEmbedder
from polyg_core.storage.store import FalkorStore
from polyg_core.testing.llm_server import ScriptedLLMServer

pytestmark = pytest.mark.anyio

MODEL = "openai/text-embedding-3-small"
DIMENSION = 24


@pytest.fixture
async def server() -> AsyncIterator[ScriptedLLMServer]:
    async with ScriptedLLMServer(embedding_dimension=DIMENSION) as s:
        yield s


def remote(
    server: ScriptedLLMServer, model: str = MODEL, dimension: int | None = None
) -> LiteLLMEmbedder:
    return LiteLLMEmbedder(
        model,
        dimension=dimension,
        api_base=server.api_base,
        api_key="test",
        max_retries=0,
        timeout_s=10.0,
    )


async def new_process(settings: StorageSettings, embedder: Embedder, ns: str) -> Memory:
    """A Memory as a freshly started process builds it."""
    return Memory(await FalkorStore(settings).connect(), embedder, namespace=ns, owns_store=True)


async def test_a_new_process_writes_with_a_remote_model_from_its_first_call(
    server: ScriptedLLMServer, falkordb_settings: StorageSettings, namespace: str
) -> None:
    with anyio.fail_after(120):
        async with await new_process(falkordb_settings, remote(server), namespace) as mem:
            entity, created = await mem.entities.add(namespace, "Oriel Vance", "Person")
            record = await mem.store.embedding_record(namespace)
        async with await new_process(falkordb_settings, remote(server), namespace) as mem:
            result = await mem.remember("Oriel Vance moved the tide gauges to Quay Nine.")
            stored = await mem.store.query(
                namespace, "MATCH (m:S_Memory) RETURN count(m)", read_only=True
            )
    assert created and entity.name == "Oriel Vance"
    assert record == (MODEL, DIMENSION)
    assert result.created
    assert stored.rows[0][0] == 1


async def test_a_new_process_reads_a_graph_of_its_remote_model(
    server: ScriptedLLMServer, falkordb_settings: StorageSettings, namespace: str
) -> None:
    with anyio.fail_after(120):
        async with await new_process(falkordb_settings, remote(server), namespace) as mem:
            await mem.remember("Oriel Vance moved the tide gauges to Quay Nine.")
            await mem.entities.add(namespace, "Quay Nine", "Place")
        async with await new_process(falkordb_settings, remote(server), namespace) as mem:
            answer = await mem.recall("Where did Oriel Vance move the tide gauges?")
        async with await new_process(falkordb_settings, remote(server), namespace) as mem:
            hits = await mem.semantic.search(namespace, "Quay Nine", k=3)
        async with await new_process(falkordb_settings, remote(server), namespace) as mem:
            # the stand-in's vectors carry no meaning: the k-NN step answers with candidates
            with pytest.raises(NodeNotFound) as missing:
                await mem.entities.get(namespace, "the quay nine place")
    assert any("tide gauges" in m.content for m in answer.memories)
    assert hits and hits[0].similarity > 0.99
    assert {"Oriel Vance", "Quay Nine"} <= {c.name for c in missing.value.candidates}


async def test_reads_under_another_model_get_the_error_writes_give(
    server: ScriptedLLMServer,
    falkordb_settings: StorageSettings,
    embedder: Embedder,
    namespace: str,
) -> None:
    built_with = remote(server, dimension=DIMENSION)
    with anyio.fail_after(120):
        async with await new_process(falkordb_settings, built_with, namespace) as mem:
            await mem.remember("Oriel Vance moved the tide gauges to Quay Nine.")
        # another dimension (the local model) and the same dimension under another name
        for other in (embedder, remote(server, "openai/another-embedding")):
            async with await new_process(falkordb_settings, other, namespace) as mem:
                with pytest.raises(
                    EmbeddingMismatch, match=rf"built with embedding model '{MODEL}'"
                ):
                    await mem.entities.add(namespace, "Ilse Marrow", "Person")
                with pytest.raises(EmbeddingMismatch, match=rf"EMBEDDING_MODEL={MODEL}"):
                    await mem.recall("Where did Oriel Vance move the tide gauges?")
                with pytest.raises(EmbeddingMismatch, match=rf"EMBEDDING_MODEL={MODEL}"):
                    await mem.semantic.search(namespace, "tide gauges")
                with pytest.raises(EmbeddingMismatch, match=rf"EMBEDDING_MODEL={MODEL}"):
                    await mem.entities.get(namespace, "the oriel vance person")
