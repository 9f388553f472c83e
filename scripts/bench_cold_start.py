"""Cold start of `polyg-mcp` over stdio: process spawn to tools listed, to the first write
answered, and the server's memory after that write.

Each round starts a fresh server with a new, empty data directory (so the embedded
FalkorDB starts too), speaks MCP's JSON-RPC over the pipes (initialize, tools/list,
then one `add_entity` call, which loads the embedding model and creates the
namespace's indexes) and reads the server's RSS from /proc after the write (the
embedded FalkorDB is a separate process: its RSS is reported beside it). The server's
CPU time (user + system, from /proc) at both points is reported too: on a shared
machine it moves less with the load than the wall-clock times do.

With `--data-dir DIR --namespace NS --questions FILE` each round starts a server on an
existing data dir instead (a FalkorDB already running there is attached to, as a new
session's server attaches to the shared one) and its first tool call is `recall` of a
question drawn from FILE (the JSON list `scripts/bench_first_recall.py --about-entities`
writes): spawn to the first recall answered, then `--later` more, with the server's CPU.

Usage:
    uv run python scripts/bench_cold_start.py [--rounds 5]
    uv run python scripts/bench_cold_start.py --rounds 3 --data-dir DIR --namespace NS \
        --questions DIR/questions-NS.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, cast

PROTOCOL = "2025-06-18"


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    out: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(entry.name))
    return out


class _Server:
    def __init__(self, data_dir: str, namespace: str | None = None) -> None:
        env = {**os.environ, "POLYG_DATA_DIR": data_dir, "LOG_LEVEL": "WARNING"}
        if namespace:
            env["FALKORDB_GRAPH"] = namespace
        env.pop("LLM_MODEL", None)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "polyg_server.main"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self._next = 0
        self._buf = b""

    def send(self, method: str, params: dict[str, Any], *, notify: bool = False) -> int:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if not notify:
            self._next += 1
            msg["id"] = self._next
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(msg).encode() + b"\n")
        self.proc.stdin.flush()
        return self._next

    def reply(self, request_id: int, timeout: float = 120.0) -> dict[str, Any]:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while True:
            while b"\n" in self._buf:
                line, self._buf = self._buf.split(b"\n", 1)
                msg = json.loads(line)
                if msg.get("id") == request_id:
                    if "error" in msg:
                        raise RuntimeError(f"server error: {msg['error']}")
                    return msg["result"]
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no reply to request {request_id} in {timeout} s")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise RuntimeError("server closed its stdout")
                self._buf += chunk

    def stop(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def one_round() -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="polyg-cold-") as data_dir:
        t0 = time.perf_counter()
        server = _Server(data_dir)
        try:
            tools = _initialized(server)
            listed = time.perf_counter() - t0
            listed_cpu = _cpu_s(server.proc.pid)
            rid = server.send(
                "tools/call",
                {
                    "name": "add_entity",
                    "arguments": {"name": "cold-start-probe", "entity_type": "host"},
                },
            )
            result = server.reply(rid)
            written = time.perf_counter() - t0
            written_cpu = _cpu_s(server.proc.pid)
            if result.get("isError"):
                raise RuntimeError(f"add_entity failed: {result}")
            rss = _rss_mb(server.proc.pid)
            db = sum(_rss_mb(c) for c in _children(server.proc.pid))
            return {
                "tools": float(len(tools["tools"])),
                "listed_s": listed,
                "written_s": written,
                "listed_cpu_s": listed_cpu,
                "written_cpu_s": written_cpu,
                "server_rss_mb": rss,
                "falkordb_rss_mb": db,
            }
        finally:
            server.stop()


def _initialized(server: _Server) -> dict[str, Any]:
    rid = server.send(
        "initialize",
        {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "bench-cold-start", "version": "0"},
        },
    )
    server.reply(rid)
    server.send("notifications/initialized", {}, notify=True)
    return server.reply(server.send("tools/list", {}))


def recall_round(
    data_dir: str, namespace: str, questions: list[str], later_calls: int
) -> dict[str, float]:
    """A new server on an existing data dir; its first tool calls are recalls."""
    first_q, *others = random.sample(questions, 1 + later_calls)
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    server = _Server(data_dir, namespace)
    try:
        _initialized(server)
        listed = time.perf_counter() - t0
        t1 = time.perf_counter()
        result = server.reply(
            server.send("tools/call", {"name": "recall", "arguments": {"question": first_q}}),
            timeout=600.0,
        )
        answered = time.perf_counter()
        cpu = _cpu_s(server.proc.pid)
        if result.get("isError"):
            raise RuntimeError(f"recall failed: {result}")
        later: list[float] = []
        for question in others:
            t2 = time.perf_counter()
            reply = server.reply(
                server.send("tools/call", {"name": "recall", "arguments": {"question": question}})
            )
            later.append(time.perf_counter() - t2)
            if reply.get("isError"):
                raise RuntimeError(f"recall failed: {reply}")
        return {
            "load": load,
            "listed_s": listed,
            "first_recall_answered_s": answered - t0,
            "first_recall_call_s": answered - t1,
            "server_cpu_at_first_answer_s": cpu,
            "later_recalls_median_s": statistics.median(later),
            "later_recalls_max_s": max(later),
            "server_rss_mb": _rss_mb(server.proc.pid),
        }
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--data-dir", default=None, help="an existing data dir (else a new one)")
    parser.add_argument("--namespace", default=None, help="with --data-dir: the namespace")
    parser.add_argument(
        "--questions", type=Path, default=None, help="with --data-dir: JSON list of questions"
    )
    parser.add_argument("--later", type=int, default=5, help="recalls after the first")
    args = parser.parse_args()
    if args.data_dir is not None:
        if args.namespace is None or args.questions is None:
            raise SystemExit("--data-dir needs --namespace and --questions")
        asked: list[Any] = json.loads(args.questions.read_text())
        questions: list[str] = [
            str(cast(dict[str, Any], q)["question"]) if isinstance(q, dict) else str(q)
            for q in asked
        ]
        for _ in range(max(1, args.rounds)):
            row = recall_round(args.data_dir, args.namespace, questions, args.later)
            print(json.dumps({k: round(v, 3) for k, v in row.items()}), flush=True)
        return
    rounds = [one_round() for _ in range(max(1, args.rounds))]
    print(f"rounds: {len(rounds)}; tools listed: {int(rounds[0]['tools'])}; load {os.getloadavg()}")
    print("| measure | min | median | max |")
    print("|---|---|---|---|")
    for key in (
        "listed_s",
        "written_s",
        "listed_cpu_s",
        "written_cpu_s",
        "server_rss_mb",
        "falkordb_rss_mb",
    ):
        values = [r[key] for r in rounds]
        print(
            f"| {key} | {min(values):.2f} | {statistics.median(values):.2f} | {max(values):.2f} |"
        )


if __name__ == "__main__":
    main()
