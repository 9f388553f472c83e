"""The reaper of a lingering embedded FalkorDB (`python -m polyg_core.storage.linger
DATA_DIR TOKEN SERVER_PID`).

Started detached by the last user to leave a server with a linger (see
`polyg_core.storage.embedded`); it stops the server when the linger ends unless a user
came back, then exits. Its log goes to `<data dir>/falkordb/linger.log`.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    if len(argv) != 3 or not argv[2].isdigit():
        print(
            "usage: python -m polyg_core.storage.linger DATA_DIR TOKEN SERVER_PID",
            file=sys.stderr,
        )
        return 2
    from polyg_core.storage.embedded import EmbeddedFalkorDB

    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(process)d %(levelname)s %(message)s"
    )
    server = EmbeddedFalkorDB(Path(argv[0]))
    server.reap_after_linger(argv[1], int(argv[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
