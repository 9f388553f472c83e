"""What keeping vector search intact across restarts of the embedded FalkorDB costs:
the k-NN probe, a rebuild per 10K vectors, the AOF rewrite on a clean stop, a start
from the rewritten base, and (with --replay) a start that replays the index definitions.

    uv run python scripts/bench_vector_rebuild.py --entities 10000
    uv run python scripts/bench_vector_rebuild.py --entities 1000 --replay

The script generates a polyg-shaped namespace (`polyg_bench.generate`: entities,
events, facts, causal nodes, concepts and memories with random 384-dimension vectors)
in a temporary data dir, through a store that treats the server as external (so the
store does not move the index definitions into the AOF's base itself). Then:

1. probe every vector index (`check_vector_indexes`), as `polyg doctor` does;
2. with --replay (redis's automatic AOF rewrite off while writing, so the index
   definitions stay in the incremental part): SIGKILL, start without the check, and
   time the replay and what the probe finds; then `check_vector_indexes(repair=True)`;
3. rebuild every vector index (drop, re-create, populate), as a repair does: a rebuild
   costs the same whether the index was broken or not;
4. clean stop (AOF rewrite into the base) and a start from the base.
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
import redis
from polyg_bench.generate import generate
from polyg_core.config import StorageSettings
from polyg_core.storage import index_check
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
    return server, round(time.perf_counter() - t0, 2)


async def external_store(server: EmbeddedFalkorDB) -> FalkorStore:
    settings = StorageSettings(url=f"unix://{server.socket_path}", query_timeout_ms=0)
    return await FalkorStore(settings).connect()


def per_10k(rows: list[tuple[int, float]]) -> float | None:
    vectors = sum(v for v, _ in rows)
    return round(sum(s for _, s in rows) / vectors * 10_000, 2) if vectors else None


async def rebuild_all(store: FalkorStore) -> dict[str, Any]:
    """Drop and re-create every vector index of the namespace; seconds per index."""
    timings: dict[str, Any] = {}

    async def run(db: Any) -> None:
        for label, attribute, options in await index_check.vector_indexes(db, NS):
            probe = await index_check.probe(db, NS, label, attribute)
            if probe.vectors:
                seconds = await index_check.rebuild(db, NS, label, attribute, options, 3600)
                timings[label] = {"vectors": probe.vectors, "seconds": round(seconds, 2)}

    await store._with_retries(run, "rebuild")  # pyright: ignore[reportPrivateUsage]
    rows = [(t["vectors"], t["seconds"]) for t in timings.values()]
    return {"indexes": timings, "s_per_10k_vectors": per_10k(rows)}


async def main(entities: int, replay: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"entities": entities}
    with tempfile.TemporaryDirectory(prefix="polyg-rebuild-") as tmp:
        data_dir = Path(tmp)
        server, _ = start(data_dir, verify=True)
        if replay:
            admin = redis.Redis(unix_socket_path=server.socket_path)
            admin.config_set("auto-aof-rewrite-percentage", 0)
            admin.close()
        store = await external_store(server)
        t0 = time.perf_counter()
        generated = await generate(store, NS, entities)
        out["generate_s"] = round(time.perf_counter() - t0, 2)
        out["counts"] = generated.counts
        t0 = time.perf_counter()
        checks = await store.check_vector_indexes()
        out["probe_ms"] = round((time.perf_counter() - t0) * 1000, 1)
        out["vectors"] = sum(c.vectors for c in checks)
        out["aof_incremental_mb"] = round(server.incremental_aof_bytes() / 1e6, 1)

        if replay:
            await store.close()
            kill(server)
            server, out["start_replay_s"] = start(data_dir, verify=False)
            store = await external_store(server)
            t0 = time.perf_counter()
            checks = await store.check_vector_indexes()
            out["probe_after_replay_ms"] = round((time.perf_counter() - t0) * 1000, 1)
            out["after_replay"] = {c.label: f"{c.found} of {c.expected}" for c in checks}
            t0 = time.perf_counter()
            repaired = await store.check_vector_indexes(repair=True)
            out["repair_s"] = round(time.perf_counter() - t0, 2)
            out["repair_s_per_10k_vectors"] = per_10k(
                [(c.vectors, c.rebuilt_s) for c in repaired if c.rebuilt_s is not None]
            )
            out["all_ok_after_repair"] = all(c.ok for c in repaired)
        out["rebuild"] = await rebuild_all(store)
        await store.close()

        t0 = time.perf_counter()
        server.stop()
        out["clean_stop_s"] = round(time.perf_counter() - t0, 2)
        server, out["start_from_base_s"] = start(data_dir, verify=True)
        store = await external_store(server)
        out["healthy_after_start_from_base"] = all(
            c.healthy for c in await store.check_vector_indexes()
        )
        await store.close()
        server.stop()
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--entities", type=int, default=10_000)
    parser.add_argument(
        "--replay",
        action="store_true",
        help="also kill and replay the index definitions (slow beyond ~2,000 entities)",
    )
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    args = parser.parse_args()
    result = anyio.run(main, args.entities, args.replay)
    text = json.dumps(result, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
