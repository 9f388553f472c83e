"""Embedding providers: the local MiniLM model (default) or any litellm embedding model."""

from __future__ import annotations

from polyg_core.providers.embeddings.base import Embedder

__all__ = ["Embedder", "make_embedder"]


def make_embedder(model: str = "local/minilm", *, api_base: str | None = None) -> Embedder:
    """The embedder for an `EMBEDDING_MODEL` value.

    `local/minilm` (or `local`) is all-MiniLM-L6-v2 run in-process; anything else is
    handed to litellm (e.g. `openai/text-embedding-3-small`, `ollama/nomic-embed-text`).

    Raises:
        ImportError: the extra that the model needs is not installed (the message has
            the install line).
    """
    if model in ("local/minilm", "local", "local/all-MiniLM-L6-v2"):
        from polyg_core.providers.embeddings.local import MiniLMEmbedder

        return MiniLMEmbedder()
    from polyg_core.providers.embeddings.litellm import (  # pyright: ignore[reportMissingImports]
        LiteLLMEmbedder,
    )

    return LiteLLMEmbedder(model, api_base=api_base)  # pyright: ignore[reportUnknownVariableType]
