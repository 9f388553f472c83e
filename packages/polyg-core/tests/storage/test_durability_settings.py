"""The fsync policy is a setting, and a write on a full disk fails clearly and keeps nothing
half-made."""

from __future__ import annotations

import contextlib
import os
import subprocess
import uuid
from collections.abc import Generator
from pathlib import Path

import anyio
import pytest
import redis
from polyg_core.config import StorageSettings
from polyg_core.errors import StorageError
from polyg_core.storage.store import FalkorStore
from polyg_core.testing.restart import RestartableFalkorDB

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def fsync_policy(sock: str) -> str:
    client = redis.Redis(unix_socket_path=sock, decode_responses=True)
    try:
        return str(client.config_get("appendfsync")["appendfsync"])
    finally:
        client.close()


async def test_appendfsync_always_reaches_the_server(tmp_path: Path) -> None:
    settings = StorageSettings.model_validate(
        {
            "POLYG_DATA_DIR": str(tmp_path),
            "POLYG_APPENDFSYNC": "always",
            "POLYG_EMBEDDED_LINGER_S": "0",
        }
    )
    assert settings.appendfsync == "always"
    store = FalkorStore(settings)
    await store.connect()
    try:
        assert store.embedded is not None
        assert fsync_policy(store.embedded.socket_path) == "always"
    finally:
        await store.close()
    with pytest.raises(ValueError, match="everysec"):
        StorageSettings.model_validate({"POLYG_APPENDFSYNC": "sometimes"})


@contextlib.contextmanager
def small_filesystem(path: Path, size: str) -> Generator[Path]:
    path.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small filesystem here: {done.stderr.decode().strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


async def test_a_write_on_a_full_disk_fails_clearly_and_keeps_nothing_half_made(
    tmp_path: Path,
) -> None:
    with small_filesystem(tmp_path / "small", "8m") as data_dir:
        server = RestartableFalkorDB(data_dir)
        await anyio.to_thread.run_sync(server.start)
        filler = data_dir / "filler"
        stat = os.statvfs(data_dir)
        free = stat.f_bavail * stat.f_frsize
        filler.write_bytes(b"\0" * max(0, free - 256 * 1024))
        acked = 0
        error: StorageError | None = None
        async with server.store() as store:
            for i in range(2000):
                try:
                    await store.query(
                        "disk",
                        "CREATE (:Note {seq: $i, text: $text})",
                        {"i": i, "text": uuid.uuid4().hex * 64},
                    )
                except StorageError as exc:
                    error = exc
                    break
                acked += 1
                if i % 50 == 0:
                    await anyio.sleep(1.1)  # give the once-a-second flush its chance to fail
            assert error is not None, "the disk never filled"
            assert "disk full" in str(error) and "Free space" in str(error)
            res = await store.query("disk", "MATCH (n:Note) RETURN count(n)", read_only=True)
            assert res.rows[0][0] == acked
            filler.unlink()
            with anyio.fail_after(30):
                while True:  # redis retries the pending write once a second
                    try:
                        await store.query("disk", "CREATE (:Note {seq: -1})")
                        break
                    except StorageError:
                        await anyio.sleep(0.5)
        await anyio.to_thread.run_sync(lambda: server.restart(kill=True))
        async with server.store() as store:
            res = await store.query("disk", "MATCH (n:Note) RETURN count(n)", read_only=True)
            assert res.rows[0][0] == acked + 1
        await anyio.to_thread.run_sync(server.stop)
