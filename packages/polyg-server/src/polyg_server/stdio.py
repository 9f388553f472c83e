"""The stdio transport's stdout: MCP messages only, whatever else the process prints.

Libraries print to stdout (litellm writes its records below WARNING there) and child
processes inherit it. `polyg-mcp` calls `reserve_stdout` first thing in stdio mode:
it moves the protocol to a private descriptor and points file descriptor 1, and so
`sys.stdout`, C libraries and every child process, at stderr until the process ends.
"""

from __future__ import annotations

import os
import sys
from io import TextIOWrapper
from typing import BinaryIO

import anyio


def reserve_stdout() -> BinaryIO:
    """Keep stdout for MCP: return the protocol's stream and send everything else to stderr.

    From this call to the end of the process, descriptor 1 is a copy of stderr: Python's
    `sys.stdout`, C libraries, atexit handlers (litellm logs from one) and children
    write there. The returned stream writes to the real stdout and is not inherited by
    child processes.
    """
    sys.stdout.flush()
    wire = os.fdopen(os.dup(1), "wb")  # not inherited by children (PEP 446)
    os.dup2(2, 1)
    return wire


def text_stream(wire: BinaryIO) -> anyio.AsyncFile[str]:
    """The protocol stream as the async text file the MCP stdio transport writes to."""
    return anyio.wrap_file(TextIOWrapper(wire, encoding="utf-8", write_through=True))
