"""The torch-free MiniLM embedder against sentence-transformers' own output."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.providers.embeddings.local import MiniLMEmbedder

REFERENCE = json.loads((Path(__file__).parent / "data" / "minilm_reference.json").read_text())


def test_matches_sentence_transformers_reference(embedder: MiniLMEmbedder) -> None:
    texts = [item["text"] for item in REFERENCE["items"]]
    got = embedder.embed_sync(texts)
    for text, vec, item in zip(texts, got, REFERENCE["items"], strict=True):
        ref = np.asarray(item["embedding"], dtype=np.float64)
        cos = float(vec @ ref / (np.linalg.norm(vec) * np.linalg.norm(ref)))
        assert cos >= 0.9999, (text[:40], cos)


def test_batching_and_order_do_not_change_vectors(embedder: MiniLMEmbedder) -> None:
    texts = ["auth service", "a much longer sentence about the payment service failing", "x"]
    together = embedder.embed_sync(texts)
    alone = np.vstack([embedder.embed_sync([t]) for t in texts])
    assert np.allclose(together, alone, atol=1e-5)
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)


@pytest.mark.anyio
async def test_async_embed_is_normalised_and_shaped(embedder: MiniLMEmbedder) -> None:
    assert isinstance(embedder, Embedder)
    out = await embedder.embed(["AuthService", "auth service", "banana bread"])
    assert out.shape == (3, 384)
    assert out.dtype == np.float32
    assert float(out[0] @ out[1]) > float(out[0] @ out[2])
    empty = await embedder.embed([])
    assert empty.shape == (0, 384)


def test_cache_returns_the_same_vectors_and_stays_bounded() -> None:
    small = MiniLMEmbedder(cache_size=2)
    first = small.embed_sync(["alpha", "beta", "gamma"])
    assert len(small._cache) == 2
    again = small.embed_sync(["gamma", "alpha"])
    assert np.allclose(again, first[[2, 0]], atol=1e-6)
    uncached = MiniLMEmbedder(cache_size=0)
    assert np.allclose(uncached.embed_sync(["beta"]), first[[1]], atol=1e-5)
    assert len(uncached._cache) == 0


def test_a_bulk_call_spread_over_threads_gives_the_vectors_of_one_thread() -> None:
    texts = [f"deploy {i} of service {i % 7} paged {'the owner ' * (i % 5)}" for i in range(40)]
    parallel = MiniLMEmbedder(batch_size=4, threads=3, cache_size=0).embed_sync(texts)
    serial = MiniLMEmbedder(batch_size=4, threads=1, cache_size=0).embed_sync(texts)
    assert np.allclose(parallel, serial, atol=1e-5)
