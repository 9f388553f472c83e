"""The lock that a running embedded FalkorDB holds on its data dir for its whole life.

The starter takes an exclusive `flock` on `<db_dir>/server.lock` and hands the open
file to `redis-server` (`pass_fds`), then closes its own copy: the lock then lives
exactly as long as the server process (and the children it forks for a rewrite),
whatever happens to the starter. A server that is frozen (SIGSTOP), slow or
orphaned still holds it, so no other process can start a second server on the same
files: the pid file and a PING say where a server answers, this lock says whether
one exists at all.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path


def lock_path(db_dir: Path) -> Path:
    return db_dir / "server.lock"


def try_acquire(db_dir: Path) -> int | None:
    """Open and lock the server lock file; the fd to hand to the server, or None if held."""
    fd = os.open(lock_path(db_dir), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except OSError:
        os.close(fd)
        raise
    return fd


def held(db_dir: Path) -> bool:
    """True while a live server process (of any starter) holds the data dir."""
    fd = try_acquire(db_dir)
    if fd is None:
        return True
    with contextlib.suppress(OSError):
        fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)
    return False


def holders(db_dir: Path) -> list[int]:
    """Pids of the processes that hold the lock file open (Linux /proc; [] elsewhere)."""
    target = lock_path(db_dir).resolve()
    pids: list[int] = []
    proc = Path("/proc")
    if not proc.is_dir():
        return pids
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fds = list((entry / "fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            with contextlib.suppress(OSError):
                if Path(os.readlink(fd)) == target:
                    pids.append(int(entry.name))
                    break
    return pids
