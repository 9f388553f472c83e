"""The LLM provider on top of litellm: JSON-schema output, retries, timeouts, usage.

litellm reaches OpenAI, Anthropic, Ollama and any OpenAI-compatible server
through one call. It is an optional extra (`pip install 'polyg-core[litellm]'`)
and is imported when a provider is built, not when this module is imported,
because importing it takes seconds.

The helpers `import_litellm`, `RetryPolicy`, `call_with_retries` and
`config_hint` are shared with the litellm embedder.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import random
import re
import sys
from collections.abc import Awaitable, Callable
from dataclasses import KW_ONLY, dataclass, field
from email.utils import parsedate_to_datetime
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import anyio
from polyg_shared.timeutil import utc_now
from pydantic import BaseModel, ValidationError

from polyg_core.errors import ProviderError
from polyg_core.providers.json_extract import NoJSONFound, extract_json_object
from polyg_core.providers.llm.base import LLMResult, Usage

if TYPE_CHECKING:
    from polyg_core.config import Settings
    from polyg_core.providers.llm.base import LLM

__all__ = [
    "LiteLLMProvider",
    "RetryPolicy",
    "call_with_retries",
    "config_hint",
    "import_litellm",
    "make_llm",
]

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)
R = TypeVar("R")

OutputMode = Literal["json_schema", "json_object", "prompt"]
_MODES: tuple[OutputMode, ...] = ("json_schema", "json_object", "prompt")

_KEY_ENV = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "vertex_ai": "GOOGLE_APPLICATION_CREDENTIALS",
    "groq": "GROQ_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "together_ai": "TOGETHERAI_API_KEY",
    "fireworks_ai": "FIREWORKS_AI_API_KEY",
    "azure": "AZURE_API_KEY",
    "cohere": "COHERE_API_KEY",
    "xai": "XAI_API_KEY",
}
_REJECTS_FORMAT = re.compile(r"response_format|json_schema|json_object|structured output", re.I)
_RETRYABLE_STATUS = frozenset({408, 409, 429})


def import_litellm() -> ModuleType:
    """Import litellm, or say how to install it.

    Raises:
        ImportError: when the `litellm` extra is not installed.
    """
    if "litellm" not in sys.modules:
        # litellm otherwise downloads its price table from GitHub at import; polyg
        # starts offline and uses the table shipped in the wheel. An explicit
        # setting of the variable wins.
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        import litellm
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "LLM and remote-embedding providers need litellm: pip install 'polyg-core[litellm]'"
        ) from exc
    return litellm


def quiet_litellm(litellm: ModuleType) -> None:
    """Turn off litellm's telemetry and its 'Give Feedback' banners on errors."""
    setattr(litellm, "telemetry", False)  # noqa: B010 - the module type has no such attribute
    setattr(litellm, "suppress_debug_info", True)  # noqa: B010


def config_hint(model: str, api_base: str | None, *, setting: str = "LLM_MODEL") -> str:
    """What a user should check when calls to `model` fail."""
    provider = model.split("/", 1)[0] if "/" in model else ""
    if provider in ("ollama", "ollama_chat"):
        key = "no API key is needed; check that Ollama is running and has pulled the model"
    else:
        var = _KEY_ENV.get(provider, "the provider's API key variable, e.g. OPENAI_API_KEY")
        key = f"the API key ({var})"
    base = f"LLM_BASE_URL (now {api_base})" if api_base else "LLM_BASE_URL (unset)"
    return f"Check {setting} (now {model!r}, format 'provider/model'), {key}, and {base}."


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded retries with exponential backoff for transient provider errors.

    Attributes:
        max_retries: Retries after the first attempt (0 = try once).
        timeout_s: Per-attempt timeout given to litellm; a hard bound slightly
            above it also cancels the attempt.
        backoff_base_s: First backoff; doubles on each retry (with jitter).
        backoff_max_s: Cap on any wait, including a server's `Retry-After`.
    """

    max_retries: int = 3
    timeout_s: float = 30.0
    backoff_base_s: float = 0.5
    backoff_max_s: float = 20.0

    @property
    def hard_timeout_s(self) -> float:
        """The bound after which an attempt is cancelled whatever litellm does."""
        return self.timeout_s * 1.5 + 0.5

    def delay(self, retry: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number `retry` (0-based)."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.backoff_max_s)
        ceiling = min(self.backoff_base_s * (2**retry), self.backoff_max_s)
        return random.uniform(ceiling / 2, ceiling)


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def _is_timeout(litellm: ModuleType, exc: BaseException) -> bool:
    return isinstance(exc, TimeoutError | litellm.Timeout)


def _is_retryable(litellm: ModuleType, exc: BaseException) -> bool:
    if _is_timeout(litellm, exc) or isinstance(exc, litellm.APIConnectionError):
        return True
    if isinstance(exc, litellm.BadRequestError | litellm.AuthenticationError):
        return False
    status = _status(exc)
    if status is not None:
        return status in _RETRYABLE_STATUS or status >= 500
    return isinstance(
        exc,
        litellm.RateLimitError
        | litellm.InternalServerError
        | litellm.ServiceUnavailableError
        | litellm.BadGatewayError,
    )


def _retry_after(exc: BaseException) -> float | None:
    """The server's requested wait in seconds, from `retry-after-ms` or `retry-after`."""
    for source in (getattr(exc, "litellm_response_headers", None), _response_headers(exc)):
        if source is None:
            continue
        try:
            ms = source.get("retry-after-ms")
            if ms is not None:
                return float(ms) / 1000
            value = source.get("retry-after")
        except (AttributeError, ValueError, TypeError):
            continue
        if value is None:
            continue
        try:
            return float(value)
        except ValueError:
            pass
        try:
            when = parsedate_to_datetime(str(value))
        except (TypeError, ValueError):
            continue
        return max((when - utc_now()).total_seconds(), 0.0)
    return None


def _response_headers(exc: BaseException) -> Any:
    response = getattr(exc, "response", None)
    return getattr(response, "headers", None)


def _summary(exc: BaseException, limit: int = 300) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= limit else text[:limit] + "..."


async def call_with_retries(
    litellm: ModuleType,
    attempt: Callable[[], Awaitable[R]],
    *,
    policy: RetryPolicy,
    what: str,
    hint: str,
) -> R:
    """Run `attempt`, retrying transient errors (timeouts, 429, 5xx, connection).

    Errors that retrying cannot fix (bad request, authentication, ...) are
    re-raised unchanged for the caller to handle.

    Args:
        litellm: The litellm module (for its exception classes).
        attempt: Makes one call.
        policy: Retry count, timeouts and backoff.
        what: Names the call in messages, e.g. "LLM call to 'openai/gpt-4o-mini'".
        hint: What to check, appended to the final error.

    Raises:
        ProviderError: when every attempt failed with a transient error.
    """
    last: BaseException | None = None
    for retry in range(policy.max_retries + 1):
        try:
            with anyio.fail_after(policy.hard_timeout_s):
                return await attempt()
        except Exception as exc:
            if not _is_retryable(litellm, exc):
                raise
            last = exc
        if retry == policy.max_retries:
            break
        wait = policy.delay(retry, _retry_after(last))
        logger.warning(
            "%s failed (%s); retry %d/%d in %.2fs",
            what,
            _summary(last, 120),
            retry + 1,
            policy.max_retries,
            wait,
        )
        await anyio.sleep(wait)
    assert last is not None
    attempts = policy.max_retries + 1
    if _is_timeout(litellm, last):
        reason = (
            f"timed out after {policy.timeout_s:g} s (timeout) on each of {attempts} attempt(s); "
            "raise LLM_TIMEOUT if the model is slow"
        )
    else:
        reason = f"failed after {attempts} attempt(s): {_summary(last)}"
    raise ProviderError(f"{what} {reason}. {hint}") from last


def _strict_json_schema(schema: type[BaseModel]) -> tuple[dict[str, Any], bool]:
    """The model's JSON schema with closed objects, and whether strict mode can apply.

    Strict structured output requires every property to be required and no
    defaults; models with optional fields are sent non-strict.
    """
    doc = schema.model_json_schema()
    strict = True

    def visit(node: Any) -> None:
        nonlocal strict
        if isinstance(node, dict):
            if node.get("type") == "object" and isinstance(node.get("properties"), dict):
                node.setdefault("additionalProperties", False)
                if set(node.get("required", [])) != set(node["properties"]):
                    strict = False
                if node["additionalProperties"] is not False:
                    strict = False
            if "default" in node:
                strict = False
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(doc)
    return doc, strict


def _schema_name(schema: type[BaseModel]) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", schema.__name__)[:64] or "reply"


def _validation_summary(exc: ValidationError) -> str:
    parts = [
        f"{'.'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}"
        for err in exc.errors(include_url=False)[:6]
    ]
    return "; ".join(parts)


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
                problem = f"it does not match the schema: {_validation_summary(exc)}"
            else:
                return LLMResult(value=value, usage=usage, model=self.model)
            logger.info("model %s gave an unusable reply: %s", self.model, problem)
            if content.strip():
                conversation.append({"role": "assistant", "content": content})
            conversation.append(
                {
                    "role": "user",
                    "content": f"Your reply could not be used: {problem}. Reply again with only "
                    f"one JSON object that matches the {schema.__name__} schema.",
                }
            )
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
                raise ProviderError(f"{what} was refused: {_summary(exc)}. {hint}") from exc
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
            _summary(exc, 160),
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
            instructions = (
                "Reply with one JSON object only (no prose, no code fences) that matches "
                f"this JSON schema:\n{json.dumps(doc, separators=(',', ':'))}"
            )
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
