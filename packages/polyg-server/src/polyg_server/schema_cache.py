"""The tools' JSON schemas, kept on disk between starts.

Generating the input and output schemas of every tool is about 0.16 s of CPU, a sixth
of what `polyg-mcp` does before it can list its tools (docs/benchmarks.md, section 16).
A start stores them in one file; the next start reads them back when nothing that can
change them has changed: the file is keyed by the pydantic version and the source of
every polyg module loaded when the schemas are made (a model can only depend on modules
that are loaded). Any other start generates them again, so a stale file costs time,
never a wrong schema.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, cast

import pydantic
import pydantic_core
from pydantic import BaseModel

logger = logging.getLogger(__name__)

_FORMAT = 1


def source_key() -> str:
    """A digest of what the tool schemas depend on: pydantic, Python and the source of
    every loaded polyg module."""
    digest = hashlib.sha256(
        f"{_FORMAT}\n{pydantic.VERSION}\n{pydantic_core.__version__}\n"
        f"{sys.version_info[:2]}\n".encode()
    )
    for name in sorted(m for m in list(sys.modules) if m.startswith("polyg_")):
        path = getattr(sys.modules[name], "__file__", None)
        digest.update(f"{name}\n".encode())
        if path:
            try:
                digest.update(Path(path).read_bytes())
            except OSError:
                digest.update(b"?")
    return digest.hexdigest()


class SchemaCache:
    """JSON schemas of pydantic models by (model, mode), read from and saved to `path`.

    Args:
        path: the cache file (None: nothing is read or saved, schemas are generated).
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.key = source_key() if path is not None else ""
        self._schemas: dict[str, dict[str, Any]] = {}
        self._changed = False
        if path is not None:
            self._schemas = self._read(path)

    def _read(self, path: Path) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        stored = cast(dict[str, Any], data)
        if stored.get("key") != self.key:
            return {}
        schemas = stored.get("schemas")
        return cast(dict[str, dict[str, Any]], schemas) if isinstance(schemas, dict) else {}

    def schema(self, model: type[BaseModel], mode: str) -> dict[str, Any]:
        """The model's JSON schema (by alias) in `mode` ("validation" or "serialization");
        shared with other callers asking for the same model: not to be changed."""
        name = f"{model.__module__}.{model.__qualname__}:{mode}"
        found = self._schemas.get(name)
        if found is None:
            found = model.model_json_schema(by_alias=True, mode=mode)  # type: ignore[arg-type]
            if self.path is not None:
                self._schemas[name] = found
                self._changed = True
        return found

    def save(self) -> None:
        """Write the schemas when some were generated (best effort: a read-only home or a
        full disk only means the next start generates them again)."""
        if self.path is None or not self._changed:
            return
        text = json.dumps({"key": self.key, "schemas": self._schemas}, separators=(",", ":"))
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".tool-schemas-")
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(text)
            os.replace(tmp, self.path)
            self._changed = False
        except OSError as exc:
            logger.debug("tool schemas not cached at %s: %s", self.path, exc)
