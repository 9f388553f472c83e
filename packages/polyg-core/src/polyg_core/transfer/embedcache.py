"""An embedder that computes a batch's vectors in one call before the records are written.

The graph classes embed one text per write; during an import the writer first
`prefetch`es every text a batch will need (names, descriptions, facts) in
batched calls, and the graphs' single-text calls are then answered from memory.
Texts not prefetched fall through to the wrapped embedder.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from polyg_core.providers.embeddings.base import Embedder

PREFETCH_CHUNK = 256


@dataclass
class PrefetchEmbedder:
    """Wraps an embedder with a per-batch cache filled by `prefetch`.

    Args:
        inner: the embedder that computes vectors.
    """

    inner: Embedder
    _cache: dict[str, npt.NDArray[np.float32]] = field(
        default_factory=dict[str, npt.NDArray[np.float32]], repr=False
    )

    @property
    def model_name(self) -> str:
        """The wrapped model's name."""
        return self.inner.model_name

    @property
    def dimension(self) -> int:
        """The wrapped model's dimension."""
        return self.inner.dimension

    async def prefetch(self, texts: Sequence[str]) -> None:
        """Embed the texts not cached yet, `PREFETCH_CHUNK` per call."""
        missing = [t for t in dict.fromkeys(texts) if t and t not in self._cache]
        for start in range(0, len(missing), PREFETCH_CHUNK):
            chunk = missing[start : start + PREFETCH_CHUNK]
            vectors = await self.inner.embed(chunk)
            for text, vec in zip(chunk, vectors, strict=True):
                self._cache[text] = vec

    def retain(self, texts: Sequence[str]) -> None:
        """Forget every cached vector but those of `texts` (the next batch's, prefetched
        while the current one was written)."""
        keep = set(texts)
        self._cache = {t: v for t, v in self._cache.items() if t in keep}

    def clear(self) -> None:
        """Forget the cached vectors (after each batch, so memory stays bounded)."""
        self._cache.clear()

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Vectors of `texts`, from the cache where prefetched."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            await self.prefetch(missing)
        if not texts:
            return await self.inner.embed([])
        return np.stack([self._cache[t] for t in texts]).astype(np.float32, copy=False)
