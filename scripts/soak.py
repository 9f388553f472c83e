"""Soak test: a bounded mixed workload against the real HTTP server while FalkorDB is
SIGKILLed and restarted, then a check that every acknowledged write is still there.

    uv run python scripts/soak.py --duration 180 --clients 4 --restarts 2 --outage 5

The script starts its own FalkorDB (the embedded server, in a temporary data dir) and
the real `polyg-mcp --http` process pointed at it through FALKORDB_URL, so the server
treats it as an external database it does not restart itself. Clients call a mix of
write, read and recall tools (plus a share of deliberately bad calls) over Streamable
HTTP with a bearer key. In the middle the FalkorDB process is killed (SIGKILL) and
started again after `--outage` seconds, `--restarts` times. The report gives calls
per second, errors per phase, the error rate during each outage, the time to
recover, the server's RSS over the run, and how many acknowledged writes are missing
afterwards (the goal is zero). `--json` writes the numbers to a file.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, TextContent
from polyg_core.config import StorageSettings
from polyg_core.storage.embedded import EmbeddedFalkorDB
from polyg_core.storage.store import FalkorStore

NS = "soak"
BAD_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("add_entity", {"name": "", "entity_type": "Service"}),
    ("add_entity", {"name": "x'}) MATCH (n) DETACH DELETE n //", "graph": "no such graph!"}),
    ("add_causal_link", {"cause": "a", "effect": "b", "confidence": float("nan")}),
    ("add_event", {"description": "late", "occurred_at": "9999-99-99"}),
    ("recall", {"question": 42}),
    ("remember", {"content": "\x00"}),
    ("get_entity", {"entity": ["not", "a", "string"]}),
    ("temporal_expand", {"end": "+275760-09-13T00:00:00Z"}),
    ("query_timeline", {"limit": -5}),
    ("clear_graph", {"which": "everything"}),
]


@dataclass
class Call:
    """One tool call as the client saw it."""

    t: float
    tool: str
    ok: bool
    kind: str  # ok, tool_error, storage_unavailable, bad_input_refused, internal, transport
    latency_ms: float
    bad: bool = False


@dataclass
class Outage:
    killed_at: float
    restarted_at: float = 0.0
    first_ok_after: float | None = None


@dataclass
class Ledger:
    """What the clients were told was stored."""

    entities: set[str] = field(default_factory=set[str])
    events: set[str] = field(default_factory=set[str])
    links: set[tuple[str, str]] = field(default_factory=set[tuple[str, str]])
    memories: set[str] = field(default_factory=set[str])


def text_of(result: CallToolResult) -> str:
    block = result.content[0] if result.content else None
    return block.text if isinstance(block, TextContent) else ""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_slope_mb_per_hour(samples: list[tuple[float, int]]) -> float | None:
    """Least-squares slope of the server's RSS after the first 10 s, in MB per hour."""
    warm = [(t, kb / 1024) for t, kb in samples if t >= 10]
    if len(warm) < 3:
        return None
    n = len(warm)
    mean_t = sum(t for t, _ in warm) / n
    mean_m = sum(m for _, m in warm) / n
    var = sum((t - mean_t) ** 2 for t, _ in warm)
    if var == 0:
        return None
    cov = sum((t - mean_t) * (m - mean_m) for t, m in warm)
    return round(cov / var * 3600, 1)


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class Soak:
    def __init__(self, args: argparse.Namespace, data_dir: Path) -> None:
        self.args = args
        self.db = EmbeddedFalkorDB(data_dir / "db")
        self.key = secrets.token_urlsafe(24)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.calls: list[Call] = []
        self.outages: list[Outage] = []
        self.ledger = Ledger()
        self.rss: list[tuple[float, int]] = []
        self.started = 0.0
        self.deadline = 0.0
        self.server: subprocess.Popen[bytes] | None = None
        self.stop = False
        self.counter = 0
        self.examples: dict[str, list[str]] = {}

    # -- processes ----------------------------------------------------------------------------

    def start_server(self) -> None:
        env = {
            **os.environ,
            "FALKORDB_URL": f"unix://{self.db.socket_path}",
            "FALKORDB_GRAPH": NS,
            "POLYG_API_KEY": self.key,
            "POLYG_PORT": str(self.port),
            "POLYG_LOG_LEVEL": "WARNING",
            "POLYG_MAX_RETRIES": "1",
            # The mix calls tools outside the default profile (add_event, semantic_search,
            # get_statistics, ...): without this most calls were "Unknown tool".
            "POLYG_TOOLS": "all",
        }
        for var in ("LLM_MODEL", "FALKORDB_HOST", "POLYG_DATA_DIR"):
            env.pop(var, None)
        log_path = self.args.server_log or Path(self.db.data_dir) / "server.log"
        log = open(log_path, "wb")  # noqa: SIM115 - lives as long as the process
        self.server = subprocess.Popen(
            [sys.executable, "-m", "polyg_server.main", "--http", "--port", str(self.port)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )

    async def wait_healthy(self) -> None:
        async with httpx.AsyncClient() as http:
            with anyio.fail_after(120):
                while True:
                    try:
                        if (await http.get(f"{self.url}/health")).status_code == 200:
                            return
                    except httpx.HTTPError:
                        pass
                    await anyio.sleep(0.2)

    def kill_db(self) -> None:
        proc = self.db._process  # pyright: ignore[reportPrivateUsage]
        assert proc is not None
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)

    # -- workload -----------------------------------------------------------------------------

    def next_id(self) -> int:
        self.counter += 1
        return self.counter

    def plan(self, rng: random.Random, worker: int) -> tuple[str, dict[str, Any], Any]:
        """A call and what the ledger records when it is acknowledged."""
        roll = rng.random()
        i = self.next_id()
        if roll < self.args.bad_share:
            name, args = rng.choice(BAD_CALLS)
            return name, args, "bad"
        roll = rng.random()
        if roll < 0.25:
            name = f"svc-{worker}-{i}"
            return "add_entity", {"name": name, "entity_type": "Service"}, ("entity", name)
        if roll < 0.40:
            desc = f"deploy {i} of svc-{worker} finished"
            return (
                "add_event",
                {"description": desc, "occurred_at": "2026-01-07T14:00:00Z"},
                ("event", desc),
            )
        if roll < 0.52:
            cause, effect = f"config drift {i}", f"outage {i} of worker {worker}"
            return (
                "add_causal_link",
                {"cause": cause, "effect": effect, "confidence": 0.8},
                ("link", (cause, effect)),
            )
        if roll < 0.60:
            content = f"Note {i}: the cache of svc-{worker} failed because disk {i} was full."
            return "remember", {"content": content}, ("memory", content)
        if roll < 0.68:
            return "recall", {"question": f"Why did outage {max(1, i - 5)} happen?"}, None
        if roll < 0.80:
            return "semantic_search", {"query": "disk full cache failure", "k": 5}, None
        if roll < 0.90:
            return "query_timeline", {"limit": 20}, None
        return "get_statistics", {}, None

    def record_ack(self, what: Any) -> None:
        if not isinstance(what, tuple):
            return
        kind, value = what
        if kind == "entity":
            self.ledger.entities.add(value)
        elif kind == "event":
            self.ledger.events.add(value)
        elif kind == "link":
            self.ledger.links.add(value)
        elif kind == "memory":
            self.ledger.memories.add(value)

    async def worker(self, n: int) -> None:
        rng = random.Random(n)
        headers = {"Authorization": f"Bearer {self.key}"}
        while not self.stop:
            try:
                async with httpx2.AsyncClient(headers=headers, timeout=60) as http_client:
                    transport = streamable_http_client(f"{self.url}/mcp", http_client=http_client)
                    async with Client(transport) as client:
                        while not self.stop:
                            await self.one_call(client, rng, n)
            except Exception as exc:  # a broken session: count it, open a new one
                self.calls.append(
                    Call(
                        time.monotonic() - self.started,
                        f"session:{exc!r}"[:80],
                        False,
                        "transport",
                        0,
                    )
                )
                await anyio.sleep(0.5)

    async def one_call(self, client: Client, rng: random.Random, n: int) -> None:
        if len(self.calls) >= self.args.max_calls or time.monotonic() >= self.deadline:
            self.stop = True
            return
        name, args, what = self.plan(rng, n)
        t0 = time.monotonic()
        try:
            with anyio.fail_after(60):
                result = await client.call_tool(name, args)
        except Exception as exc:
            self.calls.append(
                Call(t0 - self.started, name, False, "transport", 0, bad=what == "bad")
            )
            raise exc
        latency = (time.monotonic() - t0) * 1000
        text = text_of(result)
        if not result.is_error:
            kind = "ok"
            self.record_ack(what)
        elif text.startswith("internal error"):
            kind = "internal"
        elif text.startswith("Storage unavailable"):
            kind = "storage_unavailable"
        elif what == "bad":
            kind = "bad_input_refused"
        else:
            kind = "tool_error"
        ok = not result.is_error or kind == "bad_input_refused"
        if kind not in ("ok", "bad_input_refused"):
            seen = self.examples.setdefault(kind, [])
            if len(seen) < 3:
                seen.append(f"{name} at {t0 - self.started:.1f}s: {text[:300]}")
        self.calls.append(Call(t0 - self.started, name, ok, kind, latency, bad=what == "bad"))
        if kind == "ok" and self.outages:
            last = self.outages[-1]
            if (
                last.restarted_at
                and last.first_ok_after is None
                and t0 - self.started >= last.restarted_at
            ):
                last.first_ok_after = time.monotonic() - self.started
        if what == "bad" and not result.is_error:
            self.calls[-1].kind = "bad_input_accepted"
        await anyio.sleep(self.args.think)

    async def chaos(self) -> None:
        span = self.args.duration
        for k in range(self.args.restarts):
            at = span * (k + 1) / (self.args.restarts + 1)
            await anyio.sleep(max(0.0, self.started + at - time.monotonic()))
            if self.stop:
                return
            outage = Outage(killed_at=time.monotonic() - self.started)
            await anyio.to_thread.run_sync(self.kill_db)
            self.outages.append(outage)
            print(f"[{outage.killed_at:6.1f}s] FalkorDB killed", flush=True)
            await anyio.sleep(self.args.outage)
            try:
                await anyio.to_thread.run_sync(self.db.ensure_running)
            except Exception:
                # The data dir is temporary: keep what the failed start left, to read it.
                kept = Path(tempfile.gettempdir()) / f"polyg-soak-failed-{os.getpid()}"
                shutil.copytree(
                    self.db.db_dir,
                    kept,
                    dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("*.sock"),
                )
                print(f"FalkorDB did not start again; its files are kept in {kept}", flush=True)
                raise
            outage.restarted_at = time.monotonic() - self.started
            print(f"[{outage.restarted_at:6.1f}s] FalkorDB restarted", flush=True)

    async def sample_rss(self) -> None:
        assert self.server is not None
        while not self.stop:
            self.rss.append((time.monotonic() - self.started, rss_kb(self.server.pid)))
            await anyio.sleep(2)
        self.rss.append((time.monotonic() - self.started, rss_kb(self.server.pid)))

    # -- verification -------------------------------------------------------------------------

    async def missing(self) -> dict[str, list[Any]]:
        store = FalkorStore(StorageSettings(url=f"unix://{self.db.socket_path}"))
        await store.connect()
        try:
            # Everything stored is read once and compared here: a membership test against
            # thousands of acknowledged values inside the query (no index on these
            # properties) ran past the query timeout after an hour of writes.
            async def stored(cypher: str) -> set[Any]:
                res = await store.query(NS, cypher, read_only=True, timeout_ms=300_000)
                return {tuple(r) if len(r) > 1 else r[0] for r in res.rows}

            ents = await stored("MATCH (e:E_Entity) RETURN DISTINCT e.name")
            evs = await stored("MATCH (e:T_Event) RETURN DISTINCT e.description")
            mems = await stored("MATCH (m:S_Memory) RETURN DISTINCT m.content")
            links = await stored(
                "MATCH (c:C_Node)-[:C_CAUSES]->(e:C_Node) RETURN DISTINCT c.description, e.description"
            )
            return {
                "entities": sorted(self.ledger.entities - ents),
                "events": sorted(self.ledger.events - evs),
                "memories": sorted(self.ledger.memories - mems),
                "causal_links": sorted(self.ledger.links - links),
            }
        finally:
            await store.close()

    # -- run ----------------------------------------------------------------------------------

    async def run(self) -> dict[str, Any]:
        await anyio.to_thread.run_sync(self.db.ensure_running)
        self.start_server()
        try:
            await self.wait_healthy()
            self.started = time.monotonic()
            self.deadline = self.started + self.args.duration
            async with anyio.create_task_group() as tg:
                tg.start_soon(self.chaos)
                tg.start_soon(self.sample_rss)
                for n in range(self.args.clients):
                    tg.start_soon(self.worker, n)
            lost = await self.missing()
            server_alive = self.server is not None and self.server.poll() is None
            return self.report(lost, server_alive)
        finally:
            if self.server is not None:
                self.server.send_signal(signal.SIGTERM)
                try:
                    self.server.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    self.server.kill()
            await anyio.to_thread.run_sync(self.db.stop)

    def report(self, lost: dict[str, list[Any]], server_alive: bool) -> dict[str, Any]:
        elapsed = max((c.t for c in self.calls), default=0.0)
        by_kind: dict[str, int] = {}
        for c in self.calls:
            by_kind[c.kind] = by_kind.get(c.kind, 0) + 1
        outages: list[dict[str, Any]] = []
        for o in self.outages:
            end = o.first_ok_after or o.restarted_at
            window = [c for c in self.calls if o.killed_at <= c.t <= end and not c.bad]
            errors = [c for c in window if not c.ok]
            outages.append(
                {
                    "killed_at_s": round(o.killed_at, 1),
                    "restarted_at_s": round(o.restarted_at, 1),
                    "calls_during": len(window),
                    "errors_during": len(errors),
                    "error_rate": round(len(errors) / len(window), 3) if window else None,
                    "error_kinds": sorted({c.kind for c in errors}),
                    "recovered_s_after_restart": round(o.first_ok_after - o.restarted_at, 2)
                    if o.first_ok_after
                    else None,
                    "recovered_s_after_kill": round(o.first_ok_after - o.killed_at, 2)
                    if o.first_ok_after
                    else None,
                }
            )
        in_outage = {
            id(c)
            for o in self.outages
            for c in self.calls
            if o.killed_at <= c.t <= (o.first_ok_after or o.restarted_at)
        }
        outside = [c for c in self.calls if id(c) not in in_outage and not c.bad]
        warm = [kb for t, kb in self.rss if t >= 10] or [kb for _, kb in self.rss]
        latencies = sorted(c.latency_ms for c in self.calls if c.kind == "ok")
        return {
            "command": " ".join(["uv run python scripts/soak.py", *sys.argv[1:]]),
            "duration_s": round(elapsed, 1),
            "clients": self.args.clients,
            "calls": len(self.calls),
            "calls_per_s": round(len(self.calls) / elapsed, 1) if elapsed else None,
            "bad_inputs_tried": sum(1 for c in self.calls if c.bad),
            "bad_inputs_accepted": by_kind.get("bad_input_accepted", 0),
            "by_kind": by_kind,
            "errors_outside_outages": sum(1 for c in outside if not c.ok),
            "internal_errors": by_kind.get("internal", 0),
            "latency_ms_p50": round(latencies[len(latencies) // 2], 1) if latencies else None,
            "latency_ms_p95": round(latencies[int(len(latencies) * 0.95)], 1)
            if latencies
            else None,
            "outages": outages,
            "rss_mb_start": round(warm[0] / 1024, 1) if warm else None,
            "rss_mb_end": round(warm[-1] / 1024, 1) if warm else None,
            "rss_mb_max": round(max(warm) / 1024, 1) if warm else None,
            "rss_mb_per_hour": rss_slope_mb_per_hour(self.rss),
            "acknowledged_writes": {
                "entities": len(self.ledger.entities),
                "events": len(self.ledger.events),
                "causal_links": len(self.ledger.links),
                "memories": len(self.ledger.memories),
            },
            "lost": {k: len(v) for k, v in lost.items()},
            "lost_examples": {k: v[:3] for k, v in lost.items() if v},
            "server_alive_at_end": server_alive,
            "error_examples": self.examples,
        }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--duration", type=float, default=180, help="seconds of load (default 180)")
    p.add_argument("--max-calls", type=int, default=20_000, help="stop after this many calls")
    p.add_argument("--clients", type=int, default=4, help="concurrent MCP sessions")
    p.add_argument("--restarts", type=int, default=2, help="FalkorDB kills during the run")
    p.add_argument("--outage", type=float, default=5, help="seconds FalkorDB stays down")
    p.add_argument("--bad-share", type=float, default=0.05, help="share of deliberately bad calls")
    p.add_argument("--think", type=float, default=0.0, help="pause between a client's calls (s)")
    p.add_argument("--json", type=Path, help="also write the report to this file")
    p.add_argument("--server-log", type=Path, help="keep the server's log in this file")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="polyg-soak-") as tmp:
        report = anyio.run(Soak(args, Path(tmp)).run)
    text = json.dumps(report, indent=2, default=str)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    lost = sum(report["lost"].values())
    ok = lost == 0 and report["internal_errors"] == 0 and report["server_alive_at_end"]
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
