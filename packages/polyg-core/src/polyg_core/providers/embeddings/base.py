"""The embedding provider protocol."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from polyg_core.errors import DimensionUnknown


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised vectors, in batches.

    `model_name` and `dimension` are recorded in each namespace's metadata at its first
    vector, so a namespace is never searched with vectors from another model.
    """

    @property
    def model_name(self) -> str: ...

    @property
    def dimension(self) -> int:
        """The vector length.

        Raises:
            DimensionUnknown: a remote model's length is not known before its first
                embedding; `dimension_of` learns it.
        """
        ...

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed `texts`; returns an array of shape (len(texts), dimension)."""
        ...


PROBE_TEXT = "dimension probe"


async def dimension_of(embedder: Embedder) -> int:
    """The embedder's vector length, learned from one embedding when the model has not
    made one yet (a remote model whose dimension was not configured). The embedder
    keeps what it learned, so this asks a model at most once per process.

    Raises:
        ProviderError: the model cannot be reached.
    """
    try:
        return embedder.dimension
    except DimensionUnknown:
        return int((await embedder.embed([PROBE_TEXT])).shape[1])
