"""The embedding provider protocol."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised vectors, in batches.

    `model_name` and `dimension` are recorded in each namespace's metadata, so a
    namespace is never searched with vectors from another model.
    """

    @property
    def model_name(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed `texts`; returns an array of shape (len(texts), dimension)."""
        ...
