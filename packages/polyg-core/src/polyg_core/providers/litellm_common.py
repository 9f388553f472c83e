"""What the litellm-backed providers share: the guarded import, retries, hints.

litellm is an optional extra (`pip install 'polyg-core[litellm]'`). It is
imported when a provider is built, not when a polyg module is imported,
because importing it takes seconds.
"""

from __future__ import annotations

import logging
import os
import random
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from types import ModuleType
from typing import Any, TypeVar

import anyio
from polyg_shared.timeutil import utc_now

from polyg_core.errors import ProviderError

__all__ = [
    "RetryPolicy",
    "call_with_retries",
    "config_hint",
    "import_litellm",
    "quiet_litellm",
    "retry_after",
    "summarize_error",
]

logger = logging.getLogger(__name__)

R = TypeVar("R")

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


def retry_after(exc: BaseException) -> float | None:
    """The server's requested wait in seconds (never negative), from `retry-after-ms` or
    `retry-after` (seconds or an HTTP date), or None when it said nothing readable."""
    for source in (getattr(exc, "litellm_response_headers", None), _response_headers(exc)):
        if source is None:
            continue
        try:
            ms = source.get("retry-after-ms")
            if ms is not None:
                return max(float(ms) / 1000, 0.0)
            value = source.get("retry-after")
        except (AttributeError, ValueError, TypeError):
            continue
        if value is None:
            continue
        try:
            return max(float(value), 0.0)
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


def summarize_error(exc: BaseException, limit: int = 300) -> str:
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
        wait = policy.delay(retry, retry_after(last))
        logger.warning(
            "%s failed (%s); retry %d/%d in %.2fs",
            what,
            summarize_error(last, 120),
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
        reason = f"failed after {attempts} attempt(s): {summarize_error(last)}"
    raise ProviderError(f"{what} {reason}. {hint}") from last
