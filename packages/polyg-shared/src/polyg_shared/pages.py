"""Pages of a tool's list result: a cursor to continue and a token budget.

Every tool that returns a list takes a limit (its own field: `limit`, `k`, `top_n`,
`max_paths`), `cursor` and `max_tokens`, and answers with `next_cursor` and
`truncated` beside its list. The server fills a page (polyg_server.paging): at most
`limit` results, and no more than fit in `max_tokens`.
"""

from __future__ import annotations

from typing import Any, Final, cast

from pydantic import (
    BaseModel,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from polyg_shared.types import StrictInput

DEFAULT_PAGE_TOKENS: Final = 4_000
"""The token budget of a list answer when the call sets none (as recall's context)."""
MIN_PAGE_TOKENS: Final = 200
MAX_PAGE_TOKENS: Final = 32_000
MAX_CURSOR_CHARS: Final = 512


class PageInput(StrictInput):
    """The paging arguments of a list-returning tool."""

    cursor: str | None = Field(
        default=None,
        max_length=MAX_CURSOR_CHARS,
        description="next_cursor of the previous answer, to get the next page.",
    )
    max_tokens: int = Field(
        default=DEFAULT_PAGE_TOKENS,
        ge=MIN_PAGE_TOKENS,
        le=MAX_PAGE_TOKENS,
        description="Budget of the answer in tokens.",
    )


class PageOutput(BaseModel):
    """Where a list answer stopped."""

    next_cursor: str | None = Field(
        default=None,
        description=(
            "Pass as `cursor`, with the same other arguments, for the next page; null when "
            "nothing is left."
        ),
    )
    truncated: bool = Field(
        default=False,
        description=(
            "True when results were left out of this answer (by the limit or max_tokens: "
            "next_cursor continues) or a long text was shortened to fit max_tokens."
        ),
    )

    @model_serializer(mode="wrap")
    def _paging_last(self, handler: SerializerFunctionWrapHandler):  # pyright: ignore[reportUnknownParameterType]
        """The answer's own fields first, where a reader looks; where it stopped last.

        (No return annotation: with one, pydantic would take it for the answer's schema.)
        """
        data = handler(self)
        if isinstance(data, dict):
            fields = cast(dict[str, Any], data)
            for key in ("next_cursor", "truncated"):
                if key in fields:
                    fields[key] = fields.pop(key)
            return fields
        return data
