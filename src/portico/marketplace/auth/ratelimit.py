"""The admin API's token endpoints are rate limited per client address.

``/auth/token``: 10 attempts per 5 minutes (the seed's limit), every attempt counting, whether
it succeeds, fails or is malformed, since each one may be a password guess. ``/auth/token/refresh``
has its own budget of 30 per 5 minutes: a refresh token is 256 random bits, so this only caps
a misbehaving client, and a portal tab refreshing hourly never comes near it. Portal
registration (``POST /api/portal/v1/registrations``) has its own, 5 per 10 minutes: each one
hashes a password with argon2 and may create an account.

The client address is ``request.state.client_ip``: the socket peer, or the ``X-Forwarded-For``
hop named by a trusted proxy (``PORTICO_TRUSTED_PROXIES``; see ``core/middleware.py``). IPv6
clients are counted per /64: one host commonly holds a whole /64, and counting each of its
addresses apart would hand it 2^64 budgets.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request

from portico.core.errors import TooManyRequests
from portico.core.ratelimit import Limit, RateLimiter

TOKEN_ATTEMPTS = Limit("admin-api-token", attempts=10, window=300)
REFRESH_ATTEMPTS = Limit("admin-api-refresh", attempts=30, window=300)
REGISTRATIONS = Limit("portal-registration", attempts=5, window=600)


def limiter(request: Request) -> RateLimiter:
    """The process's limiter (Redis-backed when configured), made with the admin API app and
    shared by the control-plane app."""
    existing: RateLimiter = request.app.state.rate_limiter
    return existing


def client_key(address: str | None) -> str:
    if not address:
        return "unknown"
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


async def enforce(request: Request, limit: Limit) -> None:
    """Count this request against the client address's budget; 429 with ``Retry-After``
    once it is spent."""
    client = client_key(getattr(request.state, "client_ip", None))
    decision = await limiter(request).hit(limit, client)
    if not decision.allowed:
        raise TooManyRequests(
            decision.retry_after,
            f"at most {limit.attempts} attempts per {limit.window // 60} minutes from one "
            f"address; retry in {decision.retry_after} seconds",
        )


def rate_limited(limit: Limit) -> Callable[[Request], Coroutine[Any, Any, None]]:
    """``enforce`` as a dependency: every request counts, whatever its body."""

    async def dependency(request: Request) -> None:
        await enforce(request, limit)

    dependency.__name__ = f"rate_limit_{limit.name.replace('-', '_')}"
    return dependency
