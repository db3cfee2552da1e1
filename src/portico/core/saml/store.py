"""What a SAML sign-in keeps between its steps, in the store (so that every process of an
installation agrees, and a restart forgets nothing):

* the AuthnRequests this service issued (``saml_requests``): a Response is accepted only
  in answer to one of them, once, before it expires;
* the ids of the assertions already used (``saml_assertions_used``), each kept until its
  NotOnOrAfter has passed, after which the assertion is refused for its age anyway;
* the one-time codes a sign-in hands to the browser (``saml_sign_in_codes``): the console
  (or an admin API client) exchanges one for its tokens, so that no token travels in a URL.

Codes are 256-bit random values stored as SHA-256; the assertion ids as SHA-256 of the
issuer and the id. Expired rows are deleted whenever a new request is issued.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import ForeignKey, String, delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Mapped, mapped_column

from portico.core.db.base import Base
from portico.core.db.types import UTCDateTime
from portico.core.tokens import hash_opaque_token, new_opaque_token, same_digest

#: how long a user may take at the identity provider before the request expires
REQUEST_TTL = timedelta(minutes=10)
#: how long the browser has to exchange the code it was given (a redirect and one call)
CODE_TTL = timedelta(seconds=60)
#: the clients a sign-in may be for: the console (management tokens) or the admin API
TARGETS = ("console", "admin-api")


class SamlRequest(Base):
    __tablename__ = "saml_requests"

    #: the AuthnRequest's ID (pysaml2's, ``id-`` and 17 random characters)
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    idp_id: Mapped[uuid.UUID] = mapped_column()
    target: Mapped[str] = mapped_column(String(16))
    #: SHA-256 (base64url) of the verifier the client keeps, when it gave a challenge
    challenge: Mapped[str | None] = mapped_column(String(64), default=None)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)


class SamlAssertionUse(Base):
    __tablename__ = "saml_assertions_used"

    #: SHA-256 of the issuer and the assertion's ID
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)


class SamlSignInCode(Base):
    __tablename__ = "saml_sign_in_codes"

    code_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    target: Mapped[str] = mapped_column(String(16))
    challenge: Mapped[str | None] = mapped_column(String(64), default=None)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)


@dataclass(frozen=True)
class PendingRequest:
    id: str
    target: str
    challenge: str | None


@dataclass(frozen=True)
class RedeemedCode:
    user_id: uuid.UUID
    target: str


def challenge_of(verifier: str) -> str:
    """PKCE's S256: base64url (no padding) of the verifier's SHA-256."""
    digest = hashlib.sha256(verifier.encode("ascii", "replace")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


async def purge_expired(session: AsyncSession, now: datetime) -> None:
    for model in (SamlRequest, SamlAssertionUse, SamlSignInCode):
        await session.execute(delete(model).where(model.expires_at <= now))


async def remember_request(
    session: AsyncSession,
    *,
    request_id: str,
    idp_id: uuid.UUID,
    target: str,
    challenge: str | None,
    now: datetime,
) -> None:
    await purge_expired(session, now)
    session.add(
        SamlRequest(
            id=request_id,
            idp_id=idp_id,
            target=target,
            challenge=challenge,
            expires_at=now + REQUEST_TTL,
        )
    )
    await session.flush()


async def claim_request(
    session: AsyncSession, *, request_id: str, idp_id: uuid.UUID, now: datetime
) -> PendingRequest | None:
    """The request, marked used, if this service issued it for this configuration, it has
    not expired and no Response answered it yet; None otherwise. One statement decides, so
    two Responses to one request cannot both claim it."""
    claimed = await session.execute(
        update(SamlRequest)
        .where(
            SamlRequest.id == request_id,
            SamlRequest.idp_id == idp_id,
            SamlRequest.used_at.is_(None),
            SamlRequest.expires_at > now,
        )
        .values(used_at=now)
    )
    if getattr(claimed, "rowcount", 0) != 1:
        return None
    row = await session.scalar(select(SamlRequest).where(SamlRequest.id == request_id))
    if row is None:  # pragma: no cover — claimed above in this transaction
        return None
    return PendingRequest(id=row.id, target=row.target, challenge=row.challenge)


def _assertion_key(issuer: str, assertion_id: str) -> str:
    return hashlib.sha256(f"{issuer}\0{assertion_id}".encode()).hexdigest()


async def use_assertion(
    session: AsyncSession, *, issuer: str, assertion_id: str, expires_at: datetime
) -> bool:
    """Record the assertion as used; False when it was used before (a replay)."""
    key = _assertion_key(issuer, assertion_id)
    try:
        async with session.begin_nested():
            session.add(SamlAssertionUse(key=key, expires_at=expires_at))
    except IntegrityError:
        return False
    return True


async def issue_code(
    session: AsyncSession,
    *,
    user_id: uuid.UUID,
    target: str,
    challenge: str | None,
    now: datetime,
) -> str:
    code = new_opaque_token()
    session.add(
        SamlSignInCode(
            code_hash=hash_opaque_token(code),
            user_id=user_id,
            target=target,
            challenge=challenge,
            expires_at=now + CODE_TTL,
        )
    )
    await session.flush()
    return code


async def redeem_code(
    session: AsyncSession, *, code: str, verifier: str | None, target: str, now: datetime
) -> RedeemedCode | None:
    """The sign-in a code stands for, once: the code is deleted whatever the outcome (a
    wrong verifier or target burns it too). None for an unknown, expired or used code, a
    code for another client, or a verifier that does not match the challenge given."""
    code_hash = hash_opaque_token(code)
    row = await session.scalar(select(SamlSignInCode).where(SamlSignInCode.code_hash == code_hash))
    if row is None:
        return None
    deleted = await session.execute(
        delete(SamlSignInCode).where(SamlSignInCode.code_hash == code_hash)
    )
    if getattr(deleted, "rowcount", 0) != 1 or row.expires_at <= now or row.target != target:
        return None
    if row.challenge is not None and (
        verifier is None or not same_digest(challenge_of(verifier), row.challenge)
    ):
        return None
    return RedeemedCode(user_id=row.user_id, target=row.target)


def new_relay_state() -> str:
    return secrets.token_urlsafe(16)
