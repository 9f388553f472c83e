"""A server on a network address is never open by default.

Before: binding 0.0.0.0 without POLYG_API_KEY only logged a warning and turned the Host
check off, so the default docker-compose served memory to a request with any Host.
Now such a server refuses to start unless `--allow-unauthenticated`
(POLYG_ALLOW_UNAUTHENTICATED) says so, and the Host check stays on whatever the bind.
These tests listen on 127.0.0.1 only: the bind address is a setting the app reads.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import httpx
import pytest
from polyg_core.config import Settings, settings_from_env
from polyg_core.errors import InvalidInput
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.storage.embedded import EmbeddedFalkorDB
from polyg_core.storage.store import FalkorStore
from polyg_server.context import ServerContext
from polyg_server.http import allowed_hosts_for, is_loopback
from polyg_server.main import parse_args, unauthenticated_on_network
from polyg_server.testing import serving
from pydantic import SecretStr
from starlette.types import ASGIApp

pytestmark = pytest.mark.anyio


def polyg_mcp() -> list[str]:
    script = Path(sys.executable).parent / "polyg-mcp"
    return [str(script)] if script.exists() else [sys.executable, "-m", "polyg_server.main"]


def env_for(server: EmbeddedFalkorDB) -> dict[str, str]:
    """The test's environment without any FALKORDB_* or POLYG_* (no API key)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FALKORDB_", "POLYG_"))}
    return {**env, "POLYG_DATA_DIR": str(server.data_dir), "POLYG_LOG_LEVEL": "WARNING"}


@pytest.fixture
def seed(store: FalkorStore, cached_embedder: Embedder) -> Callable[[Settings], Awaitable[None]]:
    async def add(settings: Settings) -> None:
        ctx = ServerContext(store=store, settings=settings, embedder=cached_embedder)
        await ctx.require_memory().entities.add(settings.namespace, "ledger-vault", "Service")

    return add


def test_a_network_bind_without_an_api_key_refuses_to_start(
    falkordb_server: EmbeddedFalkorDB,
) -> None:
    # 192.0.2.1 (TEST-NET-1) is on no interface here: even a regression could not listen.
    done = subprocess.run(
        [*polyg_mcp(), "--http", "--host", "192.0.2.1", "--port", "3999"],
        env=env_for(falkordb_server),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "refusing to serve HTTP on 192.0.2.1 without an API key" in done.stderr
    for fix in ("POLYG_API_KEY", "--allow-unauthenticated", "POLYG_ALLOW_UNAUTHENTICATED"):
        assert fix in done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.1", "polyg.example"])
def test_unauthenticated_on_network_is_refused_unless_allowed(host: str) -> None:
    settings = Settings(host=host)
    with pytest.raises(InvalidInput, match="POLYG_API_KEY"):
        unauthenticated_on_network(settings)
    assert unauthenticated_on_network(settings.model_copy(update={"allow_unauthenticated": True}))
    keyed = settings.model_copy(update={"api_key": SecretStr("k" * 32)})
    assert unauthenticated_on_network(keyed) is False


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "127.0.0.2"])
def test_a_loopback_bind_needs_no_key(host: str) -> None:
    assert is_loopback(host)
    assert unauthenticated_on_network(Settings(host=host)) is False


def test_the_flag_and_the_environment_allow_an_unauthenticated_network_bind() -> None:
    assert parse_args(["--http", "--allow-unauthenticated"]).allow_unauthenticated is True
    assert parse_args(["--http"]).allow_unauthenticated is None
    allowed = {"POLYG_HOST": "0.0.0.0", "POLYG_ALLOW_UNAUTHENTICATED": "true"}
    assert unauthenticated_on_network(settings_from_env(allowed)) is True
    refused = {**allowed, "POLYG_ALLOW_UNAUTHENTICATED": "false"}
    with pytest.raises(InvalidInput):
        unauthenticated_on_network(settings_from_env(refused))


async def test_a_foreign_host_is_refused_on_a_network_bind(
    make_app: Callable[[Settings], ASGIApp],
    seed: Callable[[Settings], Awaitable[None]],
    server_settings: Settings,
) -> None:
    settings = server_settings.model_copy(update={"host": "0.0.0.0", "allow_unauthenticated": True})
    await seed(settings)
    async with serving(make_app(settings)) as url, httpx.AsyncClient() as http:
        port = url.rsplit(":", 1)[1]
        with anyio.fail_after(30):
            foreign = [
                await http.get(
                    f"{url}/api/search?q=ledger", headers={"Host": f"evil.example:{port}"}
                ),
                await http.get(f"{url}/health", headers={"Host": "evil.example"}),
                await http.post(f"{url}/mcp", json={}, headers={"Host": "203.0.113.9:3000"}),
            ]
            own = await http.get(
                f"{url}/api/search?q=ledger", headers={"Host": f"localhost:{port}"}
            )
    for answer in foreign:
        assert answer.status_code == 421, (answer.status_code, answer.text[:200])
        assert "ledger-vault" not in answer.text
        assert "POLYG_ALLOWED_HOSTS" in answer.json()["message"]
    assert own.status_code == 200 and "ledger-vault" in own.text


async def test_allowed_hosts_and_the_bind_address_pass_on_a_network_bind(
    make_app: Callable[[Settings], ASGIApp], server_settings: Settings
) -> None:
    settings = server_settings.model_copy(
        update={
            "host": "192.0.2.1",
            "allowed_hosts": "polyg.internal",
            "api_key": SecretStr("bind-key-31415926535"),
        }
    )
    auth = {"Authorization": "Bearer bind-key-31415926535"}
    async with serving(make_app(settings)) as url, httpx.AsyncClient(headers=auth) as http:
        with anyio.fail_after(30):
            named = await http.get(f"{url}/api/graphs", headers={"Host": "polyg.internal"})
            bound = await http.get(f"{url}/api/graphs", headers={"Host": "192.0.2.1:3000"})
            other = await http.get(f"{url}/api/graphs", headers={"Host": "other.internal"})
    assert named.status_code == 200
    assert bound.status_code == 200
    assert other.status_code == 421


@pytest.mark.parametrize(
    ("bind", "extra", "expected"),
    [
        ("127.0.0.1", [], ["127.0.0.1", "localhost", "[::1]"]),
        ("0.0.0.0", [], ["127.0.0.1", "localhost", "[::1]"]),
        ("::", ["polyg.internal"], ["127.0.0.1", "localhost", "[::1]", "polyg.internal"]),
        ("192.0.2.1", [], ["127.0.0.1", "localhost", "[::1]", "192.0.2.1"]),
        ("fd00::5", ["a.example"], ["127.0.0.1", "localhost", "[::1]", "[fd00::5]", "a.example"]),
    ],
)
def test_allowed_hosts_on_every_bind(bind: str, extra: list[str], expected: list[str]) -> None:
    assert allowed_hosts_for(bind, extra) == expected
