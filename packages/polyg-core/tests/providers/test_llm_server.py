import base64
import contextlib
from typing import Any

import anyio
import httpx
import numpy as np
import pytest
from polyg_core.testing.llm_server import Reply, ScriptedLLMServer

pytestmark = pytest.mark.anyio

CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


async def test_queued_replies_come_first_then_the_responder() -> None:
    def responder(messages: list[dict[str, Any]]) -> str | Reply:
        return Reply.error(418) if messages[-1]["content"] == "teapot" else "from responder"

    async with ScriptedLLMServer(responder=responder) as server, httpx.AsyncClient() as client:
        server.push(Reply.text("queued", prompt_tokens=3, completion_tokens=2))
        url = server.api_base + "/chat/completions"
        first = (await client.post(url, json=CHAT)).json()
        second = (await client.post(url, json=CHAT)).json()
        teapot = await client.post(
            url, json={"model": "m", "messages": [{"role": "user", "content": "teapot"}]}
        )

    assert first["choices"][0]["message"]["content"] == "queued"
    assert first["usage"] == {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    assert second["choices"][0]["message"]["content"] == "from responder"
    assert teapot.status_code == 418
    assert [r.body for r in server.chat_requests][:2] == [CHAT, CHAT]


async def test_without_reply_or_responder_the_server_says_what_to_do() -> None:
    async with ScriptedLLMServer() as server, httpx.AsyncClient() as client:
        response = await client.post(server.api_base + "/chat/completions", json=CHAT)

    assert response.status_code == 500
    assert "server.push" in response.json()["error"]["message"]


async def test_error_replies_carry_retry_after() -> None:
    async with ScriptedLLMServer() as server, httpx.AsyncClient() as client:
        server.push(Reply.error(429, retry_after=1.5))
        response = await client.post(server.api_base + "/chat/completions", json=CHAT)

    assert response.status_code == 429
    assert response.headers["retry-after"] == "1.5"


async def test_embeddings_are_deterministic_in_both_encodings() -> None:
    async with ScriptedLLMServer(embedding_dimension=4) as server, httpx.AsyncClient() as client:
        url = server.api_base + "/embeddings"
        floats = (await client.post(url, json={"model": "e", "input": ["a", "b"]})).json()
        b64 = (
            await client.post(url, json={"model": "e", "input": "a", "encoding_format": "base64"})
        ).json()

    a = ScriptedLLMServer.vector_for("a", 4)
    np.testing.assert_allclose(floats["data"][0]["embedding"], a, rtol=1e-6)
    decoded = np.frombuffer(base64.b64decode(b64["data"][0]["embedding"]), dtype="<f4")
    np.testing.assert_allclose(decoded, a, rtol=1e-6)
    assert [d["index"] for d in floats["data"]] == [0, 1]


async def test_server_stops_promptly_even_with_a_slow_reply_in_flight() -> None:
    async def slow_call(url: str) -> None:
        async with httpx.AsyncClient() as client:
            with contextlib.suppress(httpx.HTTPError):
                await client.post(url, json=CHAT, timeout=5)

    with anyio.fail_after(3):
        async with anyio.create_task_group() as tg, ScriptedLLMServer() as server:
            server.push(Reply.slow(30))
            tg.start_soon(slow_call, server.api_base + "/chat/completions")
            while not server.requests:
                await anyio.sleep(0.01)


def test_url_outside_the_context_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="async with"):
        _ = ScriptedLLMServer().url
