"""The reaper of a lingering embedded FalkorDB:
`python <this file> DATA_DIR TOKEN SERVER_PID`.

Started detached by the last user to leave a server with a linger (see
`polyg_core.storage.embedded`). It is run as a file, not as `-m polyg_core...`, so that
while it waits it holds only the standard library (a few MB, not the ~50 MB of the
package's imports); when the linger ends with no user back (or the data dir was
removed) it imports `EmbeddedFalkorDB`, which checks again under the start lock and
stops the server. Its log goes to `<data dir>/falkordb/linger.log`.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    # Run as a file: its own directory (storage/) must not shadow top-level modules.
    sys.path.pop(0)


def wait(db_dir: Path, token: str, poll_s: float = 1.0) -> str:
    """Wait for the linger: "due" (it ended with the stop still this reaper's),
    "cancelled" (a user came back, a newer linger replaced it, or a stop removed it) or
    "removed" (the data dir is gone)."""
    linger_file = db_dir / "linger.json"  # EmbeddedFalkorDB.linger_file
    while True:
        try:
            data = json.loads(linger_file.read_text())
            mine, until = data["token"] == token, float(data["until"])
        except (OSError, ValueError, KeyError, TypeError):
            return "cancelled" if db_dir.exists() else "removed"
        if not mine:
            return "cancelled"
        left = until - time.time()
        if left <= 0:
            return "due"
        time.sleep(min(left, poll_s))


def main(argv: list[str]) -> int:
    if len(argv) != 3 or not argv[2].isdigit():
        print(f"usage: python {__file__} DATA_DIR TOKEN SERVER_PID", file=sys.stderr)
        return 2
    data_dir, token, server_pid = Path(argv[0]), argv[1], int(argv[2])
    if wait(data_dir / "falkordb", token) == "cancelled":
        return 0
    import logging

    from polyg_core.storage.embedded import EmbeddedFalkorDB

    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(process)d %(levelname)s %(message)s"
    )
    EmbeddedFalkorDB(data_dir).reap_after_linger(token, server_pid)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
