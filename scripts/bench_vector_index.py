"""What FalkorDB's HNSW vector index parameters cost and buy, per configuration.

    nice -n 10 uv run python scripts/bench_vector_index.py                    # 100,000 names
    nice -n 10 uv run python scripts/bench_vector_index.py --n 30000 \\
        --configs 16:200:10,16:100:10,8:100:10 --json out.json
    uv run python scripts/bench_vector_index.py --vectors random --n 20000    # no model

For each configuration `M:efConstruction:efRuntime` (and a baseline with the vectors
stored but not indexed), in a FalkorDB of its own (its own POLYG_DATA_DIR, the embedded
server, niced with the script):

1. a namespace whose vector indexes polyg's store creates with those options
   (`StorageSettings.hnsw_*`, `FalkorStore.ensure_vectors`);
2. N entities written with the query polyg's writer uses (`graphs.entity.CREATE_ENTITIES`,
   1,000 rows a batch), each with its 384-d name vector: FalkorDB's CPU for the inserts
   (`INFO cpu` of its own server) and `used_memory` growth per vector;
3. k-NN recall@10 against exact cosine (numpy, over every stored vector) for `--queries`
   query names: a third typos of stored names, a third the same words in another order
   or case, a third names never stored. Each query asks the index for k = 10 and for
   polyg's own k (2 x 10 + 16 = 36, `storage/vector.knn`) and for 64; FalkorDB searches
   with max(efRuntime, k) candidates, so k = 64 shows what efRuntime 64 would give
   polyg's queries. The first 10 answers are scored. Latency: FalkorDB's own
   execution time per query and the client's wall clock, p50 / p95;
4. a clean stop (the append-only file rewritten into its base), then a new server on the
   data dir: seconds until it answers (FalkorDB rebuilds every vector index at start)
   and the CPU that start took.

Vectors: `names` (default) are invented entity names (people, services, hosts, places,
products, teams, projects) embedded once with all-MiniLM-L6-v2 and cached outside the
repository (`--cache-dir`, default ~/.cache/polyg-bench); `sentences` are invented
memory-like sentences (for the memory and concept indexes); `random` are random unit
vectors (no model). The whole run is bounded by `--budget-s`: a configuration that would
start after it is skipped and reported as such.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import numpy.typing as npt
import redis
from polyg_core.config import StorageSettings
from polyg_core.graphs.entity import CREATE_ENTITIES, entity_row
from polyg_core.storage.embedded import EmbeddedFalkorDB
from polyg_core.storage.schema import ENTITY
from polyg_core.storage.store import FalkorStore, compact_vectors

F32 = npt.NDArray[np.float32]
NS = "vectors"
MODEL = "local/minilm"
DIM = 384
BATCH = 1000
K = 10
POLYG_ASK = 2 * K + 16
# k asked of the index: 10; polyg's own 2k + 16; 64, which is what a query of polyg's
# would examine under efRuntime 64 (FalkorDB examines max(efRuntime, k) candidates).
ASKS = (K, POLYG_ASK, 64)


def words(text: str) -> list[str]:
    return text.split()


FIRST = words(
    "Ada Bram Cora Dov Elin Fenn Gita Hal Ines Jory Kaia Lev Mira Nils Orla Pim Quin Rhea "
    "Sefa Tam Ulla Vik Wren Xeno Yara Zed Alia Bo Cas Dara Ema Fio Gus Hana Ivo Juna Kito "
    "Lumi Mako Nia Oren Pia Remy Sol Tuva Uma Vero Wes Yoel Zia"
)
SYLLABLES = words(
    "ka ro mi tes van bor lin del qua shi nor pel tam gri vos hal ben cor dra fen "
    "lo mar stu wen zel ith ova rud sel pha tro"
)
SERVICE = words(
    "payments ledger billing auth search ingest export notify render quota audit "
    "session inventory pricing routing backup catalog metrics gateway scheduler"
)
SUFFIX = words("api worker db cache queue sync proxy cron gateway service store index")
REGION = words("eu us ap west east north south central")
PLACE_WORD = words("Harbor Ridge Hollow Ford Crossing Mill Heights Bay Grove Fields Point Vale")
PLACE_KIND = words("depot office warehouse campus station clinic lab branch site")
PRODUCT = words("Pro Lite Max Mini Air Studio One Go Flex Core Edge Prime")
TEAM = words("platform data growth mobile infra security design support research finance")
PROJECT = words("migration rollout redesign launch cleanup upgrade rewrite audit pilot")
UNRELATED = (
    "quarterly budget review", "coffee machine on the third floor", "weekly standup notes",
    "summer picnic planning", "broken printer in room 4", "onboarding checklist for interns",
    "parking permit renewal", "holiday rota", "vendor contract negotiation", "team offsite",
    "fire drill schedule", "expense report deadline", "new desk chairs", "lunch and learn",
    "password rotation policy", "travel booking rules", "office plant watering",
    "hiring committee feedback", "customer survey results", "board meeting agenda",
)  # fmt: skip
VERBS = words("moved deployed fixed reviewed paused launched cancelled approved migrated tested")
WHEN = ["last week", "on Monday", "yesterday", "in March", "after the outage", "before release"]


def word(rng: random.Random, parts: int) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(parts))


def one_name(rng: random.Random) -> str:
    kind = rng.randrange(7)
    if kind == 0:
        return f"{rng.choice(FIRST)} {word(rng, 2).capitalize()}"
    if kind == 1:
        tail = f"-{rng.choice(REGION)}-{rng.randrange(1, 20)}" if rng.random() < 0.6 else ""
        return f"{rng.choice(SERVICE)}-{rng.choice(SUFFIX)}{tail}"
    if kind == 2:
        return f"{word(rng, 2)}-{rng.choice(SUFFIX)}-{rng.randrange(1, 100):02d}"
    if kind == 3:
        return f"{word(rng, 2).capitalize()} {rng.choice(PLACE_WORD)} {rng.choice(PLACE_KIND)}"
    if kind == 4:
        return f"{word(rng, 2).capitalize()} {rng.choice(PRODUCT)} {rng.randrange(2, 30)}"
    if kind == 5:
        return f"{rng.choice(TEAM)} team {word(rng, 1)}{rng.randrange(1, 9)}"
    return f"{word(rng, 2).capitalize()} {rng.choice(PROJECT)} {rng.choice((2024, 2025, 2026))}"


def one_sentence(rng: random.Random) -> str:
    who = f"{rng.choice(FIRST)} {word(rng, 2).capitalize()}"
    return f"{who} {rng.choice(VERBS)} {one_name(rng)} {rng.choice(WHEN)}"


def distinct(rng: random.Random, n: int, make: Any) -> list[str]:
    out: dict[str, None] = {}
    while len(out) < n:
        out[make(rng)] = None
    return list(out)


def typo(rng: random.Random, text: str) -> str:
    i = rng.randrange(len(text))
    match rng.randrange(3):
        case 0:
            return text[:i] + text[i + 1 :]  # a letter dropped
        case 1:
            return text[:i] + rng.choice("aeiourstn") + text[i:]  # one inserted
        case _:
            j = min(i + 1, len(text) - 1)  # two swapped
            return text[:i] + text[j] + text[i] + text[j + 1 :] if j > i else text + "s"


def reordered(rng: random.Random, text: str) -> str:
    words = text.replace("-", " ").split()
    rng.shuffle(words)
    out = " ".join(words)
    return out.lower() if rng.random() < 0.5 else out.upper()


def queries(rng: random.Random, stored: list[str], count: int, sentences: bool) -> list[str]:
    near = rng.sample(stored, 2 * count // 3)
    out = [typo(rng, t) for t in near[: count // 3]]
    out += [reordered(rng, t) for t in near[count // 3 :]]
    unrelated = list(UNRELATED) if not sentences else []
    stored_set = set(stored)
    while len(out) < count:
        text = unrelated.pop() if unrelated else (one_sentence(rng) if sentences else one_name(rng))
        if text not in stored_set:
            out.append(text)
    return out


def embed(texts: list[str]) -> F32:
    from polyg_core.providers.embeddings.local import MiniLMEmbedder

    embedder = MiniLMEmbedder(batch_size=256, cache_size=0)
    parts = [embedder.embed_sync(texts[i : i + 4096]) for i in range(0, len(texts), 4096)]
    return np.concatenate(parts).astype(np.float32)


def unit(rows: F32) -> F32:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def dataset(
    kind: str, n: int, count: int, seed: int, cache_dir: Path
) -> tuple[F32, F32, dict[str, Any]]:
    """Stored vectors, query vectors and how they were made (cached per kind, n, seed)."""
    rng = random.Random(seed)
    if kind == "random":
        gen = np.random.default_rng(seed)
        stored = unit(gen.standard_normal((n, DIM)).astype(np.float32))
        noise = gen.standard_normal((2 * count // 3, DIM)).astype(np.float32)
        near = (stored[gen.integers(0, n, 2 * count // 3)] + 0.05 * noise).astype(np.float32)
        far = gen.standard_normal((count - len(near), DIM)).astype(np.float32)
        return stored, unit(np.concatenate([near, far])), {"kind": kind}
    cache = cache_dir / f"{kind}-{n}-{count}-{seed}.npz"
    if cache.exists():
        data = np.load(cache)
        info = {"kind": kind, "cache": str(cache), "cached": True}
        return unit(data["stored"]), unit(data["queries"]), info
    make = one_sentence if kind == "sentences" else one_name
    texts = distinct(rng, n, make)
    asked = queries(rng, texts, count, kind == "sentences")
    t0, c0 = time.perf_counter(), time.process_time()
    stored, query_vectors = embed(texts), embed(asked)
    info = {
        "kind": kind,
        "cache": str(cache),
        "cached": False,
        "embed_s": round(time.perf_counter() - t0, 1),
        "embed_cpu_s": round(time.process_time() - c0, 1),
        "examples": texts[:8],
        "query_examples": [asked[0], asked[count // 3], asked[-1]],
    }
    cache_dir.mkdir(parents=True, exist_ok=True)
    np.savez(cache, stored=stored, queries=query_vectors)
    (cache_dir / f"{kind}-{n}-{count}-{seed}.json").write_text(
        json.dumps({"stored": texts, "queries": asked})
    )
    return unit(stored), unit(query_vectors), info


@dataclass(frozen=True)
class Config:
    m: int | None  # None: the baseline, vectors stored and not indexed
    ef_construction: int | None = None
    ef_runtime: int | None = None

    @property
    def name(self) -> str:
        if self.m is None:
            return "no vector index"
        return f"M={self.m} efC={self.ef_construction} efR={self.ef_runtime}"

    @staticmethod
    def parse(text: str) -> Config:
        if text == "none":
            return Config(None)
        m, efc, efr = (int(x) for x in text.split(":"))
        return Config(m, efc, efr)


def cpu_s(client: redis.Redis) -> float:
    info: dict[str, Any] = client.info("cpu")  # pyright: ignore[reportUnknownMemberType]
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def used_memory(client: redis.Redis) -> int:
    info: dict[str, Any] = client.info("memory")  # pyright: ignore[reportUnknownMemberType]
    return int(info["used_memory"])


def exact_top(stored: F32, query_vectors: F32) -> npt.NDArray[np.int64]:
    sims = query_vectors @ stored.T
    top = np.argpartition(-sims, K, axis=1)[:, :K]
    return np.take_along_axis(top, np.argsort(-np.take_along_axis(sims, top, 1), 1), 1)


def pca_agreement(stored: F32, query_vectors: F32, truth: Any, dims: list[int]) -> dict[str, Any]:
    """Offline (numpy only): how much of the exact top 10 a projection of every vector onto
    its first `d` principal components (fitted on the stored vectors) keeps."""
    mean = stored.mean(axis=0)
    _, _, components = np.linalg.svd(stored - mean, full_matrices=False)
    out: dict[str, Any] = {}
    for d in dims:
        basis = components[:d].T.astype(np.float32)
        # Vectors are projected as they are (not centred): at d = 384 this is a rotation,
        # which keeps every cosine.
        low_stored = unit((stored @ basis).astype(np.float32))
        low_queries = unit((query_vectors @ basis).astype(np.float32))
        found = exact_top(low_stored, low_queries)
        kept = [len(set(truth[q].tolist()) & set(found[q].tolist())) / K for q in range(len(found))]
        first = [int(found[q][0] == truth[q][0]) for q in range(len(found))]
        out[str(d)] = {
            "recall_at_10": round(statistics.fmean(kept), 4),
            "top1_same": round(statistics.fmean(first), 4),
            "bytes_per_vector_f32": 4 * d,
        }
    return out


def load_avg() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


async def write(store: FalkorStore, stored: F32, budget_end: float) -> int:
    written = 0
    for start in range(0, len(stored), BATCH):
        if time.monotonic() > budget_end:
            break
        rows = [
            entity_row(i, f"name {i}", "thing", None, exists=False)
            | {"uuid": f"n{i}", "vec": stored[i].tolist()}
            for i in range(start, min(start + BATCH, len(stored)))
        ]
        await store.query(NS, CREATE_ENTITIES, {"rows": rows, "now": 0, "iso": ""})
        written += len(rows)
    return written


def knn(client: redis.Redis, vector: F32, ask: int) -> tuple[list[int], float, float]:
    """The first K answers as stored indexes, FalkorDB's execution ms, the wall ms."""
    literal = str(compact_vectors(vector.tolist(), DIM))
    t0 = time.perf_counter()
    reply: Any = client.execute_command(
        "GRAPH.RO_QUERY",
        NS,
        f"CYPHER v={literal} CALL db.idx.vector.queryNodes('{ENTITY}', 'embedding', {ask}, "
        "vecf32($v)) YIELD node, score RETURN node.uuid ORDER BY score ASC",
        "--compact",
    )
    wall = (time.perf_counter() - t0) * 1000
    rows = reply[1]
    ids = [int(str(r[0][1], "utf-8")[1:]) for r in rows][:K]
    stats = [str(s, "utf-8") for s in reply[2]]
    took = next(float(s.split(":")[1].split()[0]) for s in stats if "execution time" in s)
    return ids, took, wall


def kinds(count: int) -> list[tuple[int, int]]:
    """Where the queries of each kind lie in the list `queries` returns."""
    return [(0, count // 3), (count // 3, 2 * count // 3), (2 * count // 3, count)]


def pct(values: list[float], q: float) -> float:
    return round(statistics.quantiles(values, n=100)[int(q) - 1], 3) if len(values) > 1 else 0.0


def search(client: redis.Redis, query_vectors: F32, truth: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for ask in ASKS:
        hits: list[float] = []
        took: list[float] = []
        wall: list[float] = []
        for q, vector in enumerate(query_vectors):
            ids, t, w = knn(client, vector, ask)
            expected = {int(x) for x in truth[q]}
            hits.append(len(expected & set(ids)) / K)
            took.append(t)
            wall.append(w)
        out[f"k={ask}"] = {
            "recall_at_10": round(statistics.fmean(hits), 4),
            "recall_typo_reordered_unrelated": [
                round(statistics.fmean(hits[a:b]), 4) for a, b in kinds(len(hits)) if b > a
            ],
            "server_ms_p50": pct(took, 50),
            "server_ms_p95": pct(took, 95),
            "wall_ms_p50": pct(wall, 50),
            "wall_ms_p95": pct(wall, 95),
        }
    return out


async def run_config(
    config: Config, stored: F32, query_vectors: F32, truth: Any, base: Path, budget_end: float
) -> dict[str, Any]:
    data_dir = base / (config.name.replace(" ", "_").replace("=", "") or "baseline")
    shutil.rmtree(data_dir, ignore_errors=True)
    out: dict[str, Any] = {"config": config.name, "load_before": load_avg()}
    settings = StorageSettings(
        data_dir=data_dir,
        embedded_linger_s=0,
        query_timeout_ms=0,
        hnsw_m=config.m,
        hnsw_ef_construction=config.ef_construction,
        hnsw_ef_runtime=config.ef_runtime,
    )
    server = EmbeddedFalkorDB(data_dir, linger_s=0, load_timeout=3600)
    server.ensure_running()
    store = FalkorStore(settings, embedded=server)
    client = redis.Redis(unix_socket_path=server.socket_path)
    try:
        await store.ensure_vectors(NS, MODEL, DIM)
        if config.m is None:
            await store.query(NS, f"DROP VECTOR INDEX FOR (n:{ENTITY}) ON (n.embedding)")
        res = await store.query(
            NS,
            "CALL db.indexes() YIELD label, options WHERE label = $l RETURN options",
            {"l": ENTITY},
        )
        out["options"] = res.rows[0][0].get("embedding") if res.rows else None
        server.compact(30.0)
        mem0, cpu0, t0 = used_memory(client), cpu_s(client), time.perf_counter()
        written = await write(store, stored, budget_end)
        out["vectors"] = written
        out["insert_wall_s"] = round(time.perf_counter() - t0, 1)
        out["insert_falkordb_cpu_s"] = round(cpu_s(client) - cpu0, 1)
        out["insert_cpu_ms_per_vector"] = round((cpu_s(client) - cpu0) / written * 1000, 3)
        out["used_memory_growth_mb"] = round((used_memory(client) - mem0) / 1e6, 1)
        out["bytes_per_vector"] = round((used_memory(client) - mem0) / written)
        out["load_after_insert"] = load_avg()
        if config.m is not None:
            if written < len(stored):  # cut short by the budget: score against what is stored
                truth = exact_top(stored[:written], query_vectors)
            out["search"] = search(client, query_vectors, truth)
        client.close()
        t0 = time.perf_counter()
        await store.close()  # the last user: rewrites the append-only file, then stops
        out["clean_stop_s"] = round(time.perf_counter() - t0, 1)
        out["load_before_start"] = load_avg()
        server = EmbeddedFalkorDB(data_dir, linger_s=0, load_timeout=3600)
        t0 = time.perf_counter()
        server.ensure_running()
        out["start_s"] = round(time.perf_counter() - t0, 1)
        client = redis.Redis(unix_socket_path=server.socket_path)
        out["start_falkordb_cpu_s"] = round(cpu_s(client), 1)
        out["used_memory_after_start_mb"] = round(used_memory(client) / 1e6, 1)
        out["load_after_start"] = load_avg()
    finally:
        client.close()
        server.stop(force=True)
        shutil.rmtree(data_dir, ignore_errors=True)
    return out


async def main(args: argparse.Namespace) -> dict[str, Any]:
    budget_end = time.monotonic() + args.budget_s
    stored, query_vectors, made = dataset(
        args.vectors, args.n, args.queries, args.seed, args.cache_dir
    )
    truth = exact_top(stored, query_vectors)
    result: dict[str, Any] = {"n": args.n, "queries": args.queries, "vectors": made, "runs": []}
    if args.pca:
        dims = [int(d) for d in args.pca.split(",")]
        result["pca"] = pca_agreement(stored, query_vectors, truth, dims)
        print(json.dumps({"pca": result["pca"]}), flush=True)
    base = Path(args.data_dir or tempfile.mkdtemp(prefix="polyg-vector-index-"))
    for text in filter(None, args.configs.split(",")):
        config = Config.parse(text.strip())
        if time.monotonic() > budget_end:
            result["runs"].append({"config": config.name, "skipped": "over --budget-s"})
            continue
        run = await run_config(config, stored, query_vectors, truth, base, budget_end)
        print(json.dumps(run), flush=True)
        result["runs"].append(run)
    if not args.data_dir:
        shutil.rmtree(base, ignore_errors=True)
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="vectors stored")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--vectors", choices=("names", "sentences", "random"), default="names")
    parser.add_argument(
        "--configs",
        default="none,16:200:10,16:100:10,16:50:10,8:200:10,8:100:10,8:50:10",
        help="comma-separated M:efConstruction:efRuntime, 'none' for the unindexed baseline",
    )
    parser.add_argument("--seed", type=int, default=38)
    parser.add_argument("--cache-dir", type=Path, default=Path.home() / ".cache" / "polyg-bench")
    parser.add_argument("--data-dir", type=Path, help="where the servers' data dirs go")
    parser.add_argument("--budget-s", type=float, default=3600.0, help="no new config after this")
    parser.add_argument(
        "--pca", help="also: top-10 agreement of a projection to these dimensions, e.g. 128,192"
    )
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    args = parser.parse_args()
    if args.n < 2 * K or args.queries < 3:
        parser.error("--n must be at least 20 and --queries at least 3")
    result = anyio.run(main, args)
    text = json.dumps(result, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text)
