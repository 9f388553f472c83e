"""A small agent that uses polyg over Streamable HTTP with the MCP Python SDK client.

It remembers a deployment-failure scenario (entities, relations, events, facts and
causal links through the write tools of the `graph` profile), then asks `recall` "Why did the auth service fail?" and prints the
answer with its causal chain.

Start a server first (or pass --spawn to let the agent start one):

    POLYG_API_KEY=secret POLYG_TOOLS=memory,graph uv run polyg-mcp --http --port 3000
    POLYG_API_KEY=secret uv run python examples/custom-agent/agent.py --url http://127.0.0.1:3000/mcp
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Generator
from typing import Any

import anyio
import httpx2
import yaml
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from polyg_core.scenarios import scenario_path

QUESTION = "Why did the auth service fail?"


async def call(client: Client, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """Call a tool; raise with the server's message when it answers with a tool error."""
    result = await client.call_tool(name, args)
    if result.is_error:
        text = " ".join(getattr(block, "text", "") for block in result.content)
        raise RuntimeError(f"{name} failed: {text}")
    return dict(result.structured_content or {})


async def remember_scenario(client: Client, graph: str) -> None:
    doc = yaml.safe_load(scenario_path("deployment_failure").read_text(encoding="utf-8"))
    for e in doc["entities"]:
        await call(
            client,
            "add_entity",
            {
                "graph": graph,
                "name": e["name"],
                "entity_type": e["type"],
                "properties": e.get("properties") or {},
            },
        )
    for r in doc["relations"]:
        await call(
            client,
            "link_entities",
            {
                "graph": graph,
                "source": r["source"],
                "target": r["target"],
                "relationship_type": r["type"],
            },
        )
    for ev in doc["events"]:
        await call(
            client,
            "add_event",
            {
                "graph": graph,
                "description": ev["description"],
                "occurred_at": str(ev["occurred_at"]),
                "entities": ev.get("entities", []),
            },
        )
    for f in doc["facts"]:
        args = {
            "graph": graph,
            "subject": f["subject"],
            "predicate": f["predicate"],
            "object": str(f["object"]),
            "valid_from": str(f["valid_from"]),
        }
        if f.get("valid_to"):
            args["valid_to"] = str(f["valid_to"])
        await call(client, "add_fact", args)
    for c in doc["causal_links"]:
        await call(
            client,
            "add_causal_link",
            {
                "graph": graph,
                "cause": c["cause"],
                "effect": c["effect"],
                "confidence": c["confidence"],
                "evidence": c.get("evidence"),
                "entities": c.get("entities", []),
            },
        )
    print(f"remembered the scenario in graph {graph!r}")


async def run(url: str, api_key: str | None, graph: str) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=120) as http_client,
        Client(streamable_http_client(url, http_client=http_client)) as client,
    ):
        tools = {t.name for t in (await client.list_tools()).tools}
        print(f"connected to {url}: {len(tools)} tools")
        await remember_scenario(client, graph)
        answer = await call(client, "recall", {"graph": graph, "question": QUESTION})
    print(f"\nQ: {QUESTION}\nA: {answer['answer']}  (confidence {answer['confidence']:.2f})")
    for step in answer["reasoning"]["causal_chain"]:
        print(f"   {step['cause']} -> {step['effect']} ({step['confidence']:.2f})")
    if answer["degraded"]:
        print("   (rule-based: " + "; ".join(answer["degraded_reasons"]) + ")")
    return answer


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def spawned_server(api_key: str | None) -> Generator[str]:
    """Start `polyg-mcp --http` on a free loopback port; yield its /mcp URL."""
    port = _free_port()
    env = {
        **os.environ,
        "POLYG_PORT": str(port),
        "POLYG_LOG_LEVEL": "WARNING",
        "POLYG_TOOLS": "memory,graph",
    }
    if api_key:
        env["POLYG_API_KEY"] = api_key
    proc = subprocess.Popen(
        [sys.executable, "-m", "polyg_server.main", "--http"], env=env, stdout=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            if proc.poll() is not None:
                raise RuntimeError(f"polyg-mcp exited with code {proc.returncode}")
            time.sleep(0.2)
        else:
            raise RuntimeError("polyg-mcp did not start listening within 60 s")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:3000/mcp")
    parser.add_argument("--graph", default="demo_deployment")
    parser.add_argument("--spawn", action="store_true", help="start polyg-mcp --http first")
    parser.add_argument("--json", action="store_true", help="print the full recall result")
    args = parser.parse_args()
    api_key = os.environ.get("POLYG_API_KEY")
    if args.spawn:
        with spawned_server(api_key) as url:
            answer = anyio.run(run, url, api_key, args.graph)
    else:
        answer = anyio.run(run, args.url, api_key, args.graph)
    if args.json:
        print(json.dumps(answer, indent=2))


if __name__ == "__main__":
    main()
