"""The shipped MiniLM graph under two inference engines: onnxruntime (what polyg runs) and OpenVINO.

    uv run --with openvino python scripts/bench_embed_engines.py
    uv run --with openvino python scripts/bench_embed_engines.py --json out.json

OpenVINO is not a dependency of polyg; this script measures what moving to it would give.
Each engine runs in a process of its own (so its RSS is its own) on the same generated
texts as `bench_embed.py` and reports: import + load + first embedding (s), RSS after it
(MB), one sentence p50/p95 (ms), batches of 512 sentences and names per second, and the
smallest cosine to onnxruntime's vectors for the same texts (the parity test asks
>= 0.9999 against the reference vectors). OpenVINO runs at float32 and with bfloat16
arithmetic (`INFERENCE_PRECISION_HINT`; on CPUs without bfloat16 instructions it falls
back to float32). Not a test: numbers go to docs/benchmarks.md, section 15.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_embed import names, rss_mb, sentences

ENGINES = ("onnxruntime", "openvino-f32", "openvino-bf16")
BATCH = 64


def model_dir() -> Path:
    from polyg_core.providers.embeddings.local import _model_dir  # pyright: ignore[reportPrivateUsage]

    return _model_dir()


def _runner(engine: str, threads: int) -> Any:
    """A function (token ids, mask) -> vectors for `engine` on the shipped model."""
    from polyg_core.providers.embeddings.local import MiniLMEmbedder

    if engine == "onnxruntime":
        # The embedder's own session, with polyg's options (threads, spin, optimizers).
        session = MiniLMEmbedder(cache_size=0, threads=threads)._model()._session  # pyright: ignore[reportPrivateUsage]

        def run_ort(ids: Any, mask: Any) -> Any:
            return session.run(["sentence_embedding"], {"input_ids": ids, "attention_mask": mask})[
                0
            ]

        return run_ort
    import openvino as ov  # pyright: ignore[reportMissingImports]

    precision = engine.rsplit("-", 1)[1]
    compiled = ov.Core().compile_model(
        str(model_dir() / "model.onnx"),
        "CPU",
        {
            "INFERENCE_NUM_THREADS": threads,
            "INFERENCE_PRECISION_HINT": precision,
            "PERFORMANCE_HINT": "LATENCY",
        },
    )
    request = compiled.create_infer_request()

    def run_ov(ids: Any, mask: Any) -> Any:
        return request.infer({"input_ids": ids, "attention_mask": mask})[0]

    return run_ov


def _embed_all(run: Any, tokenizer: Any, texts: list[str]) -> Any:
    import numpy as np

    ids = [e.ids for e in tokenizer.encode_batch(texts)]
    order = sorted(range(len(texts)), key=lambda i: len(ids[i]))
    out = np.zeros((len(texts), 384), dtype=np.float32)
    for start in range(0, len(order), BATCH):
        chunk = order[start : start + BATCH]
        width = len(ids[chunk[-1]])
        tokens = np.zeros((len(chunk), width), dtype=np.int32)
        mask = np.zeros((len(chunk), width), dtype=np.int32)
        for row, i in enumerate(chunk):
            tokens[row, : len(ids[i])] = ids[i]
            mask[row, : len(ids[i])] = 1
        out[chunk] = run(tokens, mask)
    return out


def measure(engine: str, threads: int, reference: str | None) -> dict[str, Any]:
    """One engine, in this process."""
    import numpy as np
    from tokenizers import Tokenizer

    start = time.perf_counter()
    tokenizer = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=256)
    tokenizer.no_padding()
    run = _runner(engine, threads)
    one = np.array([tokenizer.encode(sentences(1, random.Random(3))[0]).ids], dtype=np.int32)
    run(one, np.ones_like(one))
    result: dict[str, Any] = {"engine": engine, "load_s": round(time.perf_counter() - start, 3)}
    result["rss_mb"] = round(rss_mb(), 1)
    latencies: list[float] = []
    for _ in range(300):
        t0 = time.perf_counter()
        run(one, np.ones_like(one))
        latencies.append((time.perf_counter() - t0) * 1000)
    latencies.sort()
    result["one_p50_ms"] = round(statistics.median(latencies), 2)
    result["one_p95_ms"] = round(latencies[int(0.95 * len(latencies))], 2)
    texts = {"sentences": sentences(512, random.Random(7)), "names": names(512, random.Random(7))}
    vectors: dict[str, Any] = {}
    for kind, items in texts.items():
        vectors[kind] = _embed_all(run, tokenizer, items)
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            _embed_all(run, tokenizer, items)
            best = min(best, time.perf_counter() - t0)
        result[f"{kind}_per_s"] = round(len(items) / best)
    if reference is not None:
        ref = np.load(reference)
        for kind, got in vectors.items():
            want = ref[kind]
            cos = np.sum(got * want, axis=1) / (
                np.linalg.norm(got, axis=1) * np.linalg.norm(want, axis=1)
            )
            result[f"{kind}_min_cosine"] = round(float(cos.min()), 6)
    else:
        out = Path(tempfile.gettempdir()) / f"polyg-engines-reference-{threads}.npz"
        np.savez(out, **vectors)
        result["reference"] = str(out)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--one", choices=ENGINES, help=argparse.SUPPRESS)
    parser.add_argument("--reference", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, args.threads, args.reference)))
        return 0
    rows: list[dict[str, Any]] = []
    reference: str | None = None
    for engine in ENGINES:
        cmd = [sys.executable, __file__, "--one", engine, "--threads", str(args.threads)]
        if reference is not None:
            cmd += ["--reference", reference]
        done = subprocess.run(cmd, check=True, capture_output=True, text=True)
        row = json.loads(done.stdout.strip().splitlines()[-1])
        reference = reference or row.pop("reference", None)
        rows.append(row)
        print(json.dumps(row))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
