"""What one property costs on an edge in FalkorDB: N edges with none, an integer, a
32-character string (the entity uuid `T_BEFORE` edges carried before).

    POLYG_DATA_DIR=$(mktemp -d) uv run python scripts/bench_edge_bytes.py --n 100000

Creates N+1 nodes in a chain of N edges, twice per form (read the second round), in a fresh graph of the
embedded FalkorDB under `POLYG_DATA_DIR`, and prints the growth of `used_memory` per
edge. Not a test: numbers go to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import uuid

import anyio
import redis.asyncio as aredis
from polyg_core.config import StorageSettings, settings_from_env
from polyg_core.storage.embedded import EmbeddedFalkorDB, default_data_dir
from polyg_core.storage.store import FalkorStore

FORMS = {
    "none": "",
    "integer": " {entity: 123456 + i}",
    "uuid string": " {entity: $u + toString(i)}",
}
STEP = 10_000


async def used_memory(probe: aredis.Redis) -> int:
    info = await probe.info("memory")
    return int(info["used_memory"])


async def bench(n: int) -> None:
    settings = settings_from_env(os.environ)
    data_dir = settings.storage.data_dir
    sock = EmbeddedFalkorDB(data_dir or default_data_dir()).ensure_running()
    probe = aredis.Redis(unix_socket_path=sock)
    store = await FalkorStore(StorageSettings(data_dir=data_dir)).connect()
    try:
        # Two rounds: the first warms the allocator (its figures vary with what the
        # server freed before); the second is the one to read.
        for form, prop in [*FORMS.items(), *FORMS.items()]:
            ns = f"bench_edge_bytes_{form.replace(' ', '_')}"
            await store.delete_graph(ns)
            await store.query(ns, "CREATE INDEX FOR (v:V) ON (v.i)")
            await store.query(ns, "UNWIND range(1, $n) AS i CREATE (:V {i: i})", {"n": n + 1})
            before = await used_memory(probe)
            for lo in range(1, n + 1, STEP):
                await store.query(
                    ns,
                    "UNWIND range($lo, $hi) AS i MATCH (a:V {i: i}), (b:V {i: i + 1}) "
                    f"CREATE (a)-[:T{prop}]->(b)",
                    # 23 hex characters and 9 digits: a 32-character string, as a uuid hex.
                    {"lo": lo, "hi": min(n, lo + STEP - 1), "u": uuid.uuid4().hex[:23]},
                )
            grown = await used_memory(probe) - before
            print(f"{form:>12}: {grown / n:6.1f} bytes per edge ({n} edges)")
            await store.delete_graph(ns)
    finally:
        await store.close()
        await probe.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="edges per form")
    anyio.run(bench, parser.parse_args().n)


if __name__ == "__main__":
    main()
