"""What every command shares: settings, opening memory, running async code, exit codes."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar

import anyio
import redis.exceptions
import typer
from polyg_core.config import Settings
from polyg_core.errors import (
    AmbiguousName,
    EmbeddedServerError,
    EmbeddingMismatch,
    InvalidInput,
    NodeNotFound,
    PolygError,
    ProviderError,
    StorageError,
)
from rich.console import Console

logger = logging.getLogger(__name__)

T = TypeVar("T")

EXIT_OK = 0
EXIT_USER = 1
EXIT_ENV = 2

USER_ERRORS: tuple[type[Exception], ...] = (
    InvalidInput,
    NodeNotFound,
    AmbiguousName,
    EmbeddingMismatch,
)
ENV_ERRORS: tuple[type[Exception], ...] = (
    StorageError,
    EmbeddedServerError,
    ProviderError,
    ImportError,
    OSError,
    # The FalkorDB client connects while being constructed, outside the store's retries.
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
)


@dataclass
class CliState:
    """Per-invocation state: settings read once at the entry point, and the consoles."""

    settings: Settings
    out: Console
    err: Console


def state(ctx: typer.Context) -> CliState:
    """The state the root callback stored on the context."""
    obj = ctx.find_root().obj
    assert isinstance(obj, CliState)
    return obj


def fail(st: CliState, message: str, code: int = EXIT_USER) -> NoReturn:
    """Print an error to stderr and exit with `code`."""
    st.err.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def run(st: CliState, fn: Callable[[], Awaitable[T]]) -> T:
    """Run async code; turn polyg errors into messages and exit codes (1 user, 2 environment)."""
    try:
        return anyio.run(fn)
    except typer.Exit:
        raise
    except USER_ERRORS as exc:
        fail(st, str(exc), EXIT_USER)
    except ENV_ERRORS as exc:
        fail(
            st, f"{exc} (environment problem: run `polyg doctor` to see what is missing)", EXIT_ENV
        )
    except PolygError as exc:
        fail(st, str(exc), EXIT_USER)


@asynccontextmanager
async def open_memory(st: CliState, graph: str | None = None) -> AsyncGenerator[Any]:
    """A connected `Memory` for the configured store (embedded FalkorDB by default)."""
    from polyg_core.memory import Memory

    memory = await Memory.open(st.settings, namespace=graph)
    try:
        yield memory
    finally:
        await memory.close()


def print_json(data: Any) -> None:
    """Machine-readable output on stdout (for `--json`)."""
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def show(st: CliState, answer: Any, as_json: bool, draw: Callable[[Console, Any], None]) -> None:
    """Print a command's answer (a pydantic model): as JSON with `--json`, else drawn by
    `draw` for a reader."""
    if as_json:
        print_json(answer.model_dump(mode="json"))
    else:
        draw(st.out, answer)
