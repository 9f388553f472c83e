"""What a restart of the embedded FalkorDB costs: replay, vector-index check and rebuild,
compaction on a clean stop, and a start from the compacted base.

    uv run python scripts/bench_vector_rebuild.py --entities 10000

The script generates a polyg-shaped namespace (`polyg_core.bench.generate`: entities,
events, facts, causal nodes, concepts and memories with random 384-dimension vectors)
in a temporary data dir. It writes through a store that treats the server as external,
so the index definitions stay in the append-only file's incremental part, as they did
before the embedded store moved them into the base. Then:

1. SIGKILL, start without the check: time to replay, and what a k-NN probe finds;
2. `check_vector_indexes(repair=True)`: rebuild time per index and per 10K vectors;
3. SIGKILL again (the rebuild is in the incremental part too), start with the check
   (what a user's next session does after a crash): start time including the check;
4. clean stop (AOF rewrite into the base) and start from the base.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from polyg_core.bench.generate import generate
from polyg_core.config import StorageSettings
from polyg_core.storage.embedded import EmbeddedFalkorDB
from polyg_core.storage.store import FalkorStore

NS = "rebuild"


def kill(server: EmbeddedFalkorDB) -> None:
    proc = server._process  # pyright: ignore[reportPrivateUsage]
    assert proc is not None
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    server.owner = False


def start(data_dir: Path, verify: bool) -> tuple[EmbeddedFalkorDB, float]:
    server = EmbeddedFalkorDB(data_dir, verify_indexes=verify)
    t0 = time.perf_counter()
    server.ensure_running()
    return server, time.perf_counter() - t0


async def external_store(server: EmbeddedFalkorDB) -> FalkorStore:
    settings = StorageSettings(url=f"unix://{server.socket_path}", query_timeout_ms=0)
    return await FalkorStore(settings).connect()


async def main(entities: int) -> dict[str, Any]:
    out: dict[str, Any] = {"entities": entities}
    with tempfile.TemporaryDirectory(prefix="polyg-rebuild-") as tmp:
        data_dir = Path(tmp)
        server, _ = start(data_dir, verify=True)
        store = await external_store(server)
        t0 = time.perf_counter()
        generated = await generate(store, NS, entities)
        out["generate_s"] = round(time.perf_counter() - t0, 2)
        out["counts"] = generated.counts
        t0 = time.perf_counter()
        checks = await store.check_vector_indexes()
        out["check_live_ms"] = round((time.perf_counter() - t0) * 1000, 1)
        await store.close()
        out["aof_incremental_mb"] = round(server.incremental_aof_bytes() / 1e6, 1)

        kill(server)
        server, out["start_replay_s"] = start(data_dir, verify=False)
        store = await external_store(server)
        t0 = time.perf_counter()
        checks = await store.check_vector_indexes()
        out["check_after_replay_ms"] = round((time.perf_counter() - t0) * 1000, 1)
        out["after_replay"] = {c.label: f"{c.found} of {c.expected}" for c in checks}
        t0 = time.perf_counter()
        repaired = await store.check_vector_indexes(repair=True)
        out["repair_s"] = round(time.perf_counter() - t0, 2)
        rebuilt = [c for c in repaired if c.rebuilt_s is not None]
        out["rebuilt"] = {
            c.label: {"vectors": c.vectors, "seconds": round(c.rebuilt_s or 0.0, 2)}
            for c in rebuilt
        }
        vectors = sum(c.vectors for c in rebuilt)
        seconds = sum(c.rebuilt_s or 0.0 for c in rebuilt)
        out["rebuild_s_per_10k_vectors"] = round(seconds / vectors * 10_000, 2) if vectors else None
        out["all_ok_after_repair"] = all(c.ok for c in repaired)
        await store.close()

        kill(server)
        server, out["start_replay_with_check_s"] = start(data_dir, verify=True)
        record = server.last_index_check() or {}
        out["start_check_s"] = record.get("seconds")
        out["start_check_rebuilt"] = [
            i["label"] for i in record.get("indexes", []) if i.get("rebuilt_s") is not None
        ]

        t0 = time.perf_counter()
        server.stop()
        out["clean_stop_s"] = round(time.perf_counter() - t0, 2)
        server, out["start_from_base_s"] = start(data_dir, verify=True)
        store = await external_store(server)
        out["healthy_after_base_start"] = all(c.healthy for c in await store.check_vector_indexes())
        await store.close()
        server.stop()
    for key in ("start_replay_s", "start_replay_with_check_s", "start_from_base_s"):
        out[key] = round(out[key], 2)
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--entities", type=int, default=10_000)
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    args = parser.parse_args()
    result = anyio.run(main, args.entities)
    text = json.dumps(result, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
