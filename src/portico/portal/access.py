"""Who is calling the developer portal API.

A developer signs in as on the admin API (``POST /auth/token``) and sends the same ID token
(``Authorization: Bearer``), verified by the same service. Any account that can sign in is
a developer: no site permission is needed here, what a developer may see or do is decided
by each operation (a node's visibility, an organisation's membership).

- :data:`DeveloperDep`: a valid token of an account that can sign in, or 401.
- :data:`OptionalDeveloperDep`: the same, or nobody (anonymous) when no token is sent; a
  token that is sent and is not valid is still 401, never read as anonymous (a client
  with an expired token must learn so, not silently see less).

Then, the caller known, the query string is checked (``core/query.py``): unknown parameters
are 400, after the 401.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from portico.core.account import User, find_by_id
from portico.core.audit import Actor
from portico.core.db.session import SessionDep
from portico.core.errors import Unauthorized
from portico.core.openapi import raises
from portico.core.query import checkpoint, refuse_unknown
from portico.marketplace.public import TokenIssuer


@dataclass(frozen=True)
class Developer:
    user: User
    request_id: str | None
    ip: str | None

    @property
    def id(self) -> uuid.UUID:
        return self.user.id

    @property
    def actor(self) -> Actor:
        return Actor(id=self.user.id, email=self.user.email, request_id=self.request_id, ip=self.ip)


def _bearer(request: Request) -> str | None:
    header = request.headers.get("authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("malformed Authorization header; use 'Bearer <id token>'")
    return token.strip()


async def _developer(request: Request, session: SessionDep) -> Developer | None:
    token = _bearer(request)
    if token is None:
        return None
    tokens: TokenIssuer = request.app.state.token_issuer
    user = await find_by_id(session, await tokens.subject(session, token))
    if user is None or not user.can_sign_in:
        raise Unauthorized("invalid token")
    return Developer(
        user=user,
        request_id=getattr(request.state, "request_id", None),
        ip=getattr(request.state, "client_ip", None),
    )


@checkpoint
@raises(Unauthorized)
async def authenticate(request: Request, session: SessionDep) -> Developer:
    developer = await _developer(request, session)
    if developer is None:
        raise Unauthorized("authentication required: send 'Authorization: Bearer <id token>'")
    refuse_unknown(request)
    return developer


@checkpoint
@raises(Unauthorized)
async def authenticate_if_sent(request: Request, session: SessionDep) -> Developer | None:
    developer = await _developer(request, session)
    refuse_unknown(request)
    return developer


DeveloperDep = Annotated[Developer, Depends(authenticate)]
OptionalDeveloperDep = Annotated[Developer | None, Depends(authenticate_if_sent)]
