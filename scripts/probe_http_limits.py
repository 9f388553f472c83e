"""Probe a running `polyg-mcp --http` for its limits on time, connections and key guesses.

    uv run polyg-mcp --http &            # on 127.0.0.1:3000, with POLYG_API_KEY set or not
    uv run python scripts/probe_http_limits.py --url http://127.0.0.1:3000 [--key KEY]

Prints one JSON object: how long a connection that sends its headers, its body or
nothing at all a byte at a time is held (up to --hold seconds) and what it gets; how many
of --connections concurrent keep-alive connections are served and refused; and the
statuses of --wrong-keys wrong bearer tokens in a row, then of the right key (--key).
Every loop is bounded in count and time, and only loopback URLs are accepted.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from contextlib import AsyncExitStack
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx
from anyio.abc import SocketStream

LOOPBACK = ("127.0.0.1", "localhost", "::1")


async def _read_until_closed(stream: SocketStream) -> bytes:
    chunks: list[bytes] = []
    try:
        while True:
            chunks.append(await stream.receive())
    except (anyio.EndOfStream, anyio.BrokenResourceError):
        pass
    return b"".join(chunks)


async def slow(host: str, port: int, head: bytes, drip: bytes, hold_s: float) -> dict[str, Any]:
    """Send `head`, then `drip` a byte every 0.5 s; how long until the server closes."""
    started = time.perf_counter()
    reply = b""
    with anyio.move_on_after(hold_s):
        async with await anyio.connect_tcp(host, port) as stream, anyio.create_task_group() as tg:

            async def drip_bytes() -> None:
                try:
                    if head:
                        await stream.send(head)
                    for i in range(len(drip)):
                        await anyio.sleep(0.5)
                        await stream.send(drip[i : i + 1])
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                    pass

            tg.start_soon(drip_bytes)
            reply = await _read_until_closed(stream)
            tg.cancel_scope.cancel()
    held = round(time.perf_counter() - started, 1)
    status = reply.split(b" ", 2)[1].decode() if reply.startswith(b"HTTP/") else None
    return {"held_s": held, "closed_by_server": held < hold_s, "status": status}


async def connections(url: str, count: int) -> dict[str, int]:
    """`count` connections at once, one GET /health each; count the statuses."""
    statuses: Counter[str] = Counter()
    limits = httpx.Limits(max_connections=1, keepalive_expiry=60)
    async with AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(httpx.AsyncClient(limits=limits, timeout=30))
            for _ in range(count)
        ]

        async def get(client: httpx.AsyncClient) -> None:
            try:
                statuses[str((await client.get(f"{url}/health")).status_code)] += 1
            except httpx.HTTPError as exc:
                statuses[type(exc).__name__] += 1

        async with anyio.create_task_group() as tg:
            for client in clients:
                tg.start_soon(get, client)
    return dict(statuses)


async def wrong_keys(url: str, count: int, key: str | None) -> dict[str, Any]:
    """`count` wrong bearer tokens in a row, then the right one."""
    statuses: Counter[str] = Counter()
    with_retry_after = 0
    async with httpx.AsyncClient(timeout=20) as http:
        for i in range(count):
            r = await http.get(f"{url}/api/graphs", headers={"Authorization": f"Bearer wrong-{i}"})
            statuses[str(r.status_code)] += 1
            with_retry_after += "retry-after" in r.headers
        right = None
        if key:
            r = await http.get(f"{url}/api/graphs", headers={"Authorization": f"Bearer {key}"})
            right = r.status_code
    return {"statuses": dict(statuses), "with_retry_after": with_retry_after, "right_key": right}


async def probe(args: argparse.Namespace) -> dict[str, Any]:
    parts = urlsplit(args.url)
    host, port = parts.hostname or "", parts.port or 80
    if host not in LOOPBACK:
        raise SystemExit(f"probe_http_limits: only loopback URLs are probed, not {host!r}")
    out: dict[str, Any] = {}
    # 200 bytes at one per 0.5 s: 100 s, longer than any sensible body timeout.
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "pad": "%s"}' % (b"x" * 145)
    post = (
        f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nContent-Length: {len(body)}\r\n"
        + (f"Authorization: Bearer {args.key}\r\n" if args.key else "")
        + "\r\n"
    ).encode()
    get = f"GET /health HTTP/1.1\r\nHost: {host}:{port}\r\n".encode()
    async with anyio.create_task_group() as tg:

        async def run(name: str, head: bytes, drip: bytes) -> None:
            out[name] = await slow(host, port, head, drip, args.hold)

        tg.start_soon(run, "slow_headers", get, b"X-Slow: " + b"a" * 1000)
        tg.start_soon(run, "slow_body", post, body)
        tg.start_soon(run, "silent_connection", b"", b"")
    out["connections"] = await connections(args.url, args.connections)
    out["wrong_keys"] = await wrong_keys(args.url, args.wrong_keys, args.key)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description="Probe a running polyg-mcp --http for its limits.")
    parser.add_argument("--url", default="http://127.0.0.1:3000")
    parser.add_argument("--key", help="the server's POLYG_API_KEY, if it has one")
    parser.add_argument("--hold", type=float, default=60.0, help="longest wait per slow probe")
    parser.add_argument("--connections", type=int, default=300)
    parser.add_argument("--wrong-keys", type=int, default=50)
    args = parser.parse_args()
    print(json.dumps(anyio.run(probe, args), indent=2))


if __name__ == "__main__":
    main()
