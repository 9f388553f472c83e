"""A growing wait after repeated failed authentications, per client address.

Guessing the API key online is made slow: the first `free_failures` wrong keys from one
address are answered at once, each further one locks the address out for a wait that
doubles (1 s, 2 s, 4 s, ... up to `max_delay_s`). While locked out, the address gets 429
with Retry-After and its keys are not checked at all, so a right guess during the wait
tells nothing. A right key clears the address. Memory is bounded: an address is forgotten
once its last failure is older than `forget_after_s`, and at most `max_addresses` are kept
(the oldest go first).
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class _Record:
    failures: int
    last_failure: float
    locked_until: float


class AuthThrottle:
    """Failed authentications per client address and the wait they have earned.

    Args:
        free_failures: failures answered without a wait.
        max_delay_s: the longest wait; 0 turns the throttle off.
        base_delay_s: the wait after the first failure beyond `free_failures`.
        forget_after_s: an address whose last failure is older than this is forgotten
            (never before its wait is over).
        max_addresses: the most addresses remembered at once.
        clock: monotonic seconds (injectable for tests).
    """

    def __init__(
        self,
        *,
        free_failures: int = 5,
        max_delay_s: float = 60.0,
        base_delay_s: float = 1.0,
        forget_after_s: float = 900.0,
        max_addresses: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if free_failures < 0 or max_delay_s < 0 or base_delay_s <= 0 or max_addresses < 1:
            raise ValueError(
                "AuthThrottle needs free_failures >= 0, max_delay_s >= 0, base_delay_s > 0 "
                "and max_addresses >= 1"
            )
        self.free_failures = free_failures
        self.max_delay_s = max_delay_s
        self.base_delay_s = base_delay_s
        self.forget_after_s = max(forget_after_s, max_delay_s)
        self.max_addresses = max_addresses
        self._clock = clock
        self._records: OrderedDict[str, _Record] = OrderedDict()

    @property
    def enabled(self) -> bool:
        """False when `max_delay_s` is 0: failures are never made to wait."""
        return self.max_delay_s > 0

    def __len__(self) -> int:
        return len(self._records)

    def wait_s(self, address: str) -> float:
        """Seconds left of the address's lockout (0 when it may try a key now)."""
        record = self._records.get(address)
        if record is None:
            return 0.0
        # Clamped: `now + delay - now` may exceed `delay` by a rounding error.
        return min(self.max_delay_s, max(0.0, record.locked_until - self._clock()))

    def failed(self, address: str) -> float:
        """Record a failed authentication; return the wait it starts (0 while still free)."""
        if not self.enabled:
            return 0.0
        now = self._clock()
        self._forget_old(now)
        record = self._records.pop(address, None) or _Record(0, now, now)
        record.failures += 1
        record.last_failure = now
        beyond = record.failures - self.free_failures
        delay = 0.0
        if beyond > 0:
            delay = min(self.base_delay_s * 2.0 ** min(beyond - 1, 60), self.max_delay_s)
            record.locked_until = now + delay
        self._records[address] = record  # most recent last: eviction takes the oldest
        while len(self._records) > self.max_addresses:
            self._records.popitem(last=False)
        return delay

    def succeeded(self, address: str) -> None:
        """A right key: the address starts again with its free failures."""
        self._records.pop(address, None)

    def _forget_old(self, now: float) -> None:
        while self._records:
            address, record = next(iter(self._records.items()))
            if now - record.last_failure <= self.forget_after_s or record.locked_until > now:
                return
            del self._records[address]


def retry_after_header(seconds: float) -> str:
    """A Retry-After value in whole seconds, at least 1."""
    return str(max(1, math.ceil(seconds)))
