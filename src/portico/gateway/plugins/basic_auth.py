"""basic-auth: the consumer is the holder of a username and password (HTTP Basic)."""

from __future__ import annotations

import asyncio
import base64
import binascii
import dataclasses
import functools
import hmac
import math
import re
import secrets

from pydantic import Field, field_validator

from portico.core.expiring_lru import ExpiringLru
from portico.gateway.context import Access, BasePluginRuntime, Reply, RequestContext
from portico.gateway.plugin_services import RuntimeServices
from portico.gateway.plugins.base import Category, ConsumerCredential, PluginConfig, PluginSpec
from portico.gateway.sealing import hash_password, verify_password_hash
from portico.gateway.snapshot import SnapshotConsumer

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class BasicAuthConfig(PluginConfig):
    hide_credentials: bool = Field(
        False, description="Remove the Authorization header before the request is proxied."
    )


class BasicAuthCredential(ConsumerCredential):
    username: str = Field(
        min_length=1, max_length=256, description="The consumer's username (unique)."
    )
    password: str = Field(
        min_length=1, max_length=1024, description="The consumer's password (stored hashed)."
    )

    secret_fields = frozenset({"password"})

    @field_validator("username")
    @classmethod
    def _sendable(cls, username: str) -> str:
        # RFC 7617: the user-id ends at the first colon, so a colon could never match
        if ":" in username or _CONTROL.search(username):
            raise ValueError("username must not contain a colon or control characters")
        return username


PLUGIN = PluginSpec(
    name="basic-auth",
    category=Category.AUTHENTICATION,
    order=101,
    reorderable=True,
    config=BasicAuthConfig,
    consumer=BasicAuthCredential,
    description="Authenticates consumers by HTTP Basic username and password (stored hashed); "
    "missing or wrong → 401.",
)


#: RFC 7235 §3.1: a 401 carries the challenge, so clients know which scheme to answer with
_CHALLENGE = [("www-authenticate", 'Basic realm="basic"')]
#: successful verifications remembered per runtime (entries are ~100 bytes)
CACHE_SIZE = 1024


@functools.cache
def _decoy_hash() -> str:
    """A hash of a random password, verified for unknown users so that they cost what a wrong
    password costs (no user enumeration by timing)."""
    return hash_password(secrets.token_urlsafe(16))


def parse_basic(header: str) -> tuple[str, str, bytes] | None:
    """``(username, password, decoded user-pass)`` of ``Basic <base64(user:pass)>``, or None
    when malformed. The scheme is case-insensitive; the user-id ends at the first colon and
    the password may hold colons (RFC 7617 §2)."""
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(token.strip(), validate=True)
        username, colon, password = decoded.decode().partition(":")
    except (ValueError, binascii.Error):  # UnicodeDecodeError is a ValueError
        return None
    if not colon or not username:
        return None
    return username, password, decoded


class BasicAuthRuntime(BasePluginRuntime):
    """Verifies the PBKDF2 hash of the consumer's password (off the event loop: ~2 ms of CPU
    each), remembering successes in a small LRU keyed by an HMAC of the presented credentials
    under a per-runtime random key, so a busy client pays the hash once and no clear password
    is kept."""

    def __init__(self, config: BasicAuthConfig, services: RuntimeServices) -> None:
        self.hide = config.hide_credentials
        self.consumers = services.consumers
        self.now = services.now
        self._cache_key = secrets.token_bytes(32)
        #: fingerprint → consumer, until the epoch second the credential stops working (a
        #: password replaced by a rotation works until its grace period ends)
        self._verified: ExpiringLru[bytes, SnapshotConsumer] = ExpiringLru(CACHE_SIZE)
        _decoy_hash()  # made now (once per process), so the first unknown user costs no more

    def access(self, ctx: RequestContext) -> Access:
        """Decides at once (no coroutine) when the credentials are wrong in form or were
        verified recently; only a password hash check waits, in :meth:`_authenticate`."""
        header = ctx.header("authorization")
        if not header:
            return Reply.error(401, "Missing authorization in request", _CHALLENGE)
        parsed = parse_basic(header)
        if parsed is None:
            return Reply.error(401, "Invalid authorization in request", _CHALLENGE)
        username, password, decoded = parsed
        fingerprint = hmac.digest(self._cache_key, decoded, "sha256")
        known = self._verified.get(fingerprint, self.now())
        if known is not None:
            self._admit(ctx, known)
            return None
        return self._authenticate(ctx, fingerprint, username, password)

    async def _authenticate(
        self, ctx: RequestContext, fingerprint: bytes, username: str, password: str
    ) -> Reply | None:
        known = await self._verify(username, password)
        if known is None:
            self._verified.discard(fingerprint)
            return Reply.error(401, "Invalid user authorization", _CHALLENGE)
        consumer, expires_at = known
        self._verified.put(fingerprint, consumer, expires_at)
        self._admit(ctx, consumer)
        return None

    def _admit(self, ctx: RequestContext, consumer: SnapshotConsumer) -> None:
        ctx.consumer = consumer
        if self.hide:
            ctx.remove_upstream_headers.add("authorization")

    async def _verify(self, username: str, password: str) -> tuple[SnapshotConsumer, float] | None:
        """The consumer and until when the password works (current: forever)."""
        consumer = self.consumers.find("basic-auth", username)
        stored = consumer.credentials["basic-auth"].get("password_hash") if consumer else None
        if not isinstance(stored, str):
            # same work as a wrong password, then refuse whatever the outcome
            await asyncio.to_thread(verify_password_hash, _decoy_hash(), password)
            return None
        # the hash releases the GIL: other requests are served meanwhile
        if await asyncio.to_thread(verify_password_hash, stored, password):
            assert consumer is not None
            return consumer, math.inf
        retired = self.consumers.find_retiring("basic-auth", username, self.now())
        old = retired.credential.get("password_hash") if retired is not None else None
        if not isinstance(old, str) or retired is None:
            return None
        if await asyncio.to_thread(verify_password_hash, old, password):
            return retired.consumer, retired.expires_at
        return None


PLUGIN = dataclasses.replace(PLUGIN, runtime=BasicAuthRuntime)
