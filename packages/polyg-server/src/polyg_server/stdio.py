"""The stdio transport's stdout: MCP messages only, whatever else the process prints.

Libraries print to stdout (litellm writes its records below WARNING there) and child
processes inherit it. `polyg-mcp` calls `reserve_stdout` first thing in stdio mode:
it moves the protocol to a private descriptor and points file descriptor 1, and so
`sys.stdout`, C libraries and every child process, at stderr while the server runs.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Generator
from contextlib import contextmanager
from io import TextIOWrapper
from typing import BinaryIO

import anyio


@contextmanager
def reserve_stdout() -> Generator[BinaryIO]:
    """Keep stdout for MCP: yield the protocol's stream and send everything else to stderr.

    Inside the block, descriptor 1 is a copy of stderr (Python's `sys.stdout`, C
    libraries and children write there) and the yielded stream writes to the real
    stdout. On exit descriptor 1 is the real stdout again.
    """
    sys.stdout.flush()
    wire_fd = os.dup(1)  # not inherited by children (PEP 446)
    os.dup2(2, 1)
    wire = os.fdopen(wire_fd, "wb")
    try:
        yield wire
    finally:
        sys.stdout.flush()
        wire.flush()
        os.dup2(wire_fd, 1)
        wire.close()


def text_stream(wire: BinaryIO) -> anyio.AsyncFile[str]:
    """The protocol stream as the async text file the MCP stdio transport writes to."""
    return anyio.wrap_file(TextIOWrapper(wire, encoding="utf-8", write_through=True))
