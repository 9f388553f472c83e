"""A loopback OpenAI-compatible server with scripted replies, for testing LLM code.

The server runs in-process (uvicorn on 127.0.0.1, a free port) so the real
client code — litellm and the OpenAI SDK underneath it — builds requests and
parses responses exactly as it would against a hosted model. Nothing leaves
the machine.

Example:
    ```python
    async with ScriptedLLMServer() as server:
        server.push(Reply.json({"answer": 42}))
        llm = LiteLLMProvider("openai/test-model", api_base=server.api_base, api_key="test")
        result = await llm.complete_json(system="...", user="...", schema=Answer, max_tokens=50)
        assert server.chat_requests[0].body["max_tokens"] == 50
    ```

Chat replies come from a queue of `Reply` items (pushed with `push`); when the
queue is empty the `responder` callable answers, given the request's messages
(or `request_responder`, when set, given the whole request body).
Embeddings are deterministic pseudo-random vectors derived from a hash of each
text: they exercise the transport, not meaning.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import logging
import re
import socket
import time
import uuid
from collections import deque
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, cast

import anyio
import numpy as np
import numpy.typing as npt
from anyio.abc import TaskGroup

if TYPE_CHECKING:
    from polyg_core.providers.llm.litellm import LiteLLMProvider

try:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, PlainTextResponse, Response
    from starlette.routing import Route
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "The scripted LLM test server needs starlette and uvicorn: pip install starlette uvicorn"
    ) from exc

__all__ = [
    "RecordedRequest",
    "Reply",
    "RequestResponder",
    "Responder",
    "ScriptedLLMServer",
    "chain_synthesis",
]

logger = logging.getLogger(__name__)

Responder = Callable[[list[dict[str, Any]]], "str | Reply"]
"""Answers a chat request from its messages with content, or a full `Reply`."""

RequestResponder = Callable[[dict[str, Any]], "str | Reply"]
"""Answers a chat request from its whole JSON body (model, messages, response_format...)."""


@dataclass
class Reply:
    """One scripted answer.

    Attributes:
        content: The assistant message content (a JSON string or any text).
        status: HTTP status; anything >= 400 sends an OpenAI-style error body.
        retry_after: Value of the `Retry-After` header (seconds), if any.
        delay_s: Wait this long before answering (to exercise client timeouts).
        malformed: Send a 200 whose body is not JSON.
        error_message: Message of the error body when `status` >= 400.
        prompt_tokens: Reported in `usage`.
        completion_tokens: Reported in `usage`.
    """

    content: str = ""
    status: int = 200
    retry_after: float | None = None
    delay_s: float = 0.0
    malformed: bool = False
    error_message: str | None = None
    prompt_tokens: int = 11
    completion_tokens: int = 7

    @classmethod
    def json(cls, value: Any, **kwargs: Any) -> Reply:
        """A reply whose content is `value` serialised as JSON."""
        return cls(content=json.dumps(value), **kwargs)

    @classmethod
    def text(cls, content: str, **kwargs: Any) -> Reply:
        """A reply with raw text content (prose, fences, think tags...)."""
        return cls(content=content, **kwargs)

    @classmethod
    def error(
        cls, status: int, *, retry_after: float | None = None, message: str | None = None
    ) -> Reply:
        """An HTTP error reply."""
        return cls(status=status, retry_after=retry_after, error_message=message)

    @classmethod
    def slow(cls, delay_s: float, content: str = "{}") -> Reply:
        """A reply that arrives after `delay_s` seconds."""
        return cls(content=content, delay_s=delay_s)


@dataclass(frozen=True)
class RecordedRequest:
    """A request the server received, as the client sent it."""

    path: str
    body: dict[str, Any]
    headers: dict[str, str]

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The chat messages of a chat completion request (empty otherwise)."""
        return list(self.body.get("messages", []))


def _no_responder(messages: list[dict[str, Any]]) -> Reply:
    return Reply.error(
        500,
        message="ScriptedLLMServer: no reply queued and no responder set; "
        "call server.push(...) or pass responder=",
    )


class _InProcessServer(uvicorn.Server):
    """A uvicorn server that leaves the host's signal handlers alone and reports readiness."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = anyio.Event()

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None]:
        yield

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.ready.set()


@dataclass
class ScriptedLLMServer:
    """OpenAI-compatible `/v1/chat/completions` and `/v1/embeddings` on loopback.

    Use as an async context manager; `url` and `api_base` are valid inside it.

    Attributes:
        responder: Answers chat requests when the reply queue is empty.
        request_responder: When set, answers instead of `responder`, given the whole
            request body (for replies that depend on `response_format` or `model`).
        embedding_dimension: Length of the vectors `/v1/embeddings` returns
            (unless the request asks for `dimensions`).
        reject_response_formats: `response_format` types answered with a 400
            naming `response_format`, as servers without structured output do.
        startup_timeout_s: Bound on waiting for the server to listen.
        requests: Every request received, in order.
    """

    responder: Responder = _no_responder
    request_responder: RequestResponder | None = None
    embedding_dimension: int = 8
    reject_response_formats: frozenset[str] = frozenset()
    startup_timeout_s: float = 10.0
    requests: list[RecordedRequest] = field(default_factory=list[RecordedRequest])
    _chat_replies: deque[Reply] = field(default_factory=deque[Reply])
    _embedding_replies: deque[Reply] = field(default_factory=deque[Reply])
    _port: int | None = None
    _server: _InProcessServer | None = None
    _task_group: TaskGroup | None = None
    _closing: anyio.Event = field(default_factory=anyio.Event)

    # -- scripting ---------------------------------------------------------

    def push(self, *replies: Reply) -> None:
        """Queue chat replies, answered in order before the responder is used."""
        self._chat_replies.extend(replies)

    def push_embedding(self, *replies: Reply) -> None:
        """Queue embedding replies (errors, delays); the content field is ignored."""
        self._embedding_replies.extend(replies)

    @property
    def pending(self) -> int:
        """Chat replies still queued."""
        return len(self._chat_replies)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        """Requests to `/v1/chat/completions`."""
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    @property
    def embedding_requests(self) -> list[RecordedRequest]:
        """Requests to `/v1/embeddings`."""
        return [r for r in self.requests if r.path.endswith("/embeddings")]

    @property
    def url(self) -> str:
        """Base URL, e.g. `http://127.0.0.1:54321`."""
        if self._port is None:
            raise RuntimeError("ScriptedLLMServer is not running; use it with `async with`.")
        return f"http://127.0.0.1:{self._port}"

    @property
    def api_base(self) -> str:
        """The OpenAI-style base URL (`url + "/v1"`) to give litellm."""
        return self.url + "/v1"

    def provider(self, *, timeout_s: float = 5, max_retries: int = 1) -> LiteLLMProvider:
        """A litellm provider whose model (`openai/test-model`) is this server."""
        from polyg_core.providers.llm.litellm import LiteLLMProvider

        return LiteLLMProvider(
            "openai/test-model",
            api_base=self.api_base,
            api_key="test",
            timeout_s=timeout_s,
            max_retries=max_retries,
        )

    @staticmethod
    def vector_for(text: str, dimension: int) -> npt.NDArray[np.float32]:
        """The (unnormalised) vector the embeddings endpoint returns for `text`."""
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
        rng = np.random.default_rng(seed)
        return (rng.standard_normal(dimension) * 3.0).astype(np.float32)

    # -- lifecycle ---------------------------------------------------------

    async def __aenter__(self) -> Self:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self._port = int(sock.getsockname()[1])
        config = uvicorn.Config(
            self._app(),
            http="h11",
            lifespan="off",
            log_level="warning",
            access_log=False,
            timeout_graceful_shutdown=1,
        )
        server = _InProcessServer(config)
        self._server = server
        self._closing = anyio.Event()
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        self._task_group.start_soon(server.serve, [sock])
        try:
            with anyio.fail_after(self.startup_timeout_s):
                await server.ready.wait()
        except BaseException as exc:
            await self._stop(type(exc), exc, exc.__traceback__)
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._stop(exc_type, exc, tb)

    async def _stop(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        server, group = self._server, self._task_group
        self._server = self._task_group = None
        self._port = None
        self._closing.set()
        if server is not None:
            server.should_exit = True
        if group is not None:
            # uvicorn closes within its graceful timeout; the deadline is a hard bound.
            group.cancel_scope.deadline = anyio.current_time() + 5.0
            await group.__aexit__(exc_type, exc, tb)

    # -- HTTP --------------------------------------------------------------

    async def _delay(self, seconds: float) -> None:
        # Delayed replies end early when the server stops, so shutdown never waits on them.
        with anyio.move_on_after(seconds):
            await self._closing.wait()

    def _app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/v1/embeddings", self._embeddings, methods=["POST"]),
            ]
        )

    async def _record(self, request: Request) -> dict[str, Any]:
        raw = await request.body()
        try:
            parsed: Any = json.loads(raw) if raw else {}
        except ValueError:
            parsed = {"_raw": raw.decode(errors="replace")}
        body = cast(dict[str, Any], parsed) if isinstance(parsed, dict) else {"_raw": parsed}
        self.requests.append(
            RecordedRequest(path=request.url.path, body=body, headers=dict(request.headers))
        )
        return body

    async def _chat(self, request: Request) -> Response:
        body = await self._record(request)
        fmt = body.get("response_format")
        fmt_type = cast(dict[str, Any], fmt).get("type") if isinstance(fmt, dict) else None
        if fmt_type in self.reject_response_formats:
            return _error_response(
                Reply.error(
                    400,
                    message=f"Invalid parameter: 'response_format' of type '{fmt_type}' "
                    "is not supported with this model.",
                )
            )
        if self._chat_replies:
            reply = self._chat_replies.popleft()
        elif self.request_responder is not None:
            answered = self.request_responder(body)
            reply = answered if isinstance(answered, Reply) else Reply(content=answered)
        else:
            answered = self.responder(list(body.get("messages", [])))
            reply = answered if isinstance(answered, Reply) else Reply(content=answered)
        failed = await self._fault(reply, '{"id": "chatcmpl-broken", "choices": [')
        if failed is not None:
            return failed
        return JSONResponse(
            {
                "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "test-model"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": reply.content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": reply.prompt_tokens,
                    "completion_tokens": reply.completion_tokens,
                    "total_tokens": reply.prompt_tokens + reply.completion_tokens,
                },
            }
        )

    async def _fault(self, reply: Reply, broken_body: str) -> Response | None:
        """Wait out the reply's delay; then its error or malformed answer, if it is one."""
        if reply.delay_s > 0:
            await self._delay(reply.delay_s)
        if reply.status >= 400:
            return _error_response(reply)
        if reply.malformed:
            return PlainTextResponse(broken_body, status_code=200)
        return None

    async def _embeddings(self, request: Request) -> Response:
        body = await self._record(request)
        if self._embedding_replies:
            failed = await self._fault(self._embedding_replies.popleft(), '{"data": [')
            if failed is not None:
                return failed
        raw_input = body.get("input", [])
        texts: list[str] = [raw_input] if isinstance(raw_input, str) else list(raw_input)
        dimension = int(body.get("dimensions") or self.embedding_dimension)
        as_base64 = body.get("encoding_format") == "base64"
        data: list[dict[str, Any]] = []
        for index, text in enumerate(texts):
            vector = self.vector_for(str(text), dimension)
            encoded: Any = (
                base64.b64encode(vector.astype("<f4").tobytes()).decode()
                if as_base64
                else [float(x) for x in vector]
            )
            data.append({"object": "embedding", "index": index, "embedding": encoded})
        tokens = sum(max(1, len(str(t).split())) for t in texts)
        return JSONResponse(
            {
                "object": "list",
                "data": data,
                "model": body.get("model", "test-embedding"),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }
        )


def _error_response(reply: Reply) -> Response:
    headers: dict[str, str] = {}
    if reply.retry_after is not None:
        headers["retry-after"] = f"{reply.retry_after:g}"
    kind = {400: "invalid_request_error", 401: "authentication_error", 429: "rate_limit_error"}
    return JSONResponse(
        {
            "error": {
                "message": reply.error_message or f"scripted HTTP {reply.status}",
                "type": kind.get(reply.status, "server_error"),
                "param": None,
                "code": None,
            }
        },
        status_code=reply.status,
        headers=headers,
    )


_CHAIN_LINE = re.compile(r"- (.+) --C_CAUSES--> (.+) \(confidence ([0-9.]+)\)")


def chain_synthesis(
    user: str, lines: Sequence[str], follow_ups: Sequence[str] = ()
) -> dict[str, Any]:
    """A synthesis reply as a model would give it from what the request holds: the
    causal chain listed in the context (`- cause --C_CAUSES--> effect (confidence c)`),
    its confidence the product of its links'; without a chain, `lines` quoted at 0.7."""
    chain: list[dict[str, Any]] = []
    for line in user.splitlines():
        m = _CHAIN_LINE.match(line)
        if m:
            chain.append({"cause": m[1], "effect": m[2], "confidence": float(m[3])})
    confidence = 1.0
    for step in chain:
        confidence *= step["confidence"]
    answer = (
        " then ".join(f"{s['cause']} caused {s['effect']}" for s in chain)
        if chain
        else "From memory: " + " | ".join(lines)[:800]
    )
    return {
        "answer": answer,
        "confidence": round(confidence, 4) if chain else 0.7,
        "reasoning": {
            "causal_chain": chain,
            "temporal_context": [],
            "entities_involved": [],
            "semantic_matches": [],
        },
        "sources": [],
        "follow_ups": list(follow_ups),
    }
