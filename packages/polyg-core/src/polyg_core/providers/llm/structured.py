"""What every LLM implementation shares about structured (JSON) output.

The instruction that asks for one JSON object matching a schema, and the
one-line summary of why a reply does not match, are the same whether the
model is reached through litellm or lent by an MCP client (sampling).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ValidationError

__all__ = ["json_reply_instructions", "retry_prompt", "validation_summary"]


def json_reply_instructions(schema: type[BaseModel], doc: dict[str, Any] | None = None) -> str:
    """The system-prompt lines that ask for one JSON object matching `schema`.

    Args:
        schema: the pydantic model the reply must validate against.
        doc: its JSON schema as sent (default: `schema.model_json_schema()`).
    """
    doc = doc if doc is not None else schema.model_json_schema()
    return (
        "Reply with one JSON object only (no prose, no code fences) that matches "
        f"this JSON schema:\n{json.dumps(doc, separators=(',', ':'))}"
    )


def retry_prompt(problem: str, schema: type[BaseModel]) -> str:
    """What the model is told when its reply could not be used, before it tries once more."""
    return (
        f"Your reply could not be used: {problem}. Reply again with only "
        f"one JSON object that matches the {schema.__name__} schema."
    )


def validation_summary(exc: ValidationError) -> str:
    """The first few validation errors on one line (`field.path: message; ...`)."""
    parts = [
        f"{'.'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}"
        for err in exc.errors(include_url=False)[:6]
    ]
    return "; ".join(parts)
