"""Embeddings from any litellm embedding model (OpenAI, Ollama, Cohere, ...).

The vector dimension of a remote model is usually not known in advance: the
embedder learns it from its first embedding and keeps it. The graphs ask for it
through `dimension_of` (providers/embeddings/base.py), which embeds one short
text when nothing was embedded yet, so a new process writes and reads a
namespace from its first call. Pass `dimension=` to check the model against a
known length instead.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from types import ModuleType
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from polyg_core.errors import DimensionUnknown, ProviderError
from polyg_core.providers.litellm_common import (
    RetryPolicy,
    call_with_retries,
    config_hint,
    import_litellm,
    quiet_litellm,
)

__all__ = ["LiteLLMEmbedder"]

logger = logging.getLogger(__name__)


class _NoSDKRetries(int):
    """Zero retries that litellm's embedding path does not replace by its default.

    litellm's OpenAI embedding handler computes `max_retries or DEFAULT_MAX_RETRIES`,
    so a plain 0 becomes 2 hidden SDK retries under ours. This zero is truthy.
    """

    def __bool__(self) -> bool:
        return True


class LiteLLMEmbedder:
    """An `Embedder` that calls `litellm.aembedding` in batches.

    Vectors are L2-normalised here, whatever the provider returns.

    Args:
        model: litellm embedding model, e.g. `openai/text-embedding-3-small`,
            `ollama/nomic-embed-text`.
        dimension: The vector length, if known; otherwise learned from the first
            call (see `probe`). A model that returns another length is an error.
        api_base: Base URL of an OpenAI-compatible server or Ollama.
        api_key: API key; when None litellm reads the provider's usual variable.
        batch_size: Texts per request.
        max_retries: Retries of transient errors after the first attempt.
        timeout_s: Per-request timeout in seconds.
        backoff_base_s: First backoff between retries (doubles each time).
        backoff_max_s: Longest wait between retries, including `Retry-After`.
    """

    def __init__(
        self,
        model: str,
        *,
        dimension: int | None = None,
        api_base: str | None = None,
        api_key: str | None = None,
        batch_size: int = 64,
        max_retries: int = 3,
        timeout_s: float = 30.0,
        backoff_base_s: float = 0.5,
        backoff_max_s: float = 20.0,
    ) -> None:
        if not model:
            raise ValueError(
                "LiteLLMEmbedder needs a model name such as 'openai/text-embedding-3-small'."
            )
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}.")
        if dimension is not None and dimension < 1:
            raise ValueError(f"dimension must be positive, got {dimension}.")
        self.model = model
        self.api_base = api_base
        self.api_key = api_key
        self.batch_size = batch_size
        self.max_retries = max_retries
        self.timeout_s = timeout_s
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        self._dimension: int | None = dimension
        self._litellm: ModuleType = import_litellm()
        quiet_litellm(self._litellm)

    def __repr__(self) -> str:
        return f"LiteLLMEmbedder({self.model!r}, dimension={self._dimension}, api_base={self.api_base!r})"

    @property
    def model_name(self) -> str:
        return self.model

    @property
    def dimension(self) -> int:
        """The vector length.

        Raises:
            DimensionUnknown: nothing was embedded yet and no `dimension=` was given
                (`dimension_of` or `await probe()` learns it).
        """
        if self._dimension is None:
            raise DimensionUnknown(
                f"The vector dimension of embedding model {self.model!r} is not known yet. "
                "Pass dimension= when creating the embedder, or call `await embedder.probe()` "
                "before creating a namespace's vector index."
            )
        return self._dimension

    async def probe(self) -> int:
        """Embed one short string to learn (or check) the vector dimension.

        Returns:
            The dimension.

        Raises:
            ProviderError: when the model cannot be reached or returns another
                dimension than the one given.
        """
        await self.embed(["dimension probe"])
        return self.dimension

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed `texts`; returns an array of shape (len(texts), dimension), rows L2-normalised.

        Raises:
            ProviderError: after retries, or when the reply is unusable.
        """
        if not texts:
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        parts = [
            await self._embed_batch(list(texts[start : start + self.batch_size]))
            for start in range(0, len(texts), self.batch_size)
        ]
        vectors = np.vstack(parts)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return (vectors / norms).astype(np.float32)

    async def _embed_batch(self, batch: list[str]) -> npt.NDArray[np.float32]:
        litellm = self._litellm
        what = f"Embedding call to {self.model!r}"
        hint = config_hint(self.model, self.api_base, setting="EMBEDDING_MODEL")
        kwargs: dict[str, Any] = {
            "model": self.model,
            # Some servers reject empty strings; a space embeds to "nothing" as well.
            "input": [text if text.strip() else " " for text in batch],
            "timeout": self.timeout_s,
            "num_retries": 0,
            "max_retries": _NoSDKRetries(0),
        }
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.api_key:
            kwargs["api_key"] = self.api_key
        policy = RetryPolicy(
            max_retries=self.max_retries,
            timeout_s=self.timeout_s,
            backoff_base_s=self.backoff_base_s,
            backoff_max_s=self.backoff_max_s,
        )
        try:
            response = await call_with_retries(
                litellm,
                functools.partial(litellm.aembedding, **kwargs),
                policy=policy,
                what=what,
                hint=hint,
            )
        except ProviderError:
            raise
        except Exception as exc:
            raise ProviderError(f"{what} was refused: {exc}. {hint}") from exc
        return self._vectors(response, len(batch))

    def _vectors(self, response: Any, expected: int) -> npt.NDArray[np.float32]:
        items: list[Any] = list(getattr(response, "data", None) or [])
        if len(items) != expected:
            raise ProviderError(
                f"Embedding model {self.model!r} returned {len(items)} vectors for "
                f"{expected} texts; check that EMBEDDING_MODEL names an embedding model."
            )
        rows: list[tuple[int, list[float]]] = []
        for position, item in enumerate(items):
            if isinstance(item, dict):
                index = cast(dict[str, Any], item).get("index", position)
                vector = cast(dict[str, Any], item).get("embedding")
            else:
                index = getattr(item, "index", position)
                vector = getattr(item, "embedding", None)
            if not isinstance(vector, list):
                raise ProviderError(
                    f"Embedding model {self.model!r} returned no float vector "
                    f"(got {type(vector).__name__})."
                )
            rows.append((int(index), cast(list[float], vector)))
        rows.sort(key=lambda row: row[0])
        matrix = np.asarray([vector for _, vector in rows], dtype=np.float32)
        if matrix.ndim != 2:
            raise ProviderError(
                f"Embedding model {self.model!r} returned vectors of different lengths."
            )
        found = int(matrix.shape[1])
        if self._dimension is None:
            self._dimension = found
            logger.info("embedding model %s has dimension %d", self.model, found)
        elif found != self._dimension:
            raise ProviderError(
                f"Embedding model {self.model!r} returned {found}-dimensional vectors but "
                f"dimension={self._dimension} was expected. Fix the dimension setting, or use "
                "another namespace for this model."
            )
        return matrix
