"""Time to first render of the web explorer with N nodes, in headless Chromium.

Writes a synthetic namespace (N nodes spread over the four layers, ~1.5 N edges inside
layers and cross-links), serves the HTTP app on 127.0.0.1 without an API key, and opens
/ui?limit=N with packages/polyg-server/ui-src/bench/page.mjs (needs /usr/bin/chromium and
`npm ci` in ui-src). Prints the page's own measurements.

    uv run python scripts/bench_ui.py --nodes 10000
"""

from __future__ import annotations

import argparse
import random
import uuid
from pathlib import Path

import anyio
import uvicorn
from polyg_core.config import Settings, StorageSettings
from polyg_core.storage.schema import CAUSAL, CONCEPT, ENTITY, EVENT, R_CAUSES, R_RELATES, X_AFFECTS
from polyg_core.storage.store import FalkorStore
from polyg_server.app import create_server
from polyg_server.context import ServerContext
from polyg_server.http import create_http_app

UI_SRC = Path(__file__).resolve().parents[1] / "packages" / "polyg-server" / "ui-src"


async def populate(store: FalkorStore, ns: str, n: int) -> None:
    rng = random.Random(7)
    per = n // 4
    ids: dict[str, list[str]] = {}
    for label, prop in (
        (ENTITY, "name"),
        (EVENT, "description"),
        (CAUSAL, "description"),
        (CONCEPT, "name"),
    ):
        rows: list[dict[str, object]] = [
            {"u": uuid.uuid4().hex, "t": f"{label} {i}", "at": 1_700_000_000_000 + i * 60_000}
            for i in range(per)
        ]
        ids[label] = [str(r["u"]) for r in rows]
        extra = ", occurred_at: r.at" if label == EVENT else ""
        await store.query(
            ns,
            f"UNWIND $rows AS r CREATE (:{label} {{uuid: r.u, {prop}: r.t{extra}}})",
            {"rows": rows},
        )
    await store.query(ns, f"CREATE INDEX FOR (n:{ENTITY}) ON (n.uuid)")
    for src, dst, rel in (
        (ENTITY, ENTITY, R_RELATES),
        (CAUSAL, CAUSAL, R_CAUSES),
        (CAUSAL, ENTITY, X_AFFECTS),
    ):
        pairs = [
            {"a": rng.choice(ids[src]), "b": rng.choice(ids[dst]), "c": round(rng.random(), 2)}
            for _ in range(n // 2)
        ]
        await store.query(
            ns,
            f"UNWIND $rows AS r MATCH (a:{src} {{uuid: r.a}}), (b:{dst} {{uuid: r.b}}) "
            f"CREATE (a)-[:{rel} {{confidence: r.c}}]->(b)",
            {"rows": pairs},
        )


async def main(nodes: int, runs: int) -> None:
    ns = f"bench_ui_{uuid.uuid4().hex[:8]}"
    settings = Settings(storage=StorageSettings(graph=ns))
    store = FalkorStore(settings.storage)
    await store.connect()
    try:
        await populate(store, ns, nodes)
        ctx = ServerContext(store=store, settings=settings)
        app = create_http_app(create_server(ctx), ctx)
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_config=None))
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve)
            with anyio.fail_after(30):
                while not server.started:  # noqa: ASYNC110 (uvicorn has no started event)
                    await anyio.sleep(0.05)
            port = server.servers[0].sockets[0].getsockname()[1]
            done = await anyio.run_process(
                [
                    "node",
                    str(UI_SRC / "bench" / "page.mjs"),
                    f"http://127.0.0.1:{port}",
                    str(nodes),
                    str(runs),
                ],
                check=True,
            )
            print(done.stdout.decode().strip())
            server.should_exit = True
    finally:
        await store.delete_graph(ns)
        await store.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    anyio.run(main, args.nodes, args.runs)
