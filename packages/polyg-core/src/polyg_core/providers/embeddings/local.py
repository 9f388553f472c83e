"""all-MiniLM-L6-v2 run with numpy, `tokenizers` and `safetensors` (no torch).

The weights and tokenizer come from the workspace package `polyg-minilm`. The
forward pass is BERT's (6 layers, 12 heads, GELU), followed by mean pooling
over the attention mask and L2 normalisation — the same pipeline as
sentence-transformers' `SentenceTransformer("all-MiniLM-L6-v2")`.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import numpy.typing as npt

logger = logging.getLogger(__name__)

_INSTALL = "pip install 'polyg-core[local]' (it brings polyg-minilm, tokenizers and safetensors)"
F32 = npt.NDArray[np.float32]


def _erf(x: F32) -> F32:
    # numpy has no vectorised erf; scipy's is exact enough and already a dependency.
    from scipy.special import erf

    return erf(x).astype(np.float32)


@dataclass(frozen=True)
class _Layer:
    q_w: F32
    q_b: F32
    k_w: F32
    k_b: F32
    v_w: F32
    v_b: F32
    o_w: F32
    o_b: F32
    ln1_w: F32
    ln1_b: F32
    i_w: F32
    i_b: F32
    out_w: F32
    out_b: F32
    ln2_w: F32
    ln2_b: F32


@dataclass(frozen=True)
class _Weights:
    word: F32
    position: F32
    token_type: F32
    ln_w: F32
    ln_b: F32
    layers: list[_Layer]
    heads: int
    eps: float


def _layer_norm(x: F32, w: F32, b: F32, eps: float) -> F32:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return ((x - mean) / np.sqrt(var + eps)) * w + b


def _load_weights(model_dir: Path) -> _Weights:
    import json

    from safetensors.numpy import load_file

    config = json.loads((model_dir / "config.json").read_text())
    w: dict[str, Any] = load_file(str(model_dir / "model.safetensors"))

    def t(name: str) -> F32:
        return np.ascontiguousarray(w[name].astype(np.float32))

    layers: list[_Layer] = []
    for i in range(int(config["num_hidden_layers"])):
        p = f"encoder.layer.{i}."
        layers.append(
            _Layer(
                q_w=t(p + "attention.self.query.weight").T.copy(),
                q_b=t(p + "attention.self.query.bias"),
                k_w=t(p + "attention.self.key.weight").T.copy(),
                k_b=t(p + "attention.self.key.bias"),
                v_w=t(p + "attention.self.value.weight").T.copy(),
                v_b=t(p + "attention.self.value.bias"),
                o_w=t(p + "attention.output.dense.weight").T.copy(),
                o_b=t(p + "attention.output.dense.bias"),
                ln1_w=t(p + "attention.output.LayerNorm.weight"),
                ln1_b=t(p + "attention.output.LayerNorm.bias"),
                i_w=t(p + "intermediate.dense.weight").T.copy(),
                i_b=t(p + "intermediate.dense.bias"),
                out_w=t(p + "output.dense.weight").T.copy(),
                out_b=t(p + "output.dense.bias"),
                ln2_w=t(p + "output.LayerNorm.weight"),
                ln2_b=t(p + "output.LayerNorm.bias"),
            )
        )
    return _Weights(
        word=t("embeddings.word_embeddings.weight"),
        position=t("embeddings.position_embeddings.weight"),
        token_type=t("embeddings.token_type_embeddings.weight"),
        ln_w=t("embeddings.LayerNorm.weight"),
        ln_b=t("embeddings.LayerNorm.bias"),
        layers=layers,
        heads=int(config["num_attention_heads"]),
        eps=float(config["layer_norm_eps"]),
    )


def _forward(wt: _Weights, ids: npt.NDArray[np.int64], mask: npt.NDArray[np.int64]) -> F32:
    batch, seq = ids.shape
    x = wt.word[ids] + wt.position[np.arange(seq)][None, :, :] + wt.token_type[0][None, None, :]
    x = _layer_norm(x, wt.ln_w, wt.ln_b, wt.eps)
    hidden = x.shape[-1]
    head_dim = hidden // wt.heads
    scale = np.float32(1.0 / math.sqrt(head_dim))
    bias = ((1.0 - mask[:, None, None, :].astype(np.float32)) * np.float32(-1e9)).astype(np.float32)
    for ly in wt.layers:

        def split(t: F32) -> F32:
            return t.reshape(batch, seq, wt.heads, head_dim).transpose(0, 2, 1, 3)

        q = split(x @ ly.q_w + ly.q_b)
        k = split(x @ ly.k_w + ly.k_b)
        v = split(x @ ly.v_w + ly.v_b)
        scores = (q @ k.transpose(0, 1, 3, 2)) * scale + bias
        scores = scores - scores.max(axis=-1, keepdims=True)
        probs = np.exp(scores)
        probs /= probs.sum(axis=-1, keepdims=True)
        ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, seq, hidden)
        x = _layer_norm(ctx @ ly.o_w + ly.o_b + x, ly.ln1_w, ly.ln1_b, wt.eps)
        inter = x @ ly.i_w + ly.i_b
        inter = (
            inter * np.float32(0.5) * (np.float32(1.0) + _erf(inter / np.float32(math.sqrt(2.0))))
        ).astype(np.float32)
        x = _layer_norm(inter @ ly.out_w + ly.out_b + x, ly.ln2_w, ly.ln2_b, wt.eps)
    m = mask[:, :, None].astype(np.float32)
    pooled = (x * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)


def _single_blas_thread() -> contextlib.AbstractContextManager[object]:
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # without it BLAS keeps its own default
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def _model_dir() -> Path:
    try:
        from polyg_minilm import model_dir
    except ImportError as exc:
        raise ImportError(f"the local embedding model is not installed: {_INSTALL}") from exc
    return model_dir()


@dataclass
class MiniLMEmbedder:
    """The default embedder, `local/minilm`: 384-dimensional, runs on the CPU.

    The model is loaded on first use (once per process per instance) and run in a
    worker thread so the event loop stays free.

    Args:
        model_dir: a directory with config.json, model.safetensors and tokenizer.json
            (default: the one inside polyg-minilm).
        max_seq_length: longer inputs are truncated, as sentence-transformers does (256).
        batch_size: texts per forward pass.
        cache_size: vectors of this many recent texts are kept (names and queries repeat a
            lot: every resolve, write and recall embeds them); 0 turns the cache off.
        threads: forward passes run at once for a large call (a bulk import's batch);
            small calls (queries, single writes) always use one.
    """

    model_dir: Path | None = None
    max_seq_length: int = 256
    batch_size: int = 32
    cache_size: int = 8192
    threads: int = field(default_factory=lambda: min(4, os.cpu_count() or 1))
    _cache: OrderedDict[str, F32] = field(default_factory=OrderedDict, init=False, repr=False)
    _weights: _Weights | None = field(default=None, init=False, repr=False)
    _tokenizer: Any = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    @property
    def model_name(self) -> str:
        return "local/minilm"

    @property
    def dimension(self) -> int:
        return 384

    def _load(self) -> tuple[_Weights, Any]:
        with self._lock:
            if self._weights is None or self._tokenizer is None:
                try:
                    from tokenizers import Tokenizer
                except ImportError as exc:
                    raise ImportError(f"tokenizers is not installed: {_INSTALL}") from exc
                directory = self.model_dir or _model_dir()
                tok = Tokenizer.from_file(str(directory / "tokenizer.json"))
                tok.enable_truncation(max_length=self.max_seq_length)
                tok.enable_padding(pad_id=0, pad_token="[PAD]")
                self._weights = _load_weights(directory)
                self._tokenizer = tok
                logger.info("loaded local embedding model from %s", directory)
            return self._weights, self._tokenizer

    def embed_sync(self, texts: Sequence[str]) -> F32:
        """Embed in the calling thread; shape (len(texts), 384)."""
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        missing: list[int] = []
        with self._lock:
            for i, text in enumerate(texts):
                hit = self._cache.get(text)
                if hit is None:
                    missing.append(i)
                else:
                    self._cache.move_to_end(text)
                    out[i] = hit
        if missing:
            fresh = self._compute([texts[i] for i in missing])
            out[missing] = fresh
            if self.cache_size > 0:
                with self._lock:
                    for i, vec in zip(missing, fresh, strict=True):
                        self._cache[texts[i]] = vec
                    while len(self._cache) > self.cache_size:
                        self._cache.popitem(last=False)
        return out

    def _compute(self, texts: Sequence[str]) -> F32:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        weights, tok = self._load()
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        # Sorting by length keeps padding (and so wasted work) small within a batch.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        # One BLAS thread: these matrices are small, and several embedding calls run in
        # worker threads at once; letting each spawn a BLAS thread per core made them
        # fight over the cores (ten times slower under load).
        chunks = [
            order[start : start + self.batch_size]
            for start in range(0, len(order), self.batch_size)
        ]

        def run(chunk: list[int]) -> None:
            encs = tok.encode_batch([texts[i] for i in chunk])
            ids = np.array([e.ids for e in encs], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encs], dtype=np.int64)
            out[chunk] = _forward(weights, ids, mask)

        with _single_blas_thread():
            # A bulk call (an import batch) spreads its chunks over the cores; numpy
            # releases the GIL in the matrix products, so threads run in parallel.
            if self.threads > 1 and len(chunks) >= 2 * self.threads:
                with ThreadPoolExecutor(self.threads, thread_name_prefix="minilm") as pool:
                    list(pool.map(run, chunks))
            else:
                for chunk in chunks:
                    run(chunk)
        return out

    async def embed(self, texts: Sequence[str]) -> F32:
        """Embed `texts` off the event loop; shape (len(texts), 384), L2-normalised."""
        items = list(texts)
        return await anyio.to_thread.run_sync(self.embed_sync, items)
