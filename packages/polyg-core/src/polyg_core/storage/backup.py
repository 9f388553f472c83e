"""Consistent backups of the embedded FalkorDB, taken while it runs, and their restore.

A backup is one RDB snapshot (`BGSAVE`: the server forks, and the child writes the
data as of the fork, while the parent goes on taking writes), copied with a manifest
and its checksum into a directory. Every namespace of the data dir is in it, with its
vector indexes' definitions: loading an RDB builds each index once.

A restore goes into a data dir with no data yet: a server that holds the data dir's
lock loads the snapshot with the AOF off, turns the AOF on (which writes the snapshot
as the AOF's base), and shuts down; the next start loads that base as usual.

One namespace can also be restored into a data dir that holds others, running or not
(`restore_graph`): a scratch server loads the snapshot in a temporary directory, the
namespace's key is serialised there (`DUMP`) and written into the data dir's server
(`RESTORE`, which loads it like an RDB: every index is built once), and the append-only
file is then rewritten into its base. The other namespaces are not touched.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import redis
from filelock import FileLock

from polyg_core.errors import EmbeddedServerError, InvalidInput
from polyg_core.storage import server_lock
from polyg_core.storage.embedded import EmbeddedFalkorDB, server_binaries
from polyg_core.storage.namespace import validate_namespace
from polyg_core.storage.write_stamp import restamp_query

SNAPSHOT = "falkordb.rdb"
MANIFEST = "backup.json"
_RESTORE_RDB = "restore.rdb"


@dataclass
class BackupInfo:
    """What a backup holds."""

    path: Path
    created_at: str
    graphs: list[str]
    bytes: int
    sha256: str


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _wait(
    client: redis.Redis, done: Callable[[dict[str, Any]], bool], timeout_s: float, what: str
) -> None:
    deadline = time.monotonic() + timeout_s
    while not done(client.info("persistence")):
        if time.monotonic() > deadline:
            raise EmbeddedServerError(f"{what} did not finish within {timeout_s:.0f}s")
        time.sleep(0.05)


def _empty_dir(path: Path, what: str) -> None:
    if path.exists() and any(path.iterdir()):
        raise InvalidInput(f"{what} {path} is not empty: give a new or empty directory")


def backup(server: EmbeddedFalkorDB, dest: Path, timeout_s: float = 3600.0) -> BackupInfo:
    """Snapshot the running server (started if needed) into `dest`, which must be empty.

    Raises:
        InvalidInput: `dest` is not empty.
        EmbeddedServerError: the snapshot failed or timed out.
    """
    _empty_dir(dest, "the backup directory")
    sock = server.ensure_running()
    client = redis.Redis(unix_socket_path=sock, socket_timeout=30, decode_responses=True)
    # The server writes its snapshot to dump.rdb (`dbfilename` is a protected setting):
    # one backup at a time per data dir.
    snapshot = server.db_dir / "dump.rdb"
    guard = FileLock(str(server.db_dir / "backup.lock"), timeout=timeout_s)
    try:
        guard.acquire()
        listed: list[Any] = client.execute_command("GRAPH.LIST") or []
        graphs = sorted(str(g) for g in listed)
        _wait(client, lambda i: not i.get("rdb_bgsave_in_progress"), timeout_s, "a running save")
        saves = int(client.info("persistence").get("rdb_saves", 0))
        with contextlib.suppress(OSError):
            snapshot.unlink()
        client.bgsave(schedule=True)  # after an AOF rewrite in progress, if any
        _wait(
            client,
            lambda i: int(i.get("rdb_saves", 0)) > saves and not i.get("rdb_bgsave_in_progress"),
            timeout_s,
            "the snapshot (BGSAVE)",
        )
        status = client.info("persistence").get("rdb_last_bgsave_status")
        if status != "ok" or not snapshot.exists():
            raise EmbeddedServerError(
                f"the snapshot failed ({status}); see {server.log_file} (a full disk?)"
            )
        dest.mkdir(parents=True, exist_ok=True)
        partial = dest / f"{SNAPSHOT}.partial"
        shutil.copyfile(snapshot, partial)
        with partial.open("rb") as fh:
            os.fsync(fh.fileno())
        partial.rename(dest / SNAPSHOT)
    finally:
        client.close()
        with contextlib.suppress(OSError):
            snapshot.unlink()
        if guard.is_locked:
            guard.release()
    info = BackupInfo(
        path=dest,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        graphs=graphs,
        bytes=(dest / SNAPSHOT).stat().st_size,
        sha256=_sha256(dest / SNAPSHOT),
    )
    manifest = {k: v for k, v in info.__dict__.items() if k != "path"}
    (dest / MANIFEST).write_text(json.dumps(manifest, indent=1))
    return info


def read_backup(src: Path) -> BackupInfo:
    """The manifest of a backup directory, its snapshot verified against the checksum.

    Raises:
        InvalidInput: not a backup.
        EmbeddedServerError: the snapshot does not match its checksum.
    """
    try:
        data = json.loads((src / MANIFEST).read_text())
    except (OSError, ValueError) as exc:
        raise InvalidInput(
            f"{src} is not a polyg backup (no readable {MANIFEST}); give a directory "
            "written by `polyg backup`"
        ) from exc
    info = BackupInfo(path=src, **data)
    if not (src / SNAPSHOT).exists() or _sha256(src / SNAPSHOT) != info.sha256:
        raise EmbeddedServerError(
            f"the snapshot in {src} is missing or does not match its checksum: the backup "
            "is damaged; restore another one"
        )
    return info


def restore(data_dir: Path, src: Path, timeout_s: float = 3600.0) -> BackupInfo:
    """Restore a backup into a data dir that holds no data yet.

    Raises:
        InvalidInput: the data dir has data, or `src` is not a backup.
        EmbeddedServerError: a server runs on the data dir, the backup is damaged, or
            the server could not load it.
    """
    info = read_backup(src)
    db_dir = EmbeddedFalkorDB(data_dir).db_dir
    if (db_dir / "appendonlydir").exists():
        raise InvalidInput(
            f"the data dir {data_dir} already holds data: restore into a new or empty data "
            "dir (POLYG_DATA_DIR), then point polyg at it, or restore one graph of the "
            "backup into this data dir with `polyg restore DIR --graph NAME`"
        )
    db_dir.mkdir(parents=True, exist_ok=True)
    lock_fd = server_lock.try_acquire(db_dir)
    if lock_fd is None:
        raise EmbeddedServerError(f"a FalkorDB server is running on {data_dir}: stop it first")
    try:
        shutil.copyfile(src / SNAPSHOT, db_dir / _RESTORE_RDB)
        _load_into_aof(db_dir, lock_fd, timeout_s)
    finally:
        os.close(lock_fd)
        with contextlib.suppress(OSError):
            (db_dir / _RESTORE_RDB).unlink()
    return info


def restore_graph(
    server: EmbeddedFalkorDB,
    src: Path,
    graph: str,
    *,
    replace: bool = False,
    timeout_s: float = 3600.0,
) -> BackupInfo:
    """Restore the namespace `graph` of a backup into a data dir that may hold others.

    The data dir's server is started if needed (and may go on serving meanwhile); its
    other namespaces are left as they are. Other polyg processes see the restored
    namespace at their next query.

    Args:
        server: the embedded server of the data dir restored into.
        src: a directory written by `backup`.
        graph: the namespace to restore.
        replace: overwrite the namespace when the data dir already has it (what it holds
            now is lost); without it that is refused.
        timeout_s: how long loading the snapshot may take.

    Raises:
        InvalidInput: `src` is not a backup, it holds no such namespace, or the data dir
            already has it and `replace` is not set.
        EmbeddedServerError: the backup is damaged, or a server could not load it.
    """
    validate_namespace(graph)
    info = read_backup(src)
    if graph not in info.graphs:
        held = ", ".join(repr(g) for g in info.graphs) or "none"
        raise InvalidInput(
            f"the backup {src} holds no graph {graph!r} (it holds: {held}); name one of those"
        )
    sock = server.ensure_running()
    client = redis.Redis(unix_socket_path=sock, socket_timeout=timeout_s)
    try:
        listed: list[Any] = client.execute_command("GRAPH.LIST") or []
        held = {g.decode() if isinstance(g, bytes) else str(g) for g in listed}
        if graph in held and not replace:
            raise InvalidInput(
                f"graph {graph!r} already holds data in {server.data_dir}: add --replace "
                "to overwrite it with the backup's copy (what it holds now is lost), or "
                "export it first (`polyg export`)"
            )
        payload = _dump_from_snapshot(src / SNAPSHOT, graph, timeout_s)
        # Not RESTORE ... REPLACE: FalkorDB loads a graph into the one of the same name
        # still registered, so the old nodes would stay next to the restored ones. The
        # old key goes first, in one transaction with the RESTORE (no query in between).
        with client.pipeline(transaction=True) as tx:
            tx.delete(graph)
            tx.restore(graph, 0, payload)
            # A new write stamp: what other processes kept under the stamp the backup
            # holds may be newer than the restored data (storage.write_stamp).
            tx.execute_command("GRAPH.QUERY", graph, restamp_query())
            tx.execute()
    finally:
        client.close()
    # The RESTORE command holds the whole namespace; the base file holds it compactly.
    server.compact()
    return info


def _start_on_socket(
    sock: str, directory: Path, extra: tuple[str, ...] = (), pass_fds: tuple[int, ...] = ()
) -> subprocess.Popen[bytes]:
    """A FalkorDB of its own on unix socket `sock` that loads `_RESTORE_RDB` from
    `directory`, saves nothing and keeps no append-only file (`extra` arguments after)."""
    binary, module = server_binaries()
    return subprocess.Popen(
        [
            str(binary),
            *("--port", "0", "--unixsocket", sock, "--unixsocketperm", "700"),
            *("--dir", str(directory), "--dbfilename", _RESTORE_RDB, "--save", ""),
            *("--appendonly", "no", *extra),
            *("--logfile", str(directory / "falkordb.log"), "--loadmodule", str(module)),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        pass_fds=pass_fds,
    )


def _dump_from_snapshot(snapshot: Path, graph: str, timeout_s: float) -> bytes:
    """`graph` serialised by a scratch server that loads `snapshot` in a temporary dir."""
    with tempfile.TemporaryDirectory(prefix="polyg-restore-") as tmp:
        scratch = EmbeddedFalkorDB(Path(tmp))
        work = scratch.db_dir
        work.mkdir(parents=True)
        shutil.copyfile(snapshot, work / _RESTORE_RDB)
        sock = scratch.socket_path
        proc = _start_on_socket(sock, work)
        try:
            try:
                _connect(proc, sock, timeout_s, work).close()
            except EmbeddedServerError as exc:
                # The temporary directory goes: say what its log said.
                log = (work / "falkordb.log").read_text(errors="replace").strip().splitlines()
                raise EmbeddedServerError(f"{exc}: {' | '.join(log[-3:])}") from exc
            # A client that leaves replies as bytes: the serialised key is binary.
            raw = redis.Redis(unix_socket_path=sock, socket_timeout=timeout_s)
            try:
                payload: Any = raw.dump(graph)
                with contextlib.suppress(redis.ConnectionError):
                    raw.shutdown(nosave=True)
            finally:
                raw.close()
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=10)
    if not isinstance(payload, bytes):
        raise EmbeddedServerError(f"the backup's snapshot holds no graph {graph!r}")
    return payload


def _load_into_aof(db_dir: Path, lock_fd: int, timeout_s: float) -> None:
    sock = EmbeddedFalkorDB(db_dir.parent).socket_path
    with contextlib.suppress(FileNotFoundError):
        os.unlink(sock)
    proc = _start_on_socket(sock, db_dir, ("--aof-use-rdb-preamble", "yes"), (lock_fd,))
    try:
        client = _connect(proc, sock, timeout_s, db_dir)
        try:
            client.config_set("appendonly", "yes")  # writes the loaded data as the AOF base
            _wait(
                client,
                lambda i: (
                    i.get("aof_enabled") == 1
                    and not i.get("aof_rewrite_in_progress")
                    and not i.get("aof_rewrite_scheduled")
                ),
                timeout_s,
                "writing the restored data to the append-only file",
            )
            if client.info("persistence").get("aof_last_bgrewrite_status") != "ok":
                raise EmbeddedServerError(
                    f"writing the restored data failed; see {db_dir / 'falkordb.log'}"
                )
            with contextlib.suppress(redis.ConnectionError):
                client.shutdown(nosave=True)
        finally:
            client.close()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)


def _connect(proc: subprocess.Popen[bytes], sock: str, timeout_s: float, db_dir: Path) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        if proc.poll() is not None:
            raise EmbeddedServerError(
                f"FalkorDB could not load the backup (exit {proc.returncode}); "
                f"see {db_dir / 'falkordb.log'}"
            )
        client = redis.Redis(unix_socket_path=sock, socket_timeout=30, decode_responses=True)
        try:
            if client.ping():
                return client
        except (redis.RedisError, OSError):
            client.close()
        if time.monotonic() > deadline:
            raise EmbeddedServerError(f"FalkorDB did not load the backup in {timeout_s:.0f}s")
        time.sleep(0.1)
