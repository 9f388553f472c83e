"""all-MiniLM-L6-v2 run by onnxruntime, with the `tokenizers` tokenizer (no torch).

The model comes from the workspace package `polyg-minilm`: `model.onnx` (written by
`scripts/export_minilm_onnx.py`; BERT's 6 layers with onnxruntime's fused embedding
and attention CPU kernels, then mean pooling over the attention mask and L2
normalisation, the same pipeline as sentence-transformers'
`SentenceTransformer("all-MiniLM-L6-v2")`), whose weights are read from
`model.safetensors` beside it, and `tokenizer.json`.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import numpy as np
import numpy.typing as npt

logger = logging.getLogger(__name__)

_INSTALL = "pip install 'polyg-core[local]' (it brings polyg-minilm, tokenizers and onnxruntime)"
F32 = npt.NDArray[np.float32]


def _model_dir() -> Path:
    try:
        from polyg_minilm import model_dir
    except ImportError as exc:
        raise ImportError(f"the local embedding model is not installed: {_INSTALL}") from exc
    return model_dir()


# A forward pass over at least this many padded tokens is followed by a heap trim: its
# activations (tens of MB for 32 long texts) are freed but stay in the allocator's
# arenas otherwise. Trimming costs 1-10 ms, about 1% of a pass of this size.
_TRIM_AFTER_TOKENS = 2048


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's `malloc_trim`, or None where the C library has none (macOS, musl, Windows)."""
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, TypeError, AttributeError):
        return None


def _release_free_heap() -> None:
    """Give memory that is free inside the C heap back to the system.

    onnxruntime's allocations (weights transposed and repacked at load time, each
    pass's activations) go through malloc. Once freed they stay mapped in glibc's
    arenas, and in the arena of a worker thread (where the server loads the model)
    nothing returns them: ~19 MB after loading, 12-50 MB after a batch.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@dataclass(frozen=True)
class _ModelKey:
    directory: Path
    max_seq_length: int
    threads: int
    spin_us: int


@dataclass
class _Request:
    texts: list[str]
    # Set when the vectors (or the error) are in, or when this caller is to run the next batch.
    wake: threading.Event = field(default_factory=threading.Event)
    leads: bool = False
    vectors: F32 | None = None
    error: BaseException | None = None


class _Model:
    """One loaded session and tokenizer; calls made at the same time share forward passes.

    A call that finds the model idle runs at once in its own thread (no hand-off). Calls
    that arrive while it runs (the event loop hands each `embed` to a worker thread:
    parallel writes, queries) wait in a queue; when the run ends, the first of them
    runs everything queued as one batch, so concurrent single-text calls are embedded
    together instead of queueing for the cores one by one.
    """

    def __init__(self, key: _ModelKey) -> None:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ImportError(f"onnxruntime or tokenizers is not installed: {_INSTALL}") from exc
        start = time.perf_counter()
        tokenizer = Tokenizer.from_file(str(key.directory / "tokenizer.json"))
        # tokenizers' stub leaves enable_truncation's **kwargs untyped.
        tokenizer.enable_truncation(max_length=key.max_seq_length)  # pyright: ignore[reportUnknownMemberType]
        tokenizer.no_padding()  # each chunk is padded to its own longest text below
        options = ort.SessionOptions()
        options.intra_op_num_threads = key.threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Shapes change with every batch (rows and padded length): a memory pattern
        # recorded for one shape does not serve the next.
        options.enable_mem_pattern = False
        # Without the arena, a long batch's buffers go back to the system afterwards
        # (with it, one 32 x 256-token batch kept ~240 MB for the rest of the process).
        options.enable_cpu_mem_arena = False
        # Idle threads spin briefly, then sleep: a short spin saves a wake-up per operator
        # on idle cores (one sentence 3.3 ms instead of 3.8-4.2 at p50), and ends before
        # it takes much from FalkorDB and the server sharing the cores. 0 sleeps at once,
        # which is better on cores other processes keep busy (section 15.1).
        if key.spin_us > 0:
            options.add_session_config_entry("session.intra_op.allow_spinning", "1")
            options.add_session_config_entry("session.intra_op.spin_duration_us", str(key.spin_us))
        else:
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        self._session = ort.InferenceSession(
            str(key.directory / "model.onnx"),
            options,
            providers=["CPUExecutionProvider"],
            # The graph spells out bias + residual + LayerNormalization and bias + Gelu:
            # onnxruntime's fused kernels for them were ~14% slower (export script).
            disabled_optimizers=["SkipLayerNormFusion", "BiasGeluFusion"],
        )
        _release_free_heap()
        self._tokenizer = tokenizer
        self._dimension = int(self._session.get_outputs()[0].shape[1])
        self._lock = threading.Lock()
        self._pending: list[_Request] = []
        self._busy = False
        logger.info(
            "loaded local embedding model from %s in %.2f s",
            key.directory,
            time.perf_counter() - start,
        )

    def embed(self, texts: list[str], batch_size: int) -> F32:
        request = _Request(texts)
        with self._lock:
            self._pending.append(request)
            if not self._busy:
                self._busy = request.leads = True
        if not request.leads:
            request.wake.wait()
        if request.leads:
            self._run_pending(batch_size)
        if request.error is not None:
            raise request.error
        assert request.vectors is not None
        return request.vectors

    def _run_pending(self, batch_size: int) -> None:
        """Embed every queued call in one batch, then hand the model to the next caller."""
        with self._lock:
            batch, self._pending = self._pending, []
        try:
            texts = [text for request in batch for text in request.texts]
            vectors = self._forward(texts, batch_size)
            start = 0
            for request in batch:
                request.vectors = vectors[start : start + len(request.texts)]
                start += len(request.texts)
        except BaseException as exc:
            for request in batch:
                request.error = exc
            raise
        finally:
            with self._lock:
                if self._pending:
                    self._pending[0].leads = True
                    self._pending[0].wake.set()
                else:
                    self._busy = False
            for request in batch:
                request.wake.set()

    def _forward(self, texts: Sequence[str], batch_size: int) -> F32:
        out = np.empty((len(texts), self._dimension), dtype=np.float32)
        ids = [encoding.ids for encoding in self._tokenizer.encode_batch(list(texts))]
        # Sorted by token count, each chunk is padded only to its own longest text: a
        # batch of short names runs at their length, not at the longest sentence's.
        order = sorted(range(len(texts)), key=lambda i: len(ids[i]))
        padded = 0
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            width = len(ids[chunk[-1]])
            tokens = np.zeros((len(chunk), width), dtype=np.int32)  # 0 is [PAD]
            mask = np.zeros((len(chunk), width), dtype=np.int32)
            for row, i in enumerate(chunk):
                tokens[row, : len(ids[i])] = ids[i]
                mask[row, : len(ids[i])] = 1
            (vectors,) = self._session.run(
                ["sentence_embedding"], {"input_ids": tokens, "attention_mask": mask}
            )
            out[chunk] = np.asarray(vectors, dtype=np.float32)
            padded += tokens.size
        if padded >= _TRIM_AFTER_TOKENS:
            _release_free_heap()
        return out


# Loaded once per process and shared by every MiniLMEmbedder with the same settings:
# Memory.open, the CLI and the tests each make an embedder, and a session holds ~70 MB.
_MODELS: dict[_ModelKey, _Model] = {}
_MODELS_LOCK = threading.Lock()


def _load(key: _ModelKey) -> _Model:
    with _MODELS_LOCK:
        model = _MODELS.get(key)
        if model is None:
            model = _MODELS[key] = _Model(key)
        return model


@dataclass
class MiniLMEmbedder:
    """The default embedder, `local/minilm`: 384-dimensional, runs on the CPU.

    The model is loaded on first use, once per process for all embedders with the
    same settings, and run in a worker thread so the event loop stays free; calls
    made at the same time are batched together.

    Args:
        model_dir: a directory with model.onnx, model.safetensors and tokenizer.json
            (default: the one inside polyg-minilm).
        max_seq_length: longer inputs are truncated, as sentence-transformers does (256).
        batch_size: texts per forward pass (a batch is sorted by length first).
        cache_size: vectors of this many recent texts are kept (names and queries repeat a
            lot: every resolve, write and recall embeds them); 0 turns the cache off.
        threads: onnxruntime's threads for one forward pass (default: the cores, at most 4).
        spin_us: how long an idle onnxruntime thread spins before it sleeps, in
            microseconds (onnxruntime 1.26 or later; older ones spin for their default
            time). Default 200: faster on idle cores; 0 sleeps at once, which is better
            on cores other processes keep busy (docs/benchmarks.md, section 15.1).
    """

    model_dir: Path | None = None
    max_seq_length: int = 256
    batch_size: int = 32
    cache_size: int = 8192
    threads: int = field(default_factory=lambda: min(4, os.cpu_count() or 1))
    spin_us: int = 200
    _cache: OrderedDict[str, F32] = field(
        default_factory=OrderedDict[str, F32], init=False, repr=False
    )
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    @property
    def model_name(self) -> str:
        return "local/minilm"

    @property
    def dimension(self) -> int:
        return 384

    def _model(self) -> _Model:
        directory = self.model_dir or _model_dir()
        return _load(_ModelKey(directory, self.max_seq_length, self.threads, self.spin_us))

    def load(self) -> None:
        """Load the model now, in the calling thread, instead of on the first `embed`.

        Raises:
            ImportError: onnxruntime or tokenizers is not installed.
        """
        self._model()

    def embed_sync(self, texts: Sequence[str]) -> F32:
        """Embed in the calling thread (it waits for the model's runner); shape (len(texts), 384)."""
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
            fresh = self._model().embed([texts[i] for i in missing], self.batch_size)
            out[missing] = fresh
            if self.cache_size > 0:
                with self._lock:
                    for i, vec in zip(missing, fresh, strict=True):
                        self._cache[texts[i]] = vec
                    while len(self._cache) > self.cache_size:
                        self._cache.popitem(last=False)
        return out

    async def embed(self, texts: Sequence[str]) -> F32:
        """Embed `texts` off the event loop; shape (len(texts), 384), L2-normalised."""
        items = list(texts)
        return await anyio.to_thread.run_sync(self.embed_sync, items)
