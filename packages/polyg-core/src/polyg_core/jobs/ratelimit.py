"""A per-provider rate limiter that honours 429 / Retry-After across worker processes.

When a provider answers 429, every job of every worker that uses that provider
pauses until the provider's `Retry-After` (or a backoff) has passed: the pause
is a key with a time-to-live in the same Redis server as the queue, so worker
processes share it. A local semaphore bounds concurrent calls per provider.
"""

from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass, field, replace
from typing import TypeVar

import anyio
from pydantic import BaseModel
from redis.asyncio import Redis

from polyg_core.errors import PolygError, ProviderError
from polyg_core.providers.litellm_common import retry_after
from polyg_core.providers.llm.base import LLM, LLMResult

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

PAUSE_PREFIX = "polyg:ratelimit:"


class RateLimited(PolygError):
    """The provider kept answering 429 for longer than a job may wait; the job is retried later.

    Not a `ProviderError`: the extractor must not fall back to rules because of it.
    """


class ProviderUnavailable(PolygError):
    """A transient provider failure (5xx, timeout, connection) in a queued job; it is retried."""


def provider_of(model: str) -> str:
    """The provider part of a litellm model name (`openai/gpt-4o-mini` -> `openai`)."""
    return model.split("/", 1)[0] if "/" in model else model or "default"


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def rate_limit_cause(exc: BaseException) -> tuple[bool, float | None]:
    """Whether `exc` (or what caused it) is a 429, and the Retry-After it carried."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if _status(current) == 429 or type(current).__name__ == "RateLimitError":
            return True, retry_after(current)
        current = current.__cause__ or current.__context__
    return False, None


@dataclass
class ProviderRateLimiter:
    """Pauses calls to a provider after a 429 and bounds concurrent calls per provider.

    Args:
        redis: where the pause is shared between processes (None: this process only).
        max_concurrency: concurrent calls per provider in this process.
        default_pause_s: pause after a 429 that carries no Retry-After (doubles while
            429s continue, up to `max_pause_s`).
        max_pause_s: the longest pause, whatever the server asks.
    """

    redis: Redis | None = None
    max_concurrency: int = 8
    default_pause_s: float = 1.0
    max_pause_s: float = 60.0
    _local_until: dict[str, float] = field(default_factory=dict[str, float], init=False)
    _streak: dict[str, int] = field(default_factory=dict[str, int], init=False)
    _slots: dict[str, anyio.Semaphore] = field(default_factory=dict[str, anyio.Semaphore])
    rate_limited: int = field(default=0, init=False)
    """429 answers seen by this limiter (for statistics and benchmarks)."""

    def _slot(self, provider: str) -> anyio.Semaphore:
        if provider not in self._slots:
            self._slots[provider] = anyio.Semaphore(self.max_concurrency)
        return self._slots[provider]

    async def paused_for(self, provider: str) -> float:
        """Seconds left of the provider's pause (0 when calls may go ahead)."""
        local = max(self._local_until.get(provider, 0.0) - time.monotonic(), 0.0)
        if self.redis is None:
            return local
        ms = await self.redis.pttl(PAUSE_PREFIX + provider)
        return max(local, (ms / 1000) if ms and ms > 0 else 0.0)

    async def wait(self, provider: str) -> None:
        """Return when the provider is not paused."""
        # The pause is a Redis key other processes set: polling is the way.
        while (left := await self.paused_for(provider)) > 0:  # noqa: ASYNC110
            await anyio.sleep(min(left, 1.0))

    async def pause(self, provider: str, retry_after: float | None) -> float:
        """Record a 429: pause the provider (shared with other workers); returns the pause."""
        self.rate_limited += 1
        streak = self._streak.get(provider, 0)
        self._streak[provider] = streak + 1
        if retry_after is None:
            backoff = self.default_pause_s * (2 ** min(streak, 8))
            retry_after = random.uniform(backoff / 2, backoff)
        seconds = min(max(retry_after, 0.05), self.max_pause_s)
        self._local_until[provider] = max(
            self._local_until.get(provider, 0.0), time.monotonic() + seconds
        )
        if self.redis is not None:
            key = PAUSE_PREFIX + provider
            ms = int(seconds * 1000)
            current = await self.redis.pttl(key)
            if current < ms:
                await self.redis.set(key, b"1", px=ms)
        logger.warning("provider %s answered 429: pausing its calls for %.2fs", provider, seconds)
        return seconds

    def succeeded(self, provider: str) -> None:
        """A call went through: the next 429 starts the backoff from the beginning."""
        self._streak.pop(provider, None)

    async def acquire(self, provider: str) -> anyio.Semaphore:
        """Wait for the pause to end and take a call slot; release the returned semaphore."""
        slot = self._slot(provider)
        await self.wait(provider)
        await slot.acquire()
        return slot


@dataclass
class RateLimitedLLM:
    """An `LLM` for queued jobs: waits out 429s and retries transient failures as jobs.

    - A 429 pauses the provider for every worker (Retry-After honoured) and the call
      is made again after the pause, for up to `max_wait_s` in total; after that
      `RateLimited` is raised and the job is retried later by the queue.
    - Other transport failures raise `ProviderUnavailable`, so the job is retried
      with backoff instead of being written with the rule-based extraction.
    - A reply that never validates stays a `ProviderError` (the extractor then uses
      its rules and says so in the result).

    Args:
        inner: the LLM to call (a litellm provider is used with its own retries off).
        limiter: the shared limiter.
        max_wait_s: how long one job waits out 429s before giving up this attempt.
    """

    inner: LLM
    limiter: ProviderRateLimiter
    max_wait_s: float = 120.0

    def __post_init__(self) -> None:
        from polyg_core.providers.llm.litellm import LiteLLMProvider

        if isinstance(self.inner, LiteLLMProvider) and self.inner.max_retries:
            # The limiter waits out 429s for all jobs at once; per-call retries would
            # keep hitting the provider while it is asking everyone to slow down.
            self.inner = replace(self.inner, max_retries=0)

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    @property
    def provider(self) -> str:
        return provider_of(self.inner.model_name)

    async def complete_json(
        self, *, system: str, user: str, schema: type[T], max_tokens: int
    ) -> LLMResult[T]:
        """Call the model, pausing on 429 (see the class docstring).

        Raises:
            RateLimited: 429s went on for longer than `max_wait_s`.
            ProviderUnavailable: a transient failure (the job is retried).
            ProviderError: the reply never matched the schema.
        """
        provider = self.provider
        deadline = time.monotonic() + self.max_wait_s
        while True:
            slot = await self.limiter.acquire(provider)
            try:
                result = await self.inner.complete_json(
                    system=system, user=user, schema=schema, max_tokens=max_tokens
                )
            except ProviderError as exc:
                limited, retry_after = rate_limit_cause(exc)
                if not limited:
                    if exc.__cause__ is None:
                        raise
                    raise ProviderUnavailable(
                        f"{exc} Queued jobs retry this with backoff; get_job shows each attempt."
                    ) from exc
                paused = await self.limiter.pause(provider, retry_after)
                if time.monotonic() + paused > deadline:
                    raise RateLimited(
                        f"provider {provider!r} kept answering 429 (rate limited) for more "
                        f"than {self.max_wait_s:g}s; the job is retried later. Lower the "
                        "worker concurrency or raise the provider's rate limit."
                    ) from exc
                continue
            finally:
                slot.release()
            self.limiter.succeeded(provider)
            return result
