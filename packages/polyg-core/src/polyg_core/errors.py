"""polyg-core's errors: one base class, subclasses that carry what a caller needs to recover."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar


class PolygError(Exception):
    """Base of every error polyg-core raises on purpose.

    The message always says what was wrong and how to fix it.
    """


class InvalidInput(PolygError, ValueError):
    """The caller gave a value polyg cannot use."""


class InvalidNamespace(InvalidInput):
    """A namespace (graph) name outside `polyg_shared.types.GRAPH_NAME_PATTERN`."""


@dataclass(frozen=True)
class Candidate:
    """A node a name might refer to, with how similar it is (1.0 = identical)."""

    uuid: str
    name: str
    label: str
    similarity: float


class NodeNotFound(PolygError, LookupError):
    """No node matches the given name or id; `candidates` are the closest names."""

    def __init__(self, kind: str, name: str, candidates: Sequence[Candidate] = ()) -> None:
        self.kind = kind
        self.name = name
        self.candidates = list(candidates)
        hint = (
            " Closest: "
            + ", ".join(f"{c.name!r} ({c.similarity:.2f})" for c in self.candidates[:5])
            + ". Use one of these names or its uuid."
            if self.candidates
            else f" Create it first, or list existing {kind} nodes to find the right name."
        )
        super().__init__(f"No {kind} named {name!r}.{hint}")


class AmbiguousName(PolygError, LookupError):
    """Several nodes match a name about equally well; the caller must choose one."""

    def __init__(self, kind: str, name: str, candidates: Sequence[Candidate]) -> None:
        self.kind = kind
        self.name = name
        self.candidates = list(candidates)
        listed = ", ".join(
            f"{c.name!r} (uuid {c.uuid}, {c.similarity:.2f})" for c in self.candidates
        )
        super().__init__(
            f"{name!r} could mean several {kind} nodes: {listed}. "
            "Call again with the exact name or the uuid of the one you mean."
        )


class StorageError(PolygError):
    """FalkorDB refused or failed a query."""


class StorageUnavailable(StorageError, ConnectionError):
    """FalkorDB cannot be reached."""


class StorageBusy(StorageUnavailable):
    """Every connection to FalkorDB stayed busy for the whole wait (overload, not an outage)."""


class QueryTimeout(StorageError, TimeoutError):
    """A query ran longer than the configured per-query timeout."""


class ExportError(PolygError):
    """A stored node cannot be written as a record; the export stops instead of leaving
    it out."""


class EmbeddingMismatch(PolygError):
    """The namespace was built with another embedding model or dimension."""


class EmbeddedServerError(PolygError):
    """The embedded FalkorDB could not be started or reached."""


class ProviderError(PolygError):
    """An LLM or embedding provider failed after its retries."""


class DimensionUnknown(ProviderError):
    """An embedding model's vector length is not known before its first embedding
    (`providers.embeddings.base.dimension_of` learns it)."""


Choice = TypeVar("Choice", bound=StrEnum)


def check_choice(kind: type[Choice], value: str, what: str) -> Choice:
    """`value` as one of `kind`'s members (a memory category, a node type...).

    Raises:
        InvalidInput: any other value; the message names the allowed ones.
    """
    try:
        return kind(value)
    except ValueError as exc:
        allowed = ", ".join(m.value for m in kind)
        raise InvalidInput(f"unknown {what} {value!r}; use one of {allowed}") from exc
