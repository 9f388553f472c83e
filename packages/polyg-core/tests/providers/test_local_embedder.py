"""The torch-free MiniLM embedder (onnxruntime) against sentence-transformers' own output."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.providers.embeddings.local import _TRIM_AFTER_TOKENS, MiniLMEmbedder  # pyright: ignore[reportPrivateUsage]

REFERENCE = json.loads((Path(__file__).parent / "data" / "minilm_reference.json").read_text())
ROOT = Path(__file__).resolve().parents[4]


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
    assert len(small._cache) == 2  # pyright: ignore[reportPrivateUsage]
    again = small.embed_sync(["gamma", "alpha"])
    assert np.allclose(again, first[[2, 0]], atol=1e-6)
    uncached = MiniLMEmbedder(cache_size=0)
    assert np.allclose(uncached.embed_sync(["beta"]), first[[1]], atol=1e-5)
    assert len(uncached._cache) == 0  # pyright: ignore[reportPrivateUsage]


def test_threads_spinning_and_any_chunk_size_give_the_same_vectors() -> None:
    texts = [f"deploy {i} of service {i % 7} paged {'the owner ' * (i % 5)}" for i in range(40)]
    texts += ["auth", "Bob", "a b", "payments gateway redis"]
    two = MiniLMEmbedder(batch_size=4, threads=2, cache_size=0).embed_sync(texts)
    one = MiniLMEmbedder(batch_size=32, threads=1, cache_size=0).embed_sync(texts)
    assert np.allclose(two, one, atol=1e-5)
    spinning = MiniLMEmbedder(batch_size=8, threads=2, cache_size=0, spin_us=200)
    assert spinning._model() is not MiniLMEmbedder(threads=2, spin_us=0)._model()  # pyright: ignore[reportPrivateUsage]
    assert np.allclose(spinning.embed_sync(texts), one, atol=1e-5)


def test_a_call_large_enough_to_release_memory_keeps_its_vectors_and_the_next_calls() -> None:
    embedder = MiniLMEmbedder(cache_size=0)
    texts = [f"release {i}: " + "the ledger service paged the owner " * 4 for i in range(80)]
    # Enough padded tokens that the heap is trimmed after the pass.
    tokens = sum(len(e.ids) for e in embedder._model()._tokenizer.encode_batch(texts))  # pyright: ignore[reportPrivateUsage]
    assert tokens >= _TRIM_AFTER_TOKENS
    before = embedder.embed_sync(texts[:3])
    together = embedder.embed_sync(texts)
    assert np.allclose(together[:3], before, atol=1e-5)
    assert np.allclose(embedder.embed_sync(texts[-2:]), together[-2:], atol=1e-5)


def test_inputs_past_the_maximum_length_are_truncated() -> None:
    embedder = MiniLMEmbedder(cache_size=0)
    long = " ".join(f"word{i % 50}" for i in range(400))  # far more than 256 tokens
    cut, extended, short = embedder.embed_sync([long, long + " zebra giraffe", long[:200]])
    # Only the first 256 tokens count: text past them changes nothing.
    assert np.allclose(cut, extended, atol=1e-6)
    assert float(cut @ short) < 0.999
    small = MiniLMEmbedder(max_seq_length=8, cache_size=0)
    a, b = small.embed_sync(["one two three four five six", "one two three four five six seven"])
    assert np.allclose(a, b, atol=1e-6)


def test_the_empty_text_and_the_empty_call() -> None:
    embedder = MiniLMEmbedder(cache_size=0)
    (vec,) = embedder.embed_sync([""])
    assert np.isclose(np.linalg.norm(vec), 1.0, atol=1e-5)
    assert embedder.embed_sync([]).shape == (0, 384)


def test_concurrent_calls_get_their_own_vectors() -> None:
    embedder = MiniLMEmbedder(cache_size=0)
    texts = [f"incident {i}: the {['auth', 'billing', 'search'][i % 3]} service" for i in range(24)]
    expected = embedder.embed_sync(texts)
    got: dict[int, np.ndarray] = {}
    start = threading.Barrier(len(texts))

    def call(i: int) -> None:
        start.wait()
        got[i] = embedder.embed_sync([texts[i], texts[(i + 1) % len(texts)]])

    threads = [threading.Thread(target=call, args=(i,)) for i in range(len(texts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for i in range(len(texts)):
        assert np.allclose(got[i], expected[[i, (i + 1) % len(texts)]], atol=1e-5)


def test_calls_made_while_the_model_runs_are_embedded_in_one_batch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    embedder = MiniLMEmbedder(cache_size=0)
    model = embedder._model()  # pyright: ignore[reportPrivateUsage]
    texts = [f"write {i} about the ledger service" for i in range(8)]
    expected = embedder.embed_sync(texts)
    forward = model._forward  # pyright: ignore[reportPrivateUsage]
    batches: list[int] = []
    running, release = threading.Event(), threading.Event()

    def slow_first_forward(batch: list[str], batch_size: int) -> np.ndarray:
        batches.append(len(batch))
        if len(batches) == 1:
            running.set()
            release.wait(10)
        return forward(batch, batch_size)

    monkeypatch.setattr(model, "_forward", slow_first_forward)
    got: dict[int, np.ndarray] = {}
    first = threading.Thread(target=embedder.embed_sync, args=(["the first call"],))
    first.start()
    assert running.wait(10)

    def call(i: int) -> None:
        got.update({i: embedder.embed_sync([texts[i]])[0]})

    callers = [threading.Thread(target=call, args=(i,)) for i in range(len(texts))]
    for caller in callers:
        caller.start()
    for _ in range(1000):  # until all eight wait behind the first run (10 s at most)
        if len(model._pending) == len(texts):  # pyright: ignore[reportPrivateUsage]
            break
        release.wait(0.01)
    release.set()
    for thread in [first, *callers]:
        thread.join(10)
    assert batches == [1, len(texts)]
    assert np.allclose(np.stack([got[i] for i in range(len(texts))]), expected, atol=1e-5)


def test_a_failing_call_raises_to_its_caller_and_the_model_keeps_serving() -> None:
    embedder = MiniLMEmbedder(cache_size=0)
    with pytest.raises(TypeError):
        embedder.embed_sync([123])  # type: ignore[list-item]
    assert embedder.embed_sync(["still here"]).shape == (1, 384)


def test_the_model_is_loaded_once_per_process() -> None:
    assert MiniLMEmbedder()._model() is MiniLMEmbedder(cache_size=0, batch_size=4)._model()  # pyright: ignore[reportPrivateUsage]
    assert MiniLMEmbedder(threads=1)._model() is not MiniLMEmbedder(threads=2)._model()  # pyright: ignore[reportPrivateUsage]


def test_the_shipped_onnx_graph_is_the_one_the_export_script_builds() -> None:
    script = ROOT / "scripts" / "export_minilm_onnx.py"
    done = subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
