"""Which Host and Origin names the HTTP server answers, and which bind is loopback.

A DNS-rebinding page reaches a server under a name of the attacker's; a browser page
of another site calls it with that site's Origin. `SecurityMiddleware` refuses both
with these rules: loopback names (and the bind address) plus POLYG_ALLOWED_HOSTS for
Host, loopback origins plus POLYG_ALLOWED_ORIGINS for Origin.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
LOOPBACK_ORIGINS = ("http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*")
_LOOPBACK_HOST_NAMES = ("127.0.0.1", "localhost", "[::1]")
_WILDCARD_HOSTS = ("", "0.0.0.0", "::", "[::]")


def parse_origins(value: str) -> list[str]:
    """The origins of a comma-separated `POLYG_ALLOWED_ORIGINS` value, without trailing '/'."""
    return [o.strip().rstrip("/") for o in value.split(",") if o.strip()]


def origin_allowed(origin: str, allowed: Sequence[str]) -> bool:
    """True for an origin in `allowed` (exact, `*`, or `scheme://host:*` for any port)."""
    origin = origin.rstrip("/")
    for pattern in allowed:
        if pattern in ("*", origin):
            return True
        if pattern.endswith(":*"):
            base = pattern[:-2]
            if origin == base or origin.startswith(base + ":"):
                rest = origin[len(base) + 1 :]
                if rest == "" or rest.isdigit():
                    return True
    return False


def parse_hosts(value: str) -> list[str]:
    """The host names of a comma-separated `POLYG_ALLOWED_HOSTS` value, lower-cased."""
    return [h.strip().lower() for h in value.split(",") if h.strip()]


def is_loopback(host: str) -> bool:
    """True for `localhost` and loopback addresses (127.0.0.0/8, ::1)."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def allowed_hosts_for(bind_host: str, extra: Sequence[str]) -> list[str]:
    """Host header values to accept, on any bind: loopback names, plus `extra`.

    A bind to one address (not a wildcard such as 0.0.0.0) also accepts that address,
    as clients on the network call it. Any other name gets 421, so a DNS-rebinding page
    cannot reach the server: a public name must be listed in POLYG_ALLOWED_HOSTS.
    """
    hosts = [*_LOOPBACK_HOST_NAMES]
    bind = bind_host.strip().lower()
    if bind not in _WILDCARD_HOSTS and not is_loopback(bind):
        hosts.append(f"[{bind.strip('[]')}]" if ":" in bind else bind)
    return [*hosts, *(h for h in extra if h not in hosts)]


def host_allowed(host: str, allowed: Sequence[str]) -> bool:
    """True for a Host header naming an allowed host (any port unless the entry has one)."""
    host = host.strip().lower()
    if host in allowed:
        return True
    if host.startswith("["):
        name, _, rest = host.partition("]")
        name += "]"
        port = rest[1:] if rest.startswith(":") else None
        if rest and port is None:
            return False
    else:
        name, sep, port_text = host.rpartition(":")
        if not sep:
            name, port_text = host, ""
        port = port_text if sep else None
    if port is not None and not port.isdigit():
        return False
    return name in allowed
