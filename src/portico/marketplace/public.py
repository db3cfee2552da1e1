"""The marketplace's public interface: the developer portal's contract with it.

``portico.portal`` imports nothing of ``portico.marketplace`` but this module; every other
module of the marketplace is internal to it and may change without the portal noticing.
What the portal needs and gets here:

- the audit coordinates of what it does to marketplace accounts (a registration creates one):
  :data:`SURFACE` and :data:`USER_MODULE`;
- the rate limit shared with the admin API's sign-ins (one limiter per process, per client
  address): :data:`REGISTRATIONS` and :func:`enforce_rate_limit`;
- the publication of the public keys of the admin API's ID tokens (the JWKS):
  :func:`key_set_publisher`, typed by the :class:`KeySetPublisher` protocol.

Adding to it is a change of the contract: keep it small, and wrap rather than re-export
what the portal should not depend on the shape of.
"""

from __future__ import annotations

from typing import Any, Protocol

from fastapi import Request
from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.clock import Clock
from portico.core.ratelimit import Limit
from portico.core.sealing import SecretBox
from portico.marketplace import SURFACE
from portico.marketplace.auth import ratelimit
from portico.marketplace.auth.keys import IdTokenService
from portico.marketplace.auth.ratelimit import REGISTRATIONS

__all__ = [
    "REGISTRATIONS",
    "SURFACE",
    "USER_MODULE",
    "KeySetPublisher",
    "enforce_rate_limit",
    "key_set_publisher",
]

#: the marketplace module that owns accounts, as audit entries name it
USER_MODULE = "user"


async def enforce_rate_limit(request: Request, limit: Limit) -> None:
    """Count the request against its client address's budget for ``limit``; 429
    (``TooManyRequests``, with ``Retry-After``) once it is spent."""
    await ratelimit.enforce(request, limit)


class KeySetPublisher(Protocol):
    async def jwks(self, session: AsyncSession) -> dict[str, Any]:
        """``{"keys": [public JWK, ...]}``, retired keys included."""
        ...


def key_set_publisher(box: SecretBox, clock: Clock) -> KeySetPublisher:
    """Publishes the stored public keys of the admin API's ID tokens; it reads them only, so
    no issuer is involved (one per process is enough: it keeps no per-request state)."""
    return IdTokenService(box, clock, issuer="")
