"""ldap-auth's per-request work: HTTP Basic credentials checked by a bind, successes
remembered briefly."""

from __future__ import annotations

import asyncio
import logging
import secrets
from hashlib import blake2b
from typing import Protocol

from portico.core.expiring_lru import ExpiringLru
from portico.gateway.context import Access, BasePluginRuntime, Reply, RequestContext
from portico.gateway.egress import EgressRefused
from portico.gateway.plugin_services import ConsumerIndex, RuntimeServices
from portico.gateway.plugins.basic_auth import parse_basic
from portico.gateway.plugins.ldap_auth.directory import (
    Directory,
    DirectoryUnavailable,
    Endpoint,
    canonical_dn,
    user_dn,
)
from portico.gateway.snapshot import SnapshotConsumer

logger = logging.getLogger("portico.gateway.plugins.ldap_auth")

#: RFC 7235 §3.1: a 401 carries the challenge, so clients know which scheme to answer with
_CHALLENGE = [("www-authenticate", 'Basic realm="ldap"')]
#: how long a successful bind is trusted without asking the directory again: a password
#: changed or an account disabled in the directory works here this much longer at most
CACHE_SECONDS = 60.0
#: successful binds remembered per route attachment (entries are ~100 bytes)
CACHE_SIZE = 1024
#: binds in flight at once per attachment: a flood of wrong passwords queues here instead of
#: taking every worker thread of the process and every connection slot of the directory
MAX_BINDS = 8


class LdapAuthSettings(Protocol):
    """What the runtime reads of ``config.LdapAuthConfig``."""

    @property
    def ldap_uri(self) -> str: ...

    @property
    def base_dn(self) -> str: ...

    @property
    def uid(self) -> str: ...

    @property
    def use_tls(self) -> bool: ...

    @property
    def tls_verify(self) -> bool: ...


def consumers_by_dn(consumers: ConsumerIndex) -> dict[str, SnapshotConsumer]:
    """The consumers holding an ldap-auth credential, by the canonical form of its DN."""
    found: dict[str, SnapshotConsumer] = {}
    for consumer in consumers.by_name.values():
        credential = consumer.credentials.get("ldap-auth")
        dn = credential.get("user_dn") if credential else None
        if isinstance(dn, str):
            found[canonical_dn(dn)] = consumer
    return found


class LdapAuthRuntime(BasePluginRuntime):
    """Binds as ``<uid>=<user>,<base_dn>`` with the Basic password, in a worker thread (ldap3
    is blocking), through the SSRF guard; the consumer is the one whose ldap-auth credential
    holds that DN. Successes are remembered for ``CACHE_SECONDS`` in a small LRU keyed by a
    MAC of the presented Authorization header under a per-runtime random key (no clear
    password kept), so a busy client pays the bind once a minute. A directory that cannot answer
    gives 503, never 500 and never a 401 that would send clients to re-prompt their users."""

    def __init__(self, config: LdapAuthSettings, services: RuntimeServices) -> None:
        self.directory = Directory(Endpoint.of(config.ldap_uri, config.use_tls, config.tls_verify))
        self.uid = config.uid
        self.base_dn = config.base_dn
        self.egress = services.egress
        self.now = services.now
        self.by_dn = consumers_by_dn(services.consumers)
        self._cache_key = secrets.token_bytes(32)
        #: fingerprint → consumer, until the epoch second the success stops being trusted
        self._bound: ExpiringLru[bytes, SnapshotConsumer] = ExpiringLru(CACHE_SIZE)
        self._binds = asyncio.Semaphore(MAX_BINDS)

    def access(self, ctx: RequestContext) -> Access:
        """Decides at once (no coroutine) when the credentials are wrong in form or were
        bound recently; only a bind waits, in :meth:`_authenticate`."""
        header = ctx.header("authorization")
        if not header:
            return Reply.error(401, "Missing authorization in request", _CHALLENGE)
        # looked up before parsing: only a header that parsed and bound is ever remembered
        fingerprint = self._fingerprint(header)
        known = self._bound.get(fingerprint, self.now())
        if known is not None:
            ctx.consumer = known
            return None
        parsed = parse_basic(header)
        if parsed is None:
            return Reply.error(401, "Invalid authorization in request", _CHALLENGE)
        username, password, _ = parsed
        if not password:
            # an empty password is an unauthenticated bind, which succeeds for any DN
            # (RFC 4513 §5.1.2): never sent
            return Reply.error(401, "Invalid user authorization", _CHALLENGE)
        return self._authenticate(ctx, fingerprint, username, password)

    def _fingerprint(self, header: str) -> bytes:
        """The cache key of an Authorization header: keyed BLAKE2b (a MAC by design, and
        about a third of ``hmac.digest``'s cost) of the exact header, so the cache holds
        no password and a header counts as bound only as it was sent when it bound."""
        data = header.encode("utf-8", "surrogatepass")
        return blake2b(data, key=self._cache_key, digest_size=32).digest()

    async def _authenticate(
        self, ctx: RequestContext, fingerprint: bytes, username: str, password: str
    ) -> Reply | None:
        dn = user_dn(self.uid, username, self.base_dn)
        try:
            bound = await self._bind(dn, password)
        except DirectoryUnavailable as error:
            logger.warning("ldap-auth: %s:%s: %s", *self._where(), error)
            return Reply.error(503, "LDAP server unavailable")
        consumer = self.by_dn.get(canonical_dn(dn)) if bound else None
        if consumer is None:
            self._bound.discard(fingerprint)
            return Reply.error(401, "Invalid user authorization", _CHALLENGE)
        self._bound.put(fingerprint, consumer, self.now() + CACHE_SECONDS)
        ctx.consumer = consumer
        return None

    async def _bind(self, dn: str, password: str) -> bool:
        endpoint = self.directory.endpoint
        try:
            address = await self.egress.resolve(endpoint.hostname, endpoint.port)
        except EgressRefused as error:
            raise DirectoryUnavailable(f"refused by the egress guard: {error}") from None
        async with self._binds:
            return await asyncio.to_thread(self.directory.bind, address, dn, password)

    def _where(self) -> tuple[str, int]:
        return self.directory.endpoint.hostname, self.directory.endpoint.port
