from collections.abc import AsyncIterator
from typing import Any

import anyio
import numpy as np
import pytest
from polyg_core.errors import ProviderError
from polyg_core.providers.embeddings.base import Embedder, dimension_of
from polyg_core.providers.embeddings.litellm import LiteLLMEmbedder
from polyg_core.testing.llm_server import Reply, ScriptedLLMServer

pytestmark = pytest.mark.anyio


@pytest.fixture
async def server() -> AsyncIterator[ScriptedLLMServer]:
    async with ScriptedLLMServer(embedding_dimension=8) as s:
        yield s


def embedder(server: ScriptedLLMServer, **kwargs: Any) -> LiteLLMEmbedder:
    options: dict[str, Any] = {"max_retries": 2, "backoff_base_s": 0.01, "timeout_s": 2.0}
    options.update(kwargs)
    return LiteLLMEmbedder(
        "openai/test-embedding", api_base=server.api_base, api_key="test", **options
    )


async def test_texts_are_embedded_in_batches_and_normalised(server: ScriptedLLMServer) -> None:
    texts = [f"text number {i}" for i in range(130)]
    emb = embedder(server, batch_size=64)

    with anyio.fail_after(20):
        vectors = await emb.embed(texts)

    assert isinstance(emb, Embedder)
    assert vectors.shape == (130, 8)
    assert vectors.dtype == np.float32
    assert [len(r.body["input"]) for r in server.embedding_requests] == [64, 64, 2]
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    expected = ScriptedLLMServer.vector_for("text number 129", 8)
    np.testing.assert_allclose(vectors[129], expected / np.linalg.norm(expected), rtol=1e-5)
    assert emb.dimension == 8


async def test_dimension_is_unknown_until_probed(server: ScriptedLLMServer) -> None:
    emb = embedder(server)

    with pytest.raises(ProviderError, match=r"probe\(\)"):
        _ = emb.dimension
    with anyio.fail_after(10):
        assert await emb.probe() == 8
    assert emb.dimension == 8


async def test_given_dimension_is_known_before_any_call(server: ScriptedLLMServer) -> None:
    emb = embedder(server, dimension=8)

    assert emb.dimension == 8
    assert server.requests == []


async def test_model_returning_another_dimension_is_an_error(server: ScriptedLLMServer) -> None:
    emb = embedder(server, dimension=16)

    with anyio.fail_after(10), pytest.raises(ProviderError, match=r"8-dimensional.*dimension=16"):
        await emb.embed(["hello"])


async def test_transient_embedding_errors_are_retried(server: ScriptedLLMServer) -> None:
    server.push_embedding(Reply.error(503), Reply.error(429, retry_after=0.05))
    emb = embedder(server)

    with anyio.fail_after(10):
        vectors = await emb.embed(["a", "b"])

    assert vectors.shape == (2, 8)
    assert len(server.embedding_requests) == 3


async def test_persistent_embedding_errors_raise_with_what_to_check(
    server: ScriptedLLMServer,
) -> None:
    server.push_embedding(Reply.error(500), Reply.error(500))
    emb = embedder(server, max_retries=1)

    with anyio.fail_after(10), pytest.raises(ProviderError) as caught:
        await emb.embed(["a"])

    assert "EMBEDDING_MODEL" in str(caught.value)
    assert "openai/test-embedding" in str(caught.value)
    assert len(server.embedding_requests) == 2


async def test_empty_input_makes_no_request(server: ScriptedLLMServer) -> None:
    emb = embedder(server, dimension=8)

    vectors = await emb.embed([])

    assert vectors.shape == (0, 8)
    assert server.requests == []


async def test_empty_strings_are_still_embedded(server: ScriptedLLMServer) -> None:
    emb = embedder(server)

    with anyio.fail_after(10):
        vectors = await emb.embed(["", "word"])

    assert vectors.shape == (2, 8)
    assert server.embedding_requests[0].body["input"][0].strip() == ""


async def test_dimension_of_learns_from_one_embedding_and_keeps_it(
    server: ScriptedLLMServer,
) -> None:
    emb = embedder(server)

    with anyio.fail_after(10):
        assert await dimension_of(emb) == 8
        assert await dimension_of(emb) == 8
        await emb.embed(["after the first"])

    assert len(server.embedding_requests) == 2


async def test_dimension_of_asks_nothing_once_a_text_was_embedded(
    server: ScriptedLLMServer,
) -> None:
    emb = embedder(server)

    with anyio.fail_after(10):
        await emb.embed(["a first text"])
        assert await dimension_of(emb) == 8

    assert len(server.embedding_requests) == 1
