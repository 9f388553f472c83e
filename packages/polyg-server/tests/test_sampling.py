"""Without LLM_MODEL, the MCP client's model answers recall and remember through sampling.

A real in-memory client session with a scripted sampling callback: the callback
answers the classifier, extractor and synthesizer prompts from what each request
carries, so the results show that its answers shaped them. Both ways a request
reaches a client are covered: the 2026-07-28 protocol (the call answers with the
request and the client calls again) and the handshake-era back-channel.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.context import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from mcp_types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    TextContent,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from polyg_core.config import Settings, settings_from_env
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.storage.embedded import EmbeddedFalkorDB
from polyg_core.storage.store import FalkorStore
from polyg_server.app import create_server
from polyg_server.context import JobOptions, ServerContext
from polyg_server.http import HttpOptions, create_http_app
from polyg_server.sampling import InputRounds
from polyg_server.testing import call, serving, stdio_server

pytestmark = pytest.mark.anyio

Mode = Literal["auto", "legacy"]
MODES: tuple[Mode, ...] = ("auto", "legacy")

NOTE = "Odile Varga recalibrated the heliostat at Kestrel Ridge on Tuesday."
QUESTION = "Who recalibrated the heliostat?"
ANSWER = "Odile Varga recalibrated the heliostat (scripted answer)."


def schema_title(params: CreateMessageRequestParams) -> str:
    """Which reply the request asks for: the title of the JSON schema ending its system prompt."""
    system = params.system_prompt or ""
    return str(json.loads(system.rsplit("\n", 1)[-1])["title"])


def prompt_of(params: CreateMessageRequestParams) -> str:
    content = params.messages[0].content
    assert isinstance(content, TextContent)
    return content.text


def scripted_reply(params: CreateMessageRequestParams) -> str:
    """What a model asked for this schema would answer, from the request's own text."""
    title = schema_title(params)
    if title == "ExtractionDraft":
        assert NOTE in prompt_of(params)
        return json.dumps(
            {
                "entities": [
                    {"name": "Odile Varga", "entity_type": "person"},
                    {"name": "Kestrel Ridge Heliostat", "entity_type": "instrument"},
                ],
                "relations": [
                    {
                        "source": "Odile Varga",
                        "target": "Kestrel Ridge Heliostat",
                        "relationship_type": "recalibrated",
                    }
                ],
                "category": "episodic",
            }
        )
    if title == "IntentDraft":
        assert QUESTION in prompt_of(params)
        return json.dumps(
            {
                "type": "WHO",
                "entities": ["Kestrel Ridge Heliostat"],
                "semantic_query": "who recalibrated the heliostat",
                "confidence": 0.9,
            }
        )
    assert title == "Synthesis", title
    return json.dumps({"answer": ANSWER, "confidence": 0.9, "follow_ups": ["When?"]})


@dataclass
class ScriptedModel:
    """The client's model: answers each request with `reply(params)` and records it."""

    reply: Callable[[CreateMessageRequestParams], str] = scripted_reply
    requests: list[CreateMessageRequestParams] = field(default_factory=lambda: [])

    async def __call__(
        self, context: ClientRequestContext, params: CreateMessageRequestParams
    ) -> CreateMessageResult:
        self.requests.append(params)
        return CreateMessageResult(
            role="assistant",
            content=TextContent(type="text", text=self.reply(params)),
            model="scripted-model",
            stop_reason="endTurn",
        )

    def asked(self) -> list[str]:
        return [schema_title(p) for p in self.requests]


@pytest.fixture
async def open_client(
    store: FalkorStore, server_settings: Settings, cached_embedder: Embedder
) -> AsyncIterator[Callable[..., Any]]:
    """Opens in-memory client sessions on a server without LLM_MODEL (closed after the test)."""
    clients: list[Client] = []

    async def open_(
        model: ScriptedModel | None,
        *,
        mode: Mode = "auto",
        settings: Settings | None = None,
    ) -> Client:
        ctx = ServerContext(
            store=store, settings=settings or server_settings, embedder=cached_embedder
        )
        client = Client(create_server(ctx), sampling_callback=model, mode=mode)
        await client.__aenter__()
        clients.append(client)
        return client

    yield open_
    for client in reversed(clients):
        await client.__aexit__(None, None, None)


@pytest.mark.parametrize("mode", MODES)
async def test_the_clients_model_answers_remember_and_recall_without_degrading(
    open_client: Callable[..., Awaitable[Client]], server_settings: Settings, mode: Mode
) -> None:
    model = ScriptedModel()
    client = await open_client(model, mode=mode)
    # auto: 2026-07-28, requests ride the call's result; legacy: the session's back-channel.
    assert (client.protocol_version in MODERN_PROTOCOL_VERSIONS) is (mode == "auto")

    written = await call(client, "remember", {"content": NOTE})
    assert written["degraded"] is False, written["degraded_reasons"]
    assert written["usage"]["llm_calls"] == 1
    # The scripted extraction, not the rules, decided what was written.
    entity = await call(client, "get_entity", {"entity": "Kestrel Ridge Heliostat"})
    assert entity["entity"]["entity_type"] == "instrument"
    assert "recalibrated" in json.dumps(entity["relationships"])

    answer = await call(client, "recall", {"question": QUESTION})
    assert answer["degraded"] is False, answer["degraded_reasons"]
    assert answer["answer"] == ANSWER
    assert answer["follow_ups"] == ["When?"]
    assert answer["intent"]["type"] == "WHO"
    assert model.asked() == ["ExtractionDraft", "IntentDraft", "Synthesis"]
    # The same token limits as the litellm path.
    assert [p.max_tokens for p in model.requests] == [
        server_settings.classifier_max_tokens * 4,
        server_settings.classifier_max_tokens,
        server_settings.synthesizer_max_tokens,
    ]


async def test_a_client_without_sampling_gets_the_rules_with_the_reason(
    open_client: Callable[..., Awaitable[Client]],
) -> None:
    client = await open_client(None)
    written = await call(client, "remember", {"content": NOTE})
    assert written["degraded"] is True
    assert any("no LLM configured" in r for r in written["degraded_reasons"])
    answer = await call(client, "recall", {"question": QUESTION})
    assert answer["degraded"] is True
    assert any(r.startswith("classifier: no LLM") for r in answer["degraded_reasons"])
    assert any(r.startswith("synthesizer: no LLM") for r in answer["degraded_reasons"])


async def test_polyg_sampling_off_never_asks_the_client(
    open_client: Callable[..., Awaitable[Client]], server_settings: Settings
) -> None:
    model = ScriptedModel()
    off = server_settings.model_copy(update={"sampling": False})
    client = await open_client(model, settings=off)
    written = await call(client, "remember", {"content": NOTE})
    answer = await call(client, "recall", {"question": QUESTION})
    assert written["degraded"] is True and answer["degraded"] is True
    assert answer["answer"] != ANSWER
    assert model.requests == []


def test_polyg_sampling_is_read_from_the_environment() -> None:
    assert settings_from_env({"POLYG_SAMPLING": "off"}).sampling is False
    assert settings_from_env({"POLYG_SAMPLING": "on"}).sampling is True
    assert settings_from_env({}).sampling is True


@pytest.mark.parametrize("mode", MODES)
async def test_garbage_from_the_clients_model_falls_back_with_the_reason(
    open_client: Callable[..., Awaitable[Client]], mode: Mode
) -> None:
    model = ScriptedModel(reply=lambda params: "I would rather write a poem about heliostats.")
    client = await open_client(model, mode=mode)

    written = await call(client, "remember", {"content": NOTE})
    assert written["degraded"] is True
    (reason,) = written["degraded_reasons"]
    assert reason.startswith("extractor: LLM extraction failed")
    assert "twice returned output that is not a valid ExtractionDraft" in reason
    assert "no complete JSON object" in reason
    # The rules wrote the note all the same.
    assert written["created"] is True

    answer = await call(client, "recall", {"question": QUESTION})
    assert answer["degraded"] is True
    reasons = answer["degraded_reasons"]
    assert any(r.startswith("classifier: LLM classification failed") for r in reasons)
    assert any(r.startswith("synthesizer: LLM synthesis failed") for r in reasons)
    assert answer["answer"]
    # Each step asked once more with the problem shown before giving up.
    assert model.asked() == ["ExtractionDraft"] * 2 + ["IntentDraft"] * 2 + ["Synthesis"] * 2
    retry = model.requests[1].messages[-1].content
    assert isinstance(retry, TextContent)
    assert retry.text.startswith("Your reply could not be used")


async def test_remember_writes_in_the_call_when_the_client_lends_its_model(
    open_client: Callable[..., Awaitable[Client]], server_settings: Settings
) -> None:
    # Text longer than the wait limit is queued without a lent model; the lent model
    # can be asked only during the call, so remember writes before it answers.
    short_wait = server_settings.model_copy(update={"remember_wait_max_chars": 20})
    client = await open_client(ScriptedModel(), settings=short_wait)
    written = await call(client, "remember", {"content": NOTE})
    assert "queued" not in written
    assert written["degraded"] is False


def test_replies_kept_for_another_call_are_not_used() -> None:
    reply = CreateMessageResult(
        role="assistant", content=TextContent(type="text", text="{}"), model="m"
    )
    state = json.dumps(
        {"v": 1, "binding": "recall:abc", "replies": [reply.model_dump(mode="json")]}
    )
    assert len(InputRounds.resume("recall:abc", state, None).replies) == 1
    assert InputRounds.resume("remember:abc", state, None).replies == []
    assert InputRounds.resume("recall:abc", "not json", None).replies == []


@pytest.mark.parametrize(
    ("mode", "options", "lent"),
    [
        ("auto", HttpOptions(), True),
        ("auto", HttpOptions(stateless=True), True),
        ("legacy", HttpOptions(json_response=False), True),
        ("legacy", HttpOptions(), False),
    ],
    ids=["2026-json", "2026-stateless", "2025-sse", "2025-json"],
)
async def test_sampling_over_streamable_http(
    store: FalkorStore,
    server_settings: Settings,
    cached_embedder: Embedder,
    mode: Mode,
    options: HttpOptions,
    lent: bool,
) -> None:
    ctx = ServerContext(store=store, settings=server_settings, embedder=cached_embedder)
    model = ScriptedModel()
    async with serving(create_http_app(create_server(ctx), ctx, options)) as url:
        with anyio.fail_after(60):
            async with httpx2.AsyncClient(timeout=20) as http_client:
                transport = streamable_http_client(f"{url}/mcp", http_client=http_client)
                async with Client(transport, sampling_callback=model, mode=mode) as client:
                    written = await call(client, "remember", {"content": NOTE})
    assert written["degraded"] is not lent
    if lent:
        assert model.asked() == ["ExtractionDraft"]
    else:
        # A handshake-era session answered with JSON bodies cannot carry the request: the
        # reason says how to serve so that it can.
        assert model.requests == []
        (reason,) = written["degraded_reasons"]
        assert "the client supports MCP sampling" in reason
        assert "--sse" in reason


@pytest.mark.parametrize("mode", MODES)
async def test_the_polyg_mcp_process_over_stdio_asks_the_clients_model(
    falkordb_server: EmbeddedFalkorDB, namespace: str, mode: Mode
) -> None:
    params = stdio_server(falkordb_server.data_dir, namespace, POLYG_JOB_WORKERS="0")
    model = ScriptedModel()
    with anyio.fail_after(120):
        async with Client(params, sampling_callback=model, mode=mode) as client:
            written = await call(client, "remember", {"content": NOTE})
            answer = await call(client, "recall", {"question": QUESTION})
    assert written["degraded"] is False, written["degraded_reasons"]
    assert answer["degraded"] is False, answer["degraded_reasons"]
    assert answer["answer"] == ANSWER
    assert model.asked() == ["ExtractionDraft", "IntentDraft", "Synthesis"]


@pytest.mark.filterwarnings("ignore:Call to deprecated setex:DeprecationWarning")
async def test_a_queued_remember_has_no_client_to_ask_and_extracts_with_rules(
    store: FalkorStore, server_settings: Settings, cached_embedder: Embedder, queue_name: str
) -> None:
    ctx = ServerContext(
        store=store,
        settings=server_settings,
        embedder=cached_embedder,
        jobs=JobOptions(workers=1, queue_name=queue_name, dequeue_timeout_s=1.0),
    )
    model = ScriptedModel()
    async with Client(create_server(ctx), sampling_callback=model) as client:
        queued = await call(client, "remember", {"content": NOTE, "wait": False})
        assert queued["queued"] is True
        with anyio.fail_after(30):
            while True:
                info = await call(client, "get_job", {"job_id": queued["job_id"]})
                if info["status"] in ("done", "failed"):
                    break
                await anyio.sleep(0.1)
    assert info["status"] == "done", info
    assert info["result"]["degraded"] is True
    assert any("no LLM configured" in r for r in info["result"]["degraded_reasons"])
    assert model.requests == []
