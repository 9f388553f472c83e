"""The all-MiniLM-L6-v2 model's files, shipped as package data (no code runs the model here)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["model_dir"]


def model_dir() -> Path:
    """The directory holding config.json, model.safetensors, model.onnx and tokenizer.json."""
    return Path(__file__).resolve().parent / "model"
