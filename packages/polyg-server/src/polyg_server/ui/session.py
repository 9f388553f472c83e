"""The explorer's login session: a signed, expiring cookie derived from the API key.

The cookie never holds the key itself: its value is `<expiry>.<HMAC-SHA256(key, expiry)>`,
so it stays valid only until it expires or the key changes, and needs no server state.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from dataclasses import dataclass

from starlette.datastructures import Headers
from starlette.requests import cookie_parser
from starlette.types import Scope

COOKIE_NAME = "polyg_session"
COOKIE_PATHS = ("/ui", "/api/")
"""Path prefixes where the session cookie counts as authentication (never /mcp)."""


def cookie_path_allowed(path: str) -> bool:
    """True for the explorer's page and JSON API paths."""
    return path == "/ui" or path.startswith("/ui/") or path.startswith(COOKIE_PATHS[1])


@dataclass(frozen=True)
class SessionSigner:
    """Issues and checks session cookie values for one API key.

    Args:
        api_key: the server's API key (the HMAC secret).
        max_age_s: how long a login lasts.
    """

    api_key: str
    max_age_s: int = 12 * 3600

    def _mac(self, expiry: int) -> str:
        msg = f"polyg-ui-session:{expiry}".encode()
        return hmac.new(self.api_key.encode(), msg, hashlib.sha256).hexdigest()

    def issue(self, now: float | None = None) -> str:
        """A new cookie value, valid for `max_age_s` from `now`."""
        expiry = int((time.time() if now is None else now) + self.max_age_s)
        return f"{expiry}.{self._mac(expiry)}"

    def valid(self, value: str, now: float | None = None) -> bool:
        """True when `value` was issued for this key and has not expired."""
        expiry_text, _, mac = value.partition(".")
        if not expiry_text.isdigit() or not mac:
            return False
        expiry = int(expiry_text)
        if expiry < (time.time() if now is None else now):
            return False
        return hmac.compare_digest(mac.encode(), self._mac(expiry).encode())

    def key_matches(self, candidate: str) -> bool:
        """True when `candidate` is the API key (constant-time)."""
        return hmac.compare_digest(candidate.encode(), self.api_key.encode())

    def authenticates(self, scope: Scope) -> bool:
        """True for a request to /ui or /api/ carrying a valid session cookie."""
        if not cookie_path_allowed(str(scope.get("path", ""))):
            return False
        raw = Headers(scope=scope).get("cookie")
        if not raw:
            return False
        value = cookie_parser(raw).get(COOKIE_NAME)
        return bool(value) and self.valid(value)
