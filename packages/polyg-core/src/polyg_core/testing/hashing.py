"""An embedder without a model: deterministic unit vectors from a hash of the text.

For tests and benchmarks that measure what surrounds the model (a transfer, a write, a
call's overhead): random unit vectors cost FalkorDB's vector index what real
embeddings cost it (identical vectors would be its worst case, every distance equal),
while their similarities mean nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["HashEmbedder"]


class HashEmbedder:
    """A unit vector per text, seeded by the text's SHA-256 (the same in every process)."""

    dimension = 384

    def __init__(self, model_name: str = "test-hash-384") -> None:
        self.model_name = model_name

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
            v = np.random.default_rng(seed).standard_normal(self.dimension)
            out[i] = v / np.linalg.norm(v)
        return out
