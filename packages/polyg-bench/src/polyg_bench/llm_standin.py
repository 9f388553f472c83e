"""A local stand-in for a hosted LLM, to measure what polyg's LLM path costs without a network.

`StandinResponder` answers the three structured-output requests polyg sends — the
classifier (`IntentDraft`), the extractor (`ExtractionDraft`) and the synthesizer
(`Synthesis`) — with schema-valid JSON derived from the request: it reads the note or
question out of the user message and runs polyg's own rule-based extractor or
classifier on it, so the graph gets real content; the synthesizer's answer is the
best context node. The answers are not a language model's, so retrieval quality
measured through the stand-in says nothing about an LLM.

The reported `usage` is what the priced model would bill for the same request:
prompt tokens are counted with litellm's `token_counter` for that model (for
`gpt-4o*`, tiktoken's `o200k_base`, which litellm ships, plus OpenAI's per-message
overhead), plus the tokens of the `response_format` JSON schema, which OpenAI also
bills as input (the exact framing it adds is not public, so this part is an
estimate); completion tokens are the tokens of the returned JSON. litellm then
prices the response from its own table, exactly as for a hosted call.

Example:
    ```python
    async with standin_server("openai/gpt-4o-mini") as (server, llm):
        memory = Memory(store=store, embedder=embedder, llm=llm)
        result = await memory.remember("Ann adopted a dog named Pixel.", graph="g")
        assert result.usage.cost_usd > 0
    ```
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import ModuleType
from typing import Any, cast

from polyg_core.providers.litellm_common import import_litellm, quiet_litellm
from polyg_core.providers.llm.litellm import LiteLLMProvider
from polyg_core.recall.classifier import RuleClassifier
from polyg_core.recall.classifier_prompt import CLASSIFIER_SYSTEM
from polyg_core.recall.synthesizer import SYSTEM_PROMPT as SYNTHESIZER_SYSTEM
from polyg_core.remember.extraction_prompt import EXTRACTOR_SYSTEM
from polyg_core.remember.extractor import RuleExtractor
from polyg_core.testing.llm_server import Reply, ScriptedLLMServer
from polyg_shared.intents import Intent
from polyg_shared.retrieval import Reasoning, Synthesis
from polyg_shared.timeutil import parse_timestamp

__all__ = ["DEFAULT_STANDIN_MODEL", "StandinResponder", "standin_server"]

logger = logging.getLogger(__name__)

DEFAULT_STANDIN_MODEL = "openai/gpt-4o-mini"
_MARKED = re.compile(r"<<<\n(.*)\n>>>", re.DOTALL)
_NODE_LINE = re.compile(r"^- ([0-9A-Za-z_-]+): (.+)$", re.MULTILINE)
_SYNTH_SOURCES = 5


def _object(value: object) -> dict[str, Any]:
    """A JSON object as a dict; anything else as an empty one."""
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


def _objects(value: object) -> list[dict[str, Any]]:
    """The JSON objects in a JSON array (a request's messages, a message's parts)."""
    if not isinstance(value, list):
        return []
    return [cast(dict[str, Any], v) for v in cast(list[object], value) if isinstance(v, dict)]


def _content(message: dict[str, Any]) -> str:
    content = message.get("content", "")
    parts = _objects(content)
    if isinstance(content, list):  # content parts
        return "".join(str(p.get("text", "")) for p in parts)
    return str(content)


def _reference(user: str) -> datetime:
    first = user.split("\n", 1)[0]
    if first.startswith("Reference time:"):
        try:
            return parse_timestamp(first.removeprefix("Reference time:").strip())
        except ValueError:
            pass
    return datetime.now(UTC)


def _known_names(user: str) -> list[str]:
    block = user.split("Known entity names:", 1)
    if len(block) < 2:
        return []
    names: list[str] = []
    for line in block[1].split("\n\n", 1)[0].splitlines():
        if line.startswith("- "):
            names.append(line[2:])
    return names


def _marked(user: str) -> str:
    found = _MARKED.search(user)
    return found.group(1) if found else user


def _intent_draft(intent: Intent) -> dict[str, Any]:
    frame = intent.timeframe
    return {
        "type": intent.type.value,
        "entities": list(intent.entities),
        "timeframe_phrase": frame.phrase if frame else None,
        "timeframe_start": frame.start.isoformat() if frame and frame.start else None,
        "timeframe_end": frame.end.isoformat() if frame and frame.end else None,
        "causal_direction": intent.causal_direction.value,
        "depth_hints": intent.depth_hints.model_dump(),
        "semantic_query": intent.semantic_query,
        "confidence": intent.confidence,
        "multi_hop": intent.multi_hop,
    }


def _synthesis(user: str) -> Synthesis:
    nodes = _NODE_LINE.findall(user.split("Node ids:", 1)[-1]) if "Node ids:" in user else []
    if not nodes:
        return Synthesis(answer="The context does not contain the answer.", confidence=0.1)
    return Synthesis(
        answer=nodes[0][1],
        confidence=0.5,
        reasoning=Reasoning(semantic_matches=[text for _, text in nodes[:3]]),
        sources=[uuid for uuid, _ in nodes[:_SYNTH_SOURCES]],
    )


def _plumbing(user: str) -> dict[str, Any]:
    """What one synthesis request carries: question, type, answer shape, context nodes."""
    question = re.search(r"^Question: (.+)$", user, re.MULTILINE)
    qtype = re.search(r"^Question type: (\w+)$", user, re.MULTILINE)
    shape = re.search(r"^Answer shape: (\w+):", user, re.MULTILINE)
    nodes = _NODE_LINE.findall(user.split("Node ids:", 1)[-1]) if "Node ids:" in user else []
    return {
        "question": bool(question and question.group(1).strip()),
        "shape_matches_type": bool(qtype and shape and qtype.group(1) == shape.group(1)),
        "nodes": len(nodes),
    }


@dataclass
class StandinResponder:
    """Answers polyg's LLM requests from its rules and bills them as `model` would.

    Use as `ScriptedLLMServer(request_responder=StandinResponder(...))`.

    Attributes:
        model: The litellm model whose tokenizer counts the tokens (the one priced).
        calls: Requests answered, by kind (`classifier`, `extractor`, `synthesizer`).
        tokens: Prompt and completion tokens reported, by kind.
    """

    model: str = DEFAULT_STANDIN_MODEL
    calls: dict[str, int] = field(default_factory=lambda: {})
    tokens: dict[str, dict[str, int]] = field(default_factory=lambda: {})
    synthesis_requests: list[dict[str, Any]] = field(default_factory=lambda: [])
    _litellm: ModuleType = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._litellm = import_litellm()
        quiet_litellm(self._litellm)

    def count_prompt(self, body: dict[str, Any]) -> int:
        """Input tokens of a chat request: its messages plus its `response_format` schema."""
        messages = [
            {"role": str(m.get("role", "user")), "content": _content(m)}
            for m in _objects(body.get("messages"))
        ]
        tokens = int(self._litellm.token_counter(model=self.model, messages=messages))
        fmt = _object(body.get("response_format"))
        if fmt.get("type") == "json_schema":
            schema = fmt.get("json_schema", {})
            tokens += self.count_text(json.dumps(schema, separators=(",", ":")))
        return tokens

    def count_text(self, text: str) -> int:
        """Tokens of `text` in the model's tokenizer."""
        return len(self._litellm.encode(model=self.model, text=text))

    def answer(self, body: dict[str, Any]) -> Reply:
        """The reply to one chat request body (a 400 for requests polyg does not send)."""
        messages = _objects(body.get("messages"))
        system = next((_content(m) for m in messages if m.get("role") == "system"), "")
        user = next((_content(m) for m in messages if m.get("role") == "user"), "")
        if system.startswith(EXTRACTOR_SYSTEM):
            kind = "extractor"
            extraction = RuleExtractor().extract(
                _marked(user), _known_names(user), _reference(user)
            )
            value: dict[str, Any] = extraction.model_dump(mode="json")
        elif system.startswith(CLASSIFIER_SYSTEM):
            kind = "classifier"
            intent = RuleClassifier().classify(_marked(user), _known_names(user), _reference(user))
            value = _intent_draft(intent)
        elif system.startswith(SYNTHESIZER_SYSTEM):
            kind = "synthesizer"
            value = _synthesis(user).model_dump(mode="json")
            self.synthesis_requests.append(_plumbing(user))
        else:
            return Reply.error(
                400,
                message="the polyg LLM stand-in answers only polyg's classifier, extractor and "
                "synthesizer requests; point other clients at a real model",
            )
        content = json.dumps(value)
        reply = Reply(
            content=content,
            prompt_tokens=self.count_prompt(body),
            completion_tokens=self.count_text(content),
        )
        self.calls[kind] = self.calls.get(kind, 0) + 1
        tally = self.tokens.setdefault(kind, {"prompt_tokens": 0, "completion_tokens": 0})
        tally["prompt_tokens"] += reply.prompt_tokens
        tally["completion_tokens"] += reply.completion_tokens
        return reply

    def plumbing(self) -> dict[str, int]:
        """How many synthesis requests carried the question, its type's answer shape and
        the context with its node ids (what the extractive answer is built from)."""
        reqs = self.synthesis_requests
        return {
            "requests": len(reqs),
            "with_question": sum(1 for r in reqs if r["question"]),
            "with_answer_shape": sum(1 for r in reqs if r["shape_matches_type"]),
            "with_context_nodes": sum(1 for r in reqs if r["nodes"] > 0),
        }

    def by_kind(self) -> list[dict[str, Any]]:
        """Mean tokens per request of each kind: {kind, calls, prompt_tokens, completion_tokens}."""
        return [
            {
                "kind": kind,
                "calls": n,
                "prompt_tokens": round(self.tokens[kind]["prompt_tokens"] / n, 1),
                "completion_tokens": round(self.tokens[kind]["completion_tokens"] / n, 1),
            }
            for kind, n in sorted(self.calls.items())
        ]

    def __call__(self, body: dict[str, Any]) -> Reply:
        return self.answer(body)


@asynccontextmanager
async def standin_server(
    model: str = DEFAULT_STANDIN_MODEL, *, timeout_s: float = 30.0
) -> AsyncGenerator[tuple[ScriptedLLMServer, LiteLLMProvider]]:
    """A stand-in server on 127.0.0.1 and a litellm provider for `model` pointed at it.

    Args:
        model: A litellm model name with a price in litellm's table (e.g.
            `openai/gpt-4o-mini`); the requests go to the local server, never to
            the provider.
        timeout_s: The provider's per-call timeout.

    Yields:
        The running server (its `requests` and `request_responder.calls` count what
        was asked) and the provider to give `Memory(llm=...)`.
    """
    responder = StandinResponder(model)
    async with ScriptedLLMServer(request_responder=responder) as server:
        llm = LiteLLMProvider(
            model, api_base=server.api_base, api_key="local-standin", timeout_s=timeout_s
        )
        logger.info("LLM stand-in for %s listening on %s", model, server.api_base)
        yield server, llm
