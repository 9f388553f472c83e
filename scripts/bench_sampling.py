"""What lending the client's model (MCP sampling) costs polyg itself, per tool call.

Usage:
    uv run python scripts/bench_sampling.py [--n 30] [--notes 40]

An in-memory MCP client session calls `recall` and `remember` on a server without
LLM_MODEL, in three ways: a client without sampling (the rules), a 2026-07-28 client
that lends its model (the call answers `InputRequiredResult` and runs again with the
replies: recall three rounds, remember two), and a 2025-11-25 client (one request per
step on the back-channel). The client's model is a script that answers at once, so the
times are polyg's own: the rounds, the prompts, parsing and validating the replies.
Invented notes; the embedded FalkorDB in a temporary directory.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Literal

import anyio
from mcp import Client
from mcp.client.context import ClientRequestContext
from mcp_types import CreateMessageRequestParams, CreateMessageResult, TextContent
from polyg_core.config import Settings, StorageSettings
from polyg_core.memory import Memory
from polyg_server.app import create_server
from polyg_server.context import ServerContext

GRAPH = "bench_sampling"
PEOPLE = ["Odile Varga", "Teodor Lunn", "Mira Castellane", "Ansel Quibe", "Rhea Tollan"]
PLACES = ["Kestrel Ridge", "Ferngate", "Lowmarsh", "Aldersea", "Quarry Point"]
TASKS = ["recalibrated the heliostat", "repaired the pump", "logged the tide", "moved the kiln"]


def note(i: int) -> str:
    who, where, what = PEOPLE[i % 5], PLACES[(i // 5) % 5], TASKS[i % 4]
    return f"{who} {what} at {where} on day {i}."


def reply_for(params: CreateMessageRequestParams) -> str:
    system = params.system_prompt or ""
    title = json.loads(system.rsplit("\n", 1)[-1])["title"]
    if title == "IntentDraft":
        return json.dumps({"type": "WHO", "entities": ["Kestrel Ridge"], "confidence": 0.9})
    if title == "ExtractionDraft":
        return json.dumps({"entities": [{"name": "Kestrel Ridge", "entity_type": "place"}]})
    return json.dumps({"answer": "Odile Varga.", "confidence": 0.8})


async def scripted_model(
    context: ClientRequestContext, params: CreateMessageRequestParams
) -> CreateMessageResult:
    return CreateMessageResult(
        role="assistant", content=TextContent(type="text", text=reply_for(params)), model="script"
    )


Way = Literal["rules", "2026-07-28", "2025-11-25"]
WAYS: tuple[Way, ...] = ("rules", "2026-07-28", "2025-11-25")


async def timed_call(client: Client, way: Way, tool: str, args: dict[str, Any]) -> float:
    started = time.perf_counter()
    result = await client.call_tool(tool, args)
    elapsed = (time.perf_counter() - started) * 1000
    data: Any = result.structured_content
    if result.is_error or data["degraded"] is not (way == "rules"):
        raise RuntimeError(f"{way} {tool}: unexpected answer {data}")
    return elapsed


async def measure(ctx: ServerContext, n: int) -> dict[tuple[Way, str], list[float]]:
    """The three ways side by side, call after call, so none runs on warmer caches."""
    times: dict[tuple[Way, str], list[float]] = {}
    async with contextlib.AsyncExitStack() as stack:
        clients: dict[Way, Client] = {}
        for way in WAYS:
            client = Client(
                create_server(ctx),
                sampling_callback=None if way == "rules" else scripted_model,
                mode="legacy" if way == "2025-11-25" else "auto",
            )
            clients[way] = await stack.enter_async_context(client)
            for _ in range(3):  # warm-up
                await client.call_tool("recall", {"question": "Who was at Kestrel Ridge?"})
        for i in range(n):
            for way, client in clients.items():
                question = {"question": f"Who {TASKS[i % 4]} at Kestrel Ridge?"}
                content = {"content": f"{way}: {note(1000 + i)}"}
                for tool, args in (("recall", question), ("remember", content)):
                    elapsed = await timed_call(client, way, tool, args)
                    times.setdefault((way, tool), []).append(elapsed)
    return times


def pct(xs: list[float], p: float) -> float:
    ordered = sorted(xs)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


async def main(n: int, notes: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(storage=StorageSettings(data_dir=Path(tmp), graph=GRAPH))
        memory = await Memory.open(settings)
        try:
            for i in range(notes):
                await memory.remember(note(i))
            ctx = ServerContext(
                store=memory.store, settings=settings, embedder=memory.embedder, memory=memory
            )
            print(f"{notes} notes; {n} calls of each tool per way; times in ms (median / p95)")
            print(f"{'way':<12} {'recall':>16} {'remember':>16}")
            times = await measure(ctx, n)
            for way in WAYS:
                cells = [
                    f"{statistics.median(times[way, t]):7.1f} / {pct(times[way, t], 95):6.1f}"
                    for t in ("recall", "remember")
                ]
                print(f"{way:<12} {cells[0]:>16} {cells[1]:>16}")
        finally:
            await memory.store.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--n", type=int, default=30)
    parser.add_argument("--notes", type=int, default=40)
    args = parser.parse_args()
    anyio.run(main, args.n, args.notes)
