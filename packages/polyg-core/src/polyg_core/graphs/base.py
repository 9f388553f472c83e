"""Write helpers shared by the graph modules: schema preparation, embeddings, time, validation."""

from __future__ import annotations

import time
import uuid as uuidlib
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar

from polyg_shared.timeutil import from_epoch_ms, iso, parse_timestamp, to_epoch_ms

from polyg_core.errors import AmbiguousName, InvalidInput, NodeNotFound
from polyg_core.providers.embeddings.base import Embedder, dimension_of
from polyg_core.storage.store import FalkorStore
from polyg_core.text.normalize import normalize_name

MAX_NAME = 256
ItemError = InvalidInput | NodeNotFound | AmbiguousName
"""What a batch writer answers, in an item's place, for an item it did not write."""
MAX_TEXT = 4_096
MAX_PROPERTIES = 64
MAX_FETCH = 1000


async def prepare(
    store: FalkorStore, namespace: str, embedder: Embedder, *, meta_present: bool | None = None
) -> None:
    """Make a namespace ready for writes: indexes, metadata node and vector indexes.

    `meta_present`: what a read of the caller's just found (`FalkorStore.ensure_schema`).

    Raises:
        EmbeddingMismatch: the namespace was built with another embedding model or dimension.
        ProviderError: the model's dimension had to be learned and the model failed.
    """
    await store.ensure_schema(namespace, meta_present=meta_present)
    await ensure_vectors(store, namespace, embedder)


async def ensure_vectors(store: FalkorStore, namespace: str, embedder: Embedder) -> None:
    """Check the embedder against the namespace's record, or record it at the first vector,
    and create the vector indexes (`FalkorStore.ensure_vectors`). A remote model's
    dimension is learned from its first embedding (`dimension_of`), never required
    beforehand.

    Raises:
        EmbeddingMismatch: the namespace was built with another embedding model or dimension.
        ProviderError: the model's dimension had to be learned and the model failed.
    """
    await store.ensure_vectors(namespace, embedder.model_name, await dimension_of(embedder))


async def stored_uuids(
    store: FalkorStore, namespace: str, label: str, uuids: Sequence[str]
) -> set[str]:
    """Which of these uuids a node of `label` holds (a write links only to nodes that
    exist; an import leaves a stored uuid another node took with that node)."""
    if not uuids:
        return set()
    res = await store.query(
        namespace,
        f"MATCH (n:{label}) WHERE n.uuid IN $w RETURN n.uuid",
        {"w": list(uuids)},
        read_only=True,
    )
    return {str(r[0]) for r in res.rows}


async def embed_texts(embedder: Embedder, texts: Sequence[str]) -> list[list[float]]:
    """Embed texts in one batch; plain float lists ready to pass as `vecf32($v)` parameters."""
    if not texts:
        return []
    matrix = await embedder.embed(list(texts))
    return [[float(x) for x in row] for row in matrix]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two vectors, 0.0 when either is all zeros."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = sum(x * x for x in a) ** 0.5
    nb = sum(y * y for y in b) ** 0.5
    return dot / (na * nb) if na and nb else 0.0


def new_uuid() -> str:
    """A fresh node id (uuid4 hex)."""
    return uuidlib.uuid4().hex


def now_ms() -> int:
    """The current time in epoch milliseconds."""
    return int(time.time() * 1000)


def iso_ms(ms: int) -> str:
    """ISO 8601 (UTC, Z) of epoch milliseconds, for the `<name>_iso` display properties."""
    return iso(from_epoch_ms(ms))


def to_ms(value: datetime | str | int | float | None, default: int) -> int:
    """Epoch milliseconds of a timestamp given as datetime, ISO string or epoch ms.

    Raises:
        InvalidInput: the value is not a timestamp.
    """
    if value is None:
        return default
    try:
        return to_epoch_ms(parse_timestamp(value))
    except ValueError as exc:
        raise InvalidInput(str(exc)) from exc


def dt(ms: Any) -> datetime:
    """The aware datetime of a stored epoch-ms value (0 when missing)."""
    return from_epoch_ms(int(ms or 0))


def check_text(value: str, what: str, max_len: int = MAX_NAME) -> str:
    """Strip a name/description and check it is usable.

    Raises:
        InvalidInput: empty, too long or containing NUL characters.
    """
    if not isinstance(value, str):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise InvalidInput(f"{what} must be a string, got {type(value).__name__}")
    text = value.strip()
    if not text:
        raise InvalidInput(f"{what} is empty; give a non-blank {what}")
    if len(text) > max_len:
        raise InvalidInput(f"{what} is {len(text)} characters long; the limit is {max_len}")
    if "\x00" in text:
        raise InvalidInput(f"{what} contains a NUL character; remove it")
    return text


def check_properties(properties: Mapping[str, Any] | None) -> dict[str, Any]:
    """A copy of free-form properties after checking their shape.

    Raises:
        InvalidInput: not a mapping of string keys, or more than 64 keys.
    """
    if properties is None:
        return {}
    if not isinstance(properties, Mapping):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise InvalidInput("properties must be an object of key/value pairs")
    if len(properties) > MAX_PROPERTIES:
        raise InvalidInput(
            f"{len(properties)} properties given; at most {MAX_PROPERTIES} are allowed per node"
        )
    out: dict[str, Any] = {}
    for key, value in properties.items():
        if not isinstance(key, str) or not key.strip():  # pyright: ignore[reportUnnecessaryIsInstance]
            raise InvalidInput(f"property names must be non-empty strings, got {key!r}")
        out[key] = value
    return out


def name_key(name: str) -> str:
    """The dedup key of a name; names made only of punctuation keep their case-folded text."""
    return normalize_name(name) or name.strip().casefold()


def type_key(entity_type: str) -> str:
    """Entity types compare case- and space-insensitively ("Person" = "person")."""
    return " ".join(check_text(entity_type, "entity type").casefold().split())


def rounds_by_key(keys: Sequence[str | None]) -> list[list[int]]:
    """Item indexes in rounds in which each key appears once (None: the item failed).

    A MERGE inside an UNWIND does not see what earlier rows of the same query created,
    so a batch writes items sharing a key in successive queries.
    """
    rounds: list[list[int]] = []
    seen: list[set[str]] = []
    for i, key in enumerate(keys):
        if key is None:
            continue
        n = next((r for r, keys_of in enumerate(seen) if key not in keys_of), len(rounds))
        if n == len(rounds):
            rounds.append([])
            seen.append(set())
        rounds[n].append(i)
        seen[n].add(key)
    return rounds


T = TypeVar("T")


def with_stored(
    created: dict[str, Any], stored: Mapping[str, Any] | None, uid: str
) -> dict[str, Any]:
    """Fold an export's stored properties into the ones a graph creates a node with (an
    import restoring the node in its one write): a property the graph writes takes the
    stored value, its uuid falling back to `uid`; the others, None left out, are
    returned to be set beside them."""
    extra: dict[str, Any] = {}
    for k, v in (stored or {}).items():
        if k in created:
            created[k] = v
        elif v is not None:
            extra[k] = v
    created["uuid"] = created.get("uuid") or uid
    return extra


async def create_then_merge(
    store: FalkorStore,
    namespace: str,
    rows: Sequence[Mapping[str, Any]],
    new: Sequence[Mapping[str, Any]],
    queries: tuple[str, str],
    params: Mapping[str, Any],
    read: Callable[[Sequence[Any]], tuple[int, T, bool]],
) -> dict[int, tuple[T, bool]]:
    """Write a batch of rows in at most two queries: `new` (the rows the caller read as
    missing) created whole by `queries[0]` (one index write per node: FalkorDB indexes a
    node made by MERGE ... ON CREATE SET twice), then the others, and any a concurrent
    writer created since the read, merged by `queries[1]`. Each reply row is `read` as
    (row index, value, created)."""
    create, merge = queries
    out: dict[int, tuple[T, bool]] = {}
    if new:
        res = await store.query(namespace, create, {"rows": list(new), **params})
        out = {i: (value, made) for i, value, made in map(read, res.rows)}
    rest = [r for r in rows if int(r["i"]) not in out]
    if rest:
        res = await store.query(namespace, merge, {"rows": rest, **params})
        out.update({i: (value, made) for i, value, made in map(read, res.rows)})
    return out
