"""`python -m polyg_core.jobs [--concurrency N] [--sweep S] [--queue NAME] [--burst]`: a worker process.

The same as `polyg worker`, for installs without the CLI. Settings come from the
environment (FALKORDB_*, POLYG_DATA_DIR, LLM_MODEL, EMBEDDING_MODEL, ...).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys

from polyg_core.config import settings_from_env
from polyg_core.errors import InvalidInput
from polyg_core.jobs.process import run_worker_process
from polyg_core.jobs.queue import QUEUE_NAME


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m polyg_core.jobs")
    parser.add_argument("--concurrency", type=int, default=4, help="jobs run at once")
    parser.add_argument("--sweep", type=int, default=10, help="seconds between dead-job sweeps")
    parser.add_argument("--queue", default=QUEUE_NAME, help="queue name (default: polyg)")
    parser.add_argument("--burst", action="store_true", help="stop when the queue is empty")
    args = parser.parse_args()
    try:
        settings = settings_from_env(os.environ)
    except InvalidInput as exc:
        sys.stderr.write(f"python -m polyg_core.jobs: {exc}\n")
        raise SystemExit(2) from None
    logging.basicConfig(level=settings.log_level, format="%(levelname)s %(name)s: %(message)s")
    asyncio.run(
        run_worker_process(
            settings,
            concurrency=args.concurrency,
            sweep_s=args.sweep,
            burst=args.burst,
            queue_name=args.queue,
        )
    )


if __name__ == "__main__":
    main()
