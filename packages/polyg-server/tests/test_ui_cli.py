"""`polyg ui` starts the HTTP server on 127.0.0.1 and prints the explorer's address."""

from __future__ import annotations

import os
import signal
import socket
import sys
from pathlib import Path

import anyio
import httpx
import pytest
from polyg_core.storage.embedded import EmbeddedFalkorDB

pytestmark = pytest.mark.anyio


def polyg() -> list[str]:
    script = Path(sys.executable).parent / "polyg"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from polyg_cli.app import main; main()"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_polyg_ui_prints_the_address_and_serves_the_page(
    falkordb_server: EmbeddedFalkorDB,
) -> None:
    pytest.importorskip("polyg_cli")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FALKORDB_", "POLYG_"))}
    env.update(POLYG_DATA_DIR=str(falkordb_server.data_dir), POLYG_API_KEY="k-ui-123")
    with anyio.fail_after(60):
        async with await anyio.open_process([*polyg(), "ui", "--port", str(port)], env=env) as proc:
            assert proc.stdout is not None
            line = b""
            while b"\n" not in line:
                line += await proc.stdout.receive()
            address = f"http://127.0.0.1:{port}/ui"
            assert address in line.decode()
            try:
                async with httpx.AsyncClient() as http:
                    page: httpx.Response | None = None
                    while page is None:
                        try:
                            page = await http.get(address)
                        except httpx.TransportError:
                            await anyio.sleep(0.1)
                    assert page.status_code == 200
                    assert 'action="/ui/login"' in page.text
                    assert (
                        await http.get(f"http://127.0.0.1:{port}/api/graphs")
                    ).status_code == 401
            finally:
                proc.send_signal(signal.SIGINT)
                await proc.wait()
