"""Turning exceptions into MCP tool-error text that says what was wrong and what to do."""

from __future__ import annotations

import logging
import uuid
from typing import Any, cast

from polyg_core.errors import (
    AmbiguousName,
    EmbeddedServerError,
    EmbeddingMismatch,
    InvalidInput,
    NodeNotFound,
    PolygError,
    ProviderError,
    QueryTimeout,
    StorageError,
    StorageUnavailable,
)
from pydantic import BaseModel, ValidationError

logger = logging.getLogger(__name__)

_MAX_VALUE_CHARS = 80


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _MAX_VALUE_CHARS else text[: _MAX_VALUE_CHARS - 3] + "..."


def _expected(model: type[BaseModel] | None, loc: tuple[int | str, ...]) -> str:
    """A short description of what a top-level field accepts, from the model's schema."""
    if model is None or not loc or not isinstance(loc[0], str):
        return ""
    field = model.model_fields.get(loc[0])
    if field is None:
        names = ", ".join(sorted(model.model_fields))
        return f"known arguments: {names}" if names else "this tool takes no arguments"
    schema: dict[str, Any] = model.model_json_schema()["properties"].get(loc[0], {})
    parts: list[str] = []
    kind = _kind(schema)
    if kind:
        parts.append(kind)
    if "enum" in schema:
        parts.append("one of " + ", ".join(repr(v) for v in schema["enum"]))
    for key, word in (
        ("minimum", ">="),
        ("maximum", "<="),
        ("exclusiveMinimum", ">"),
        ("exclusiveMaximum", "<"),
        ("minLength", "min length"),
        ("maxLength", "max length"),
    ):
        if key in schema:
            parts.append(f"{word} {schema[key]}")
    if field.description:
        parts.append(field.description)
    return "; ".join(parts)


def _kind(schema: dict[str, Any]) -> str:
    """A field's JSON type, or its variants' types joined ("string/null")."""
    variants = cast(list[Any], schema.get("anyOf", []))
    return str(
        schema.get("type")
        or "/".join(
            str(cast(dict[str, Any], s)["type"])
            for s in variants
            if isinstance(s, dict) and "type" in s
        )
    )


def validation_error_text(
    tool: str, exc: ValidationError, model: type[BaseModel] | None = None
) -> str:
    """One line per bad field: where it is, what was wrong, what the field expects."""
    lines = [f"Invalid arguments for {tool}:"]
    for err in exc.errors(include_url=False):
        loc = tuple(err.get("loc", ()))
        where = ".".join(str(p) for p in loc)
        if not loc:
            where = "(arguments)"
        elif not all(str(p) for p in loc):
            where = repr(where)
        msg = str(err.get("msg", "invalid value")).removeprefix("Value error, ")
        if err.get("type") == "extra_forbidden":
            msg = "unknown argument"
        elif err.get("type") != "missing" and "input" in err:
            msg = f"{msg} (got {_short(err['input'])})"
        expected = _expected(model, loc)
        lines.append(f"- {where}: {msg}" + (f". Expected: {expected}" if expected else ""))
    lines.append("Fix these arguments and call the tool again.")
    return "\n".join(lines)


_ERROR_TEXTS: tuple[tuple[type[PolygError], str, str], ...] = (
    # Most specific first: QueryTimeout and StorageUnavailable are StorageErrors.
    (AmbiguousName, "Ambiguous name", ""),
    (NodeNotFound, "Not found", ""),
    (InvalidInput, "Invalid input", ""),
    (StorageUnavailable, "Storage unavailable", " Retry the call once FalkorDB is reachable."),
    (QueryTimeout, "Query timeout", ""),
    (StorageError, "Storage error", ""),
    (EmbeddingMismatch, "Embedding mismatch", ""),
    (
        ProviderError,
        "Provider error",
        " Check LLM_MODEL / EMBEDDING_MODEL and the provider's API key, or retry later.",
    ),
    (EmbeddedServerError, "Embedded FalkorDB error", ""),
)
"""Each kind of polyg-core error: the prefix of its text and the next step it adds."""


def polyg_error_text(exc: PolygError) -> str:
    """The text of a polyg-core error, prefixed by its kind, with a next step."""
    msg = str(exc)
    for kind, prefix, next_step in _ERROR_TEXTS:
        if isinstance(exc, kind):
            return f"{prefix}: {msg}{next_step}"
    return msg


def _polyg_leaf(exc: BaseException) -> PolygError | None:
    """The first polyg-core error inside an exception group (task groups wrap errors)."""
    if isinstance(exc, BaseExceptionGroup):
        for inner in cast(BaseExceptionGroup[BaseException], exc).exceptions:
            found = _polyg_leaf(inner)
            if found is not None:
                return found
    return exc if isinstance(exc, PolygError) else None


def tool_error_text(tool: str, exc: Exception, model: type[BaseModel] | None = None) -> str:
    """The tool-error text for any exception a tool call raised.

    Expected failures (bad arguments, polyg-core errors, also when a task group
    wrapped them in an exception group) are described to the caller; anything else
    is logged with its traceback and answered with a generic "internal error
    (logged)" text and a reference that appears in the log.
    """
    if isinstance(exc, BaseExceptionGroup):
        leaf = _polyg_leaf(exc)
        if leaf is not None:
            exc = leaf
    if isinstance(exc, ValidationError):
        fields = sorted({".".join(str(p) for p in e["loc"]) for e in exc.errors()})
        logger.info("tool %s rejected arguments: %s", tool, fields)
        return validation_error_text(tool, exc, model)
    if isinstance(exc, PolygError):
        logger.info("tool %s failed: %s: %s", tool, type(exc).__name__, exc)
        return polyg_error_text(exc)
    ref = uuid.uuid4().hex[:8]
    logger.error("tool %s raised an unexpected error [ref %s]", tool, ref, exc_info=exc)
    return (
        f"internal error (logged, ref {ref}) in {tool}. The server is still running; "
        "retry, and report the reference if it happens again."
    )
