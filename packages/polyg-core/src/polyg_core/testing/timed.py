"""An embedder wrapper for benchmarks: how often the model was called, on how many texts,
and the wall-clock seconds inside it (on the thread the model runs on)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from polyg_core.providers.embeddings.base import Embedder

__all__ = ["TimedEmbedder"]


@dataclass
class TimedEmbedder:
    """Wraps an embedder, adding up its calls, the texts they embedded and their seconds."""

    inner: Embedder
    calls: int = 0
    texts: int = 0
    seconds: float = 0.0

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        t0 = time.perf_counter()
        try:
            return await self.inner.embed(texts)
        finally:
            self.calls += 1
            self.texts += len(texts)
            self.seconds += time.perf_counter() - t0
