"""The LLM provider on top of litellm: JSON-schema output, retries, timeouts, usage.

litellm reaches OpenAI, Anthropic, Ollama and any OpenAI-compatible server
through one call. It is an optional extra (`pip install 'polyg-core[litellm]'`)
imported when a provider is built (see `litellm_common`).
"""

from __future__ import annotations

import functools
import logging
import re
from dataclasses import KW_ONLY, dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

from pydantic import BaseModel, ValidationError

from polyg_core.errors import ProviderError
from polyg_core.providers.json_extract import NoJSONFound, extract_json_object
from polyg_core.providers.litellm_common import (
    RetryPolicy,
    call_with_retries,
    config_hint,
    import_litellm,
    quiet_litellm,
    summarize_error,
)
from polyg_core.providers.llm.base import LLMResult, Usage
from polyg_core.providers.llm.structured import (
    json_reply_instructions,
    retry_prompt,
    validation_summary,
)

if TYPE_CHECKING:
    from polyg_core.config import Settings
    from polyg_core.providers.llm.base import LLM

__all__ = ["LiteLLMProvider", "OutputMode", "make_llm"]

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

OutputMode = Literal["json_schema", "json_object", "prompt"]
_MODES: tuple[OutputMode, ...] = ("json_schema", "json_object", "prompt")
_REJECTS_FORMAT = re.compile(r"response_format|json_schema|json_object|structured output", re.I)


def _strict_json_schema(schema: type[BaseModel]) -> tuple[dict[str, Any], bool]:
    """The model's JSON schema with closed objects, and whether strict mode can apply.

    Strict structured output requires every property to be required and no
    defaults; models with optional fields are sent non-strict.
    """
    doc = schema.model_json_schema()
    strict = True

    def visit(value: Any) -> None:
        nonlocal strict
        if isinstance(value, dict):
            node = cast(dict[str, Any], value)
            if node.get("type") == "object" and isinstance(node.get("properties"), dict):
                node.setdefault("additionalProperties", False)
                if set(node.get("required", [])) != set(node["properties"]):
                    strict = False
                if node["additionalProperties"] is not False:
                    strict = False
            if "default" in node:
                strict = False
            for child in node.values():
                visit(child)
        elif isinstance(value, list):
            for child in cast(list[Any], value):
                visit(child)

    visit(doc)
    return doc, strict


def _schema_name(schema: type[BaseModel]) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", schema.__name__)[:64] or "reply"


@dataclass
class LiteLLMProvider:
    """An `LLM` backed by litellm.

    Asks for JSON-schema structured output; when the provider rejects that,
    falls back to JSON mode and then to the schema in the system prompt, and
    remembers the mode that works. Replies are parsed robustly and validated
    with the pydantic model; an invalid reply is retried once with the
    validation error shown to the model.

    Args:
        model: litellm model name, e.g. `openai/gpt-4o-mini`, `anthropic/claude-3-5-haiku-latest`,
            `ollama_chat/llama3.1`.
        api_base: Base URL of an OpenAI-compatible server or Ollama.
        api_key: API key; when None litellm reads the provider's usual variable.
        timeout_s: Per-attempt timeout in seconds.
        max_retries: Retries of transient errors after the first attempt.
        backoff_base_s: First backoff between retries (doubles each time).
        backoff_max_s: Longest wait between retries, including `Retry-After`.
        temperature: Sent only when set (some models accept only their default).
    """

    model: str
    _: KW_ONLY
    api_base: str | None = None
    api_key: str | None = None
    timeout_s: float = 30.0
    max_retries: int = 3
    backoff_base_s: float = 0.5
    backoff_max_s: float = 20.0
    temperature: float | None = None
    _litellm: ModuleType = field(init=False, repr=False)
    _mode: int = field(default=0, init=False, repr=False)
    _strict: bool = field(default=True, init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.model:
            raise ValueError("LiteLLMProvider needs a model name such as 'openai/gpt-4o-mini'.")
        self._litellm = import_litellm()
        quiet_litellm(self._litellm)

    @property
    def model_name(self) -> str:
        return self.model

    @property
    def output_mode(self) -> OutputMode:
        """How structured output is requested now (it degrades on rejection)."""
        return _MODES[self._mode]

    @property
    def _policy(self) -> RetryPolicy:
        return RetryPolicy(
            max_retries=self.max_retries,
            timeout_s=self.timeout_s,
            backoff_base_s=self.backoff_base_s,
            backoff_max_s=self.backoff_max_s,
        )

    async def complete_json(
        self, *, system: str, user: str, schema: type[T], max_tokens: int
    ) -> LLMResult[T]:
        """Ask for a reply matching `schema`.

        Raises:
            ProviderError: after retries (timeouts, HTTP errors), when the provider
                refuses the request, or when the reply never validates.
        """
        usage = Usage()
        conversation: list[dict[str, str]] = [{"role": "user", "content": user}]
        problem = ""
        for _ in range(2):
            content, finish = await self._complete(system, conversation, schema, max_tokens, usage)
            try:
                value = schema.model_validate(extract_json_object(content))
            except NoJSONFound as exc:
                problem = str(exc)
                if finish == "length":
                    problem += f" (the reply was cut off at max_tokens={max_tokens})"
            except ValidationError as exc:
                problem = f"it does not match the schema: {validation_summary(exc)}"
            else:
                return LLMResult(value=value, usage=usage, model=self.model)
            logger.info("model %s gave an unusable reply: %s", self.model, problem)
            if content.strip():
                conversation.append({"role": "assistant", "content": content})
            conversation.append({"role": "user", "content": retry_prompt(problem, schema)})
        raise ProviderError(
            f"Model {self.model!r} twice returned output that is not a valid "
            f"{schema.__name__}: {problem}. Use a model that supports structured (JSON) "
            "output, or raise the token limit if replies are cut off."
        )

    async def _complete(
        self,
        system: str,
        conversation: list[dict[str, str]],
        schema: type[BaseModel],
        max_tokens: int,
        usage: Usage,
    ) -> tuple[str, str | None]:
        """One completion with transport retries and output-mode fallback."""
        litellm = self._litellm
        what = f"LLM call to {self.model!r}"
        hint = config_hint(self.model, self.api_base)
        while True:
            kwargs = self._request(system, conversation, schema, max_tokens)
            try:
                response = await call_with_retries(
                    litellm,
                    functools.partial(litellm.acompletion, **kwargs),
                    policy=self._policy,
                    what=what,
                    hint=hint,
                )
            except ProviderError:
                raise
            except Exception as exc:
                if self._fall_back(exc):
                    continue
                raise ProviderError(f"{what} was refused: {summarize_error(exc)}. {hint}") from exc
            self._record_usage(response, usage)
            return self._content(response)

    def _fall_back(self, exc: Exception) -> bool:
        """Step down to a simpler output mode if `exc` says the current one is unsupported."""
        litellm = self._litellm
        if self._mode >= len(_MODES) - 1:
            return False
        rejected = isinstance(exc, litellm.UnsupportedParamsError) or (
            isinstance(exc, litellm.BadRequestError) and bool(_REJECTS_FORMAT.search(str(exc)))
        )
        if not rejected:
            return False
        if self.output_mode == "json_schema" and self._strict:
            self._strict = False
        else:
            self._mode += 1
        logger.info(
            "model %s rejected the output format (%s); now using %s%s",
            self.model,
            summarize_error(exc, 160),
            self.output_mode,
            "" if self._strict else " (non-strict)",
        )
        return True

    def _request(
        self,
        system: str,
        conversation: list[dict[str, str]],
        schema: type[BaseModel],
        max_tokens: int,
    ) -> dict[str, Any]:
        doc, strict = _strict_json_schema(schema)
        mode = self.output_mode
        if mode == "json_schema":
            instructions = "Reply with one JSON object that matches the requested schema."
        else:
            instructions = json_reply_instructions(schema, doc)
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": f"{system}\n\n{instructions}"},
                *conversation,
            ],
            "max_tokens": max_tokens,
            "timeout": self.timeout_s,
            # Retries are ours (bounded, with backoff); none inside litellm or the SDK.
            "num_retries": 0,
            "max_retries": 0,
        }
        if mode == "json_schema":
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": _schema_name(schema),
                    "schema": doc,
                    "strict": strict and self._strict,
                },
            }
        elif mode == "json_object":
            kwargs["response_format"] = {"type": "json_object"}
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.api_key:
            kwargs["api_key"] = self.api_key
        if self.temperature is not None:
            kwargs["temperature"] = self.temperature
        return kwargs

    def _content(self, response: Any) -> tuple[str, str | None]:
        try:
            choice = response.choices[0]
        except (AttributeError, IndexError, TypeError):
            return "", None
        message = getattr(choice, "message", None)
        content = getattr(message, "content", None)
        finish = getattr(choice, "finish_reason", None)
        return (content if isinstance(content, str) else ""), (
            finish if isinstance(finish, str) else None
        )

    def _record_usage(self, response: Any, usage: Usage) -> None:
        raw = getattr(response, "usage", None)
        prompt = getattr(raw, "prompt_tokens", 0) or 0
        completion = getattr(raw, "completion_tokens", 0) or 0
        try:
            cost = float(self._litellm.completion_cost(completion_response=response) or 0.0)
        except Exception:  # unknown model or price: cost is simply not known
            cost = 0.0
        usage.add(
            Usage(
                prompt_tokens=int(prompt),
                completion_tokens=int(completion),
                cost_usd=cost,
                calls=1,
            )
        )


def make_llm(settings: Settings) -> LLM | None:
    """The configured LLM, or None when `LLM_MODEL` is unset (rule-based fallbacks answer).

    Raises:
        ImportError: when a model is configured but litellm is not installed.
    """
    if not settings.llm_model:
        return None
    return LiteLLMProvider(
        settings.llm_model,
        api_base=settings.llm_base_url,
        timeout_s=settings.llm_timeout_s,
        max_retries=settings.max_retries,
    )
