"""The calling client's model as polyg's LLM, through MCP sampling.

Without `LLM_MODEL`, a client that declares the sampling capability lends its
model to the tool calls that need one (recall, remember): the classifier,
extractor and synthesizer send it the same prompts and token limits they send
litellm, and a reply that never validates falls back to the rules with the
reason, as it does with litellm.

The model belongs to one client session, so it is chosen per tool call
(`client_model`). How the request reaches the client depends on the protocol:

- handshake-era sessions (2025-11-25 and older, stdio and stateful HTTP): a
  `sampling/createMessage` request on the call's back-channel, answered while
  the call waits (`BackChannel`);
- 2026-07-28 sessions: the call answers `InputRequiredResult` with the request
  embedded; the client answers it and calls again with the reply, and the call
  runs again from the start with the replies it has (`InputRounds`). Recall
  writes nothing and remember writes only after its last model reply, so a
  call that runs again never writes twice.

A background job (a queued remember) runs after the call has answered, with no
client to ask: without `LLM_MODEL` it extracts with the rules.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import anyio
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types import (
    CreateMessageRequest,
    CreateMessageRequestParams,
    CreateMessageResult,
    CreateMessageResultWithTools,
    InputRequiredResult,
    SamplingMessage,
    TextContent,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from polyg_core.errors import ProviderError
from polyg_core.providers.json_extract import NoJSONFound, extract_json_object
from polyg_core.providers.llm.base import LLMResult, Usage
from polyg_core.providers.llm.structured import (
    json_reply_instructions,
    retry_prompt,
    validation_summary,
)
from pydantic import BaseModel, ValidationError

if TYPE_CHECKING:
    from mcp.server.mcpserver.context import Context
    from mcp.server.session import ServerSession

    from polyg_server.context import ServerContext

__all__ = [
    "BackChannel",
    "InputNeeded",
    "InputRounds",
    "NoChannel",
    "SamplingChannel",
    "SamplingLLM",
    "client_model",
]

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

_KEY_PREFIX = "polyg-sampling-"
_STATE_VERSION = 1


class SamplingChannel(Protocol):
    """Where a sampling request goes and its reply comes from."""

    async def ask(self, params: CreateMessageRequestParams) -> CreateMessageResult:
        """The client's reply to one request.

        Raises:
            ProviderError: the client refused or did not answer in time.
            InputNeeded: the reply is not known yet (2026-07-28: ask in the call's result).
        """
        ...


@dataclass
class BackChannel:
    """A `sampling/createMessage` request on the session, answered while the call waits.

    Args:
        session: the calling client's session.
        request_id: the tool call the request belongs to (its stream carries it).
        timeout_s: how long to wait for the client (`LLM_TIMEOUT`).
    """

    session: ServerSession
    request_id: str | int | None
    timeout_s: float

    async def ask(self, params: CreateMessageRequestParams) -> CreateMessageResult:
        request = CreateMessageRequest(params=params)
        try:
            with anyio.fail_after(self.timeout_s):
                return await self.session.send_request(
                    request,
                    CreateMessageResult,
                    metadata=ServerMessageMetadata(related_request_id=self.request_id),
                )
        except TimeoutError as exc:
            raise ProviderError(
                f"the client's model did not answer within {self.timeout_s:g} s; raise "
                "LLM_TIMEOUT if the client asks the user to approve each request"
            ) from exc
        except MCPError as exc:
            raise ProviderError(f"the client refused the sampling request: {exc.message}") from exc
        except ValidationError as exc:
            raise ProviderError(
                f"the client's sampling reply is not a message: {validation_summary(exc)}"
            ) from exc


@dataclass(frozen=True)
class NoChannel:
    """A client that supports sampling on a session that cannot carry a request to it.

    Every request fails with `reason`, so the rules answer and the result says why.
    """

    reason: str

    async def ask(self, params: CreateMessageRequestParams) -> CreateMessageResult:
        raise ProviderError(self.reason)


_NO_BACK_CHANNEL = (
    "the client supports MCP sampling, but this session cannot send it a request "
    "(Streamable HTTP answering with JSON bodies, or stateless): serve with --sse "
    "(POLYG_HTTP_SSE=true) without --stateless, use a client that speaks MCP 2026-07-28, "
    "or set LLM_MODEL"
)


class InputNeeded(Exception):
    """The call needs a reply from the client's model that it does not have yet.

    The tool answers `result` (an `InputRequiredResult` that carries the request
    and the replies so far); the client calls again with the reply.
    """

    def __init__(self, result: InputRequiredResult) -> None:
        super().__init__("the call waits for a reply from the client's model")
        self.result = result


@dataclass
class InputRounds:
    """Sampling on 2026-07-28 sessions: the replies of earlier rounds, asked for in order.

    The call runs again from the start on each round; its n-th request gets the
    n-th reply. The first request past the known replies ends the round with
    `InputNeeded`.

    Args:
        binding: what the replies belong to (the tool and its arguments), kept in
            the request state so replies are never used for another call.
        replies: the replies of earlier rounds, in the order they were asked for.
    """

    binding: str
    replies: list[CreateMessageResult] = field(default_factory=lambda: [])
    _asked: int = field(default=0, init=False)

    async def ask(self, params: CreateMessageRequestParams) -> CreateMessageResult:
        if self._asked < len(self.replies):
            reply = self.replies[self._asked]
            self._asked += 1
            return reply
        key = f"{_KEY_PREFIX}{len(self.replies)}"
        state = {
            "v": _STATE_VERSION,
            "binding": self.binding,
            "replies": [r.model_dump(mode="json", by_alias=True) for r in self.replies],
        }
        raise InputNeeded(
            InputRequiredResult(
                input_requests={key: CreateMessageRequest(params=params)},
                request_state=json.dumps(state, separators=(",", ":")),
            )
        )

    @classmethod
    def resume(
        cls,
        binding: str,
        request_state: str | None,
        responses: Mapping[str, object] | None,
    ) -> InputRounds:
        """The rounds of one call: the replies kept in `request_state` plus this round's.

        A state for another call (other tool or arguments) or one this server did not
        write is ignored: the call starts over and asks again.
        """
        replies = _replies_from_state(binding, request_state)
        if responses:
            for index in range(len(replies), len(replies) + len(responses)):
                reply = responses.get(f"{_KEY_PREFIX}{index}")
                if reply is None:
                    break
                replies.append(_as_result(reply))
        return cls(binding, replies)


def _replies_from_state(binding: str, request_state: str | None) -> list[CreateMessageResult]:
    if not request_state:
        return []
    try:
        state = json.loads(request_state)
        if state.get("v") != _STATE_VERSION or state.get("binding") != binding:
            return []
        return [CreateMessageResult.model_validate(r) for r in state["replies"]]
    except (ValueError, TypeError, KeyError, AttributeError):
        logger.info("ignoring a request state this call cannot use")
        return []


def _as_result(reply: object) -> CreateMessageResult:
    if isinstance(reply, CreateMessageResult):
        return reply
    if isinstance(reply, CreateMessageResultWithTools):
        content = reply.content if isinstance(reply.content, list) else [reply.content]
        text = "".join(c.text for c in content if isinstance(c, TextContent))
        return CreateMessageResult(
            role="assistant",
            content=TextContent(type="text", text=text),
            model=reply.model,
            stop_reason=reply.stop_reason,
        )
    # Another kind of answer (roots, elicitation) under our key: no usable text.
    return CreateMessageResult(
        role="assistant", content=TextContent(type="text", text=""), model="unknown"
    )


@dataclass
class SamplingLLM:
    """An `LLM` that asks the calling MCP client's model (MCP sampling).

    Sends the system prompt with the JSON-schema instructions and the user prompt,
    parses the reply like the litellm provider does (reasoning blocks, code fences,
    prose around the object) and validates it; an unusable reply is asked again
    once with the problem shown, then `ProviderError` (the callers fall back to
    their rules and say why).

    Args:
        channel: how requests reach the client (`BackChannel` or `InputRounds`).
        temperature: sent only when set.
    """

    channel: SamplingChannel
    _: KW_ONLY
    temperature: float | None = None
    _model: str = field(default="", init=False, repr=False)

    @property
    def reaches_client(self) -> bool:
        """False when the client cannot be asked on this session (every call falls back)."""
        return not isinstance(self.channel, NoChannel)

    @property
    def model_name(self) -> str:
        """`client:<model>` once the client has said which model answered."""
        return f"client:{self._model}" if self._model else "client model (MCP sampling)"

    async def complete_json(
        self, *, system: str, user: str, schema: type[T], max_tokens: int
    ) -> LLMResult[T]:
        """Ask the client's model for a reply matching `schema`.

        Raises:
            ProviderError: the client refused, did not answer in time, or twice
                replied with something that is not a valid `schema`.
            InputNeeded: on a 2026-07-28 session, the reply is asked for in the call's result.
        """
        usage = Usage()
        system_prompt = f"{system}\n\n{json_reply_instructions(schema)}"
        conversation = [_message("user", user)]
        problem = ""
        for _ in range(2):
            reply = await self.channel.ask(
                CreateMessageRequestParams(
                    messages=list(conversation),
                    system_prompt=system_prompt,
                    max_tokens=max_tokens,
                    temperature=self.temperature,
                )
            )
            usage.add(Usage(calls=1))
            self._model = reply.model or self._model
            content = reply.content.text if isinstance(reply.content, TextContent) else ""
            try:
                value = schema.model_validate(extract_json_object(content))
            except NoJSONFound as exc:
                problem = str(exc)
                if reply.stop_reason == "maxTokens":
                    problem += f" (the reply was cut off at max_tokens={max_tokens})"
            except ValidationError as exc:
                problem = f"it does not match the schema: {validation_summary(exc)}"
            else:
                return LLMResult(value=value, usage=usage, model=self.model_name)
            logger.info("the client's model gave an unusable reply: %s", problem)
            if content.strip():
                conversation.append(_message("assistant", content))
            conversation.append(_message("user", retry_prompt(problem, schema)))
        raise ProviderError(
            f"the client's model ({self.model_name}) twice returned output that is not a valid "
            f"{schema.__name__}: {problem}. Set LLM_MODEL to a model that supports structured "
            "(JSON) output, or POLYG_SAMPLING=off to use the rules without asking the client"
        )


def _message(role: str, text: str) -> SamplingMessage:
    return SamplingMessage(role="user" if role == "user" else "assistant", content=_text(text))


def _text(text: str) -> TextContent:
    return TextContent(type="text", text=text)


def _binding(tool: str, arguments: Mapping[str, Any]) -> str:
    """What a call's replies belong to: its tool and a digest of its arguments."""
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=str)
    digest = hashlib.blake2b(canonical.encode(), digest_size=16).hexdigest()
    return f"{tool}:{digest}"


def client_model(
    ctx: ServerContext, context: Context[Any, Any], tool: str, arguments: Mapping[str, Any]
) -> SamplingLLM | None:
    """The model the calling client lends to this tool call, or None.

    None when polyg has its own model (`LLM_MODEL`), when `POLYG_SAMPLING=off`, or
    when the client did not declare the sampling capability. A client that declared
    it on a session that cannot carry the request (handshake-era Streamable HTTP
    with JSON responses or stateless) gets a model whose every request fails with
    the fix, so the rules answer and say why.
    """
    if ctx.llm is not None or not ctx.settings.sampling:
        return None
    try:
        request = context.request_context
    except ValueError:  # a call made outside of a client session
        return None
    session = request.session
    capabilities = session.client_capabilities
    if capabilities is None or capabilities.sampling is None:
        return None
    if session.protocol_version in MODERN_PROTOCOL_VERSIONS:
        rounds = InputRounds.resume(
            _binding(tool, arguments), context.request_state, context.input_responses
        )
        return SamplingLLM(rounds)
    if not session.can_send_request:
        return SamplingLLM(NoChannel(_NO_BACK_CHANNEL))
    return SamplingLLM(BackChannel(session, request.request_id, ctx.settings.llm_timeout_s))
