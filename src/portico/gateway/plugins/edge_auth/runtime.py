"""edge-auth's work per request: the token endpoint (``mode: generate``) and the checks of
``mode: validate`` (a JWT it issued, or the app's client id as an API key).

Either way the caller becomes the consumer that holds the client id (an app's consumer, so
product-quota, the consumer's own plugins and analytics see the app). Client secrets are
stored as SHA-256 (they are generated with 256 random bits, or required to be 32 characters
long, like key-auth's keys): an unknown client id is compared against a dummy hash, so it
costs and answers what a wrong secret does (no enumeration).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import logging
import math
import secrets
from collections.abc import Callable
from hashlib import blake2b
from typing import Final
from urllib.parse import parse_qsl, unquote_plus

from portico.core.expiring_lru import ExpiringLru
from portico.gateway.context import Access, BasePluginRuntime, Reply, RequestContext
from portico.gateway.http.errors import ClientError
from portico.gateway.plugin_services import ConsumerIndex, RuntimeServices
from portico.gateway.plugins.base import SEALED_PREFIX, secret_reference
from portico.gateway.plugins.edge_auth.config import EdgeAuthConfig
from portico.gateway.plugins.edge_auth.tokens import Signer
from portico.gateway.snapshot import SnapshotConsumer

logger = logging.getLogger("portico.gateway.plugins.edge_auth")

PLUGIN_NAME: Final = "edge-auth"
#: a token request's form is a few hundred bytes; anything much larger is not one
MAX_FORM_BYTES: Final = 8192
#: tokens verified, remembered per runtime until they expire (entries are ~100 bytes)
CACHE_SIZE: Final = 4096
_sha256: Final = hashlib.sha256
_compare: Final = hmac.compare_digest
#: what an unknown client id's secret is compared with
_DUMMY_HASH: Final = hashlib.sha256(secrets.token_bytes(32)).hexdigest()
_JSON: Final = ("content-type", "application/json")
#: RFC 6749 §5.1: token answers are never cached
_NO_STORE: Final = [_JSON, ("cache-control", "no-store"), ("pragma", "no-cache")]
_BASIC_CHALLENGE: Final = ("www-authenticate", 'Basic realm="token"')
_BEARER_CHALLENGE: Final = ("www-authenticate", 'Bearer error="invalid_token"')


def _oauth_error(status: int, error: str, description: str, challenge: bool = False) -> Reply:
    """RFC 6749 §5.2's error answer."""
    body = json.dumps({"error": error, "error_description": description}).encode()
    headers = list(_NO_STORE)
    if challenge:
        headers.append(_BASIC_CHALLENGE)
    return Reply(status, body, headers)


#: the one answer to a wrong client id or secret, whichever it was
_INVALID_CLIENT: Final = _oauth_error(401, "invalid_client", "client authentication failed", True)


def _invalid_client() -> Reply:
    reply = _INVALID_CLIENT
    return Reply(reply.status, reply.body, list(reply.headers))


def _unauthorized(message: str) -> Reply:
    return Reply.error(401, message, [_BEARER_CHALLENGE])


def signing_key(value: str | None, services: RuntimeServices) -> bytes | None:
    """The HMAC key of a configuration's ``signing_secret``: the literal, or the sealed form
    deploy wrote opened with the node's server secret; None (logged) when this node cannot
    have it (an unresolved reference, no server secret, another server's)."""
    if value is None:
        return None
    if value.startswith(SEALED_PREFIX):
        box = services.secrets
        if box is None:
            logger.warning(
                "edge-auth: the signing secret is sealed and this node was given no server "
                "secret (PORTICO_SECRET_KEY); its routes answer 503"
            )
            return None
        try:
            return box.decrypt(value[len(SEALED_PREFIX) :]).encode()
        except ValueError:
            logger.warning(
                "edge-auth: the signing secret cannot be opened with this node's server "
                "secrets; its routes answer 503"
            )
            return None
    if secret_reference(value) is not None:
        logger.warning(
            "edge-auth: the signing secret %s was not resolved by a deploy; its routes answer 503",
            value.split("://")[0] + "://…",
        )
        return None
    return value.encode()


class EdgeAuthRuntime(BasePluginRuntime):
    def __init__(self, config: EdgeAuthConfig, services: RuntimeServices) -> None:
        self.generate = config.mode == "generate"
        self.by_token = config.validate_auth_type == "jwt-auth"
        self.ttl = config.token_ttl
        self.key_header = config.apikey.source == "header"
        self.key_name = config.apikey.key
        self.hidden = config.apikey.key.lower()
        self.hide = config.hide_credentials
        self.consumers: ConsumerIndex = services.consumers
        self.now: Callable[[], float] = services.now
        key = signing_key(config.signing_secret, services)
        self.signer = Signer(key, config.algorithm) if key is not None else None
        self.needs_key = self.generate or self.by_token
        self.unavailable = Reply.error(503, "edge-auth: the signing secret is unavailable")
        #: Authorization headers whose token verified: a keyed BLAKE2b of the header (so no
        #: token is kept) → the consumer, until the token expires (or the credential it was
        #: issued to stops working); a client presenting its token again costs a lookup
        self._cache_key = secrets.token_bytes(32)
        self._verified: ExpiringLru[bytes, SnapshotConsumer] = ExpiringLru(CACHE_SIZE)

    # ------------------------------------------------------------------ the checks

    def access(self, ctx: RequestContext) -> Access:
        if self.needs_key and self.signer is None:  # fail closed
            return Reply(self.unavailable.status, self.unavailable.body, [_JSON])
        if self.generate:
            return self.token_endpoint(ctx)
        if self.by_token:
            return self.bearer(ctx)
        return self.api_key(ctx)

    def bearer(self, ctx: RequestContext) -> Reply | None:
        header = ctx.header("authorization")
        if not header:
            return _unauthorized("Missing authorization in request")
        fingerprint = blake2b(
            header.encode("utf-8", "surrogatepass"), key=self._cache_key, digest_size=16
        ).digest()
        now = self.now()
        consumer = self._verified.get(fingerprint, now)
        if consumer is None:
            consumer = self._verify(header, fingerprint, now)
            if consumer is None:
                return _unauthorized("invalid or expired token")
        ctx.consumer = consumer
        if self.hide:
            ctx.remove_upstream_headers.add("authorization")
        return None

    def _verify(self, header: str, fingerprint: bytes, now: float) -> SnapshotConsumer | None:
        """The consumer a ``Bearer`` header's token was issued to, remembered until it expires
        (None: no ``Bearer `` prefix, a token that does not verify, an unknown client)."""
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        signer = self.signer
        assert signer is not None
        claims = signer.verify(token.strip(), now)
        subject = claims.get("sub") if claims is not None else None
        if claims is None or not isinstance(subject, str):
            return None
        consumer = self.consumers.find(PLUGIN_NAME, subject)
        until = float(claims["exp"])
        if consumer is None:  # a client id replaced by a rotation: until its grace ends
            retired = self.consumers.find_retiring(PLUGIN_NAME, subject, now)
            if retired is None:
                return None
            consumer, until = retired.consumer, min(until, retired.expires_at)
        if math.isfinite(until):
            self._verified.put(fingerprint, consumer, until)
        return consumer

    def api_key(self, ctx: RequestContext) -> Reply | None:
        key = ctx.header(self.key_name) if self.key_header else ctx.arg(self.key_name)
        if not key:
            return Reply.error(401, "Missing API key in request")
        consumer = self._holder(key)
        if consumer is None:
            return Reply.error(401, "Invalid API key in request")
        ctx.consumer = consumer
        if self.hide:
            if self.key_header:
                ctx.remove_upstream_headers.add(self.hidden)
            else:
                ctx.drop_argument(self.key_name)
        return None

    def _holder(self, client_id: str) -> SnapshotConsumer | None:
        """The consumer whose edge-auth client id this is, or was until a rotation whose grace
        period still lasts."""
        consumer = self.consumers.find(PLUGIN_NAME, client_id)
        if consumer is not None:
            return consumer
        retired = self.consumers.find_retiring(PLUGIN_NAME, client_id, self.now())
        return retired.consumer if retired is not None else None

    # ------------------------------------------------------------------ the token endpoint

    def token_endpoint(self, ctx: RequestContext) -> Access:
        request = ctx.request
        if request.method != "POST":
            reply = _oauth_error(405, "invalid_request", "the token endpoint accepts POST only")
            reply.headers.append(("allow", "POST"))
            return reply
        declared = request.header("content-length")
        if declared is not None and declared.isdigit() and int(declared) > MAX_FORM_BYTES:
            return _oauth_error(413, "invalid_request", "the token request is too large")
        raw = request.body.peek_complete()
        if raw is None:
            return self._token_later(ctx)
        return self._token(ctx, raw)

    async def _token_later(self, ctx: RequestContext) -> Reply | None:
        body = ctx.request.body
        parts: list[bytes] = []
        size = 0
        try:
            async for chunk in body:
                size += len(chunk)
                if size > MAX_FORM_BYTES:
                    return _oauth_error(413, "invalid_request", "the token request is too large")
                parts.append(chunk)
        except ClientError as error:
            return Reply.error(error.status, str(error) or "cannot read the request body")
        return self._token(ctx, b"".join(parts))

    def _token(self, ctx: RequestContext, raw: bytes) -> Reply:
        if len(raw) > MAX_FORM_BYTES:
            return _oauth_error(413, "invalid_request", "the token request is too large")
        form: dict[str, str] = {}
        if raw.strip():
            kind = (ctx.header("content-type") or "").split(";")[0].strip().lower()
            if kind != "application/x-www-form-urlencoded":
                return _oauth_error(
                    400,
                    "invalid_request",
                    "send the token request as application/x-www-form-urlencoded",
                )
            try:
                pairs = parse_qsl(raw.decode("utf-8"), keep_blank_values=True, strict_parsing=True)
            except (UnicodeDecodeError, ValueError):
                return _oauth_error(400, "invalid_request", "the form cannot be read")
            for name, value in pairs:
                if name in form:  # RFC 6749 §3.2: parameters MUST NOT be repeated
                    return _oauth_error(400, "invalid_request", f"{name} is given twice")
                form[name] = value
        grant = form.get("grant_type")
        if grant is not None and grant != "client_credentials":
            return _oauth_error(
                400, "unsupported_grant_type", "only grant_type=client_credentials is supported"
            )
        header = ctx.header("authorization")
        if header:
            credentials = _basic(header)
            if credentials is None:
                return _invalid_client()
            client_id, client_secret = credentials
        else:
            if grant is None and form:
                return _oauth_error(400, "invalid_request", "grant_type is required")
            client_id = form.get("client_id", "")
            client_secret = form.get("client_secret", "")
            if not client_id or not client_secret:
                return _invalid_client()
        consumer = self._authenticated(client_id, client_secret)
        if consumer is None:
            return _invalid_client()
        ctx.consumer = consumer  # (the token request is the app's traffic too)
        return self._issued(client_id)

    def _authenticated(self, client_id: str, client_secret: str) -> SnapshotConsumer | None:
        """The consumer holding this client id and secret (or held them until a rotation
        whose grace period lasts). The same work whether the id is known or not."""
        presented = _sha256(client_secret.encode()).hexdigest()
        consumer = self.consumers.find(PLUGIN_NAME, client_id)
        stored = consumer.credentials[PLUGIN_NAME].get("client_secret_hash") if consumer else None
        matches = _compare(presented, stored if isinstance(stored, str) else _DUMMY_HASH)
        if consumer is not None and matches:
            return consumer
        retired = self.consumers.find_retiring(PLUGIN_NAME, client_id, self.now())
        if retired is None:
            return None
        old = retired.credential.get("client_secret_hash")
        if isinstance(old, str) and _compare(presented, old):
            return retired.consumer
        return None

    def _issued(self, client_id: str) -> Reply:
        signer = self.signer
        assert signer is not None
        issued_at = int(self.now())
        token = signer.issue(
            {
                "iat": issued_at,
                "exp": issued_at + self.ttl,
                "sub": client_id,
                "jti": secrets.token_hex(16),
            }
        )
        body = json.dumps(
            {"access_token": token, "token_type": "Bearer", "expires_in": self.ttl}
        ).encode()
        return Reply(200, body, list(_NO_STORE))


def _basic(header: str) -> tuple[str, str] | None:
    """``(client_id, client_secret)`` of ``Basic base64(id:secret)``; RFC 6749 §2.3.1: each
    form-urlencoded before it was joined. None when malformed."""
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(token.strip(), validate=True).decode("utf-8")
    except (ValueError, binascii.Error):
        return None
    client_id, colon, client_secret = decoded.partition(":")
    if not colon or not client_id:
        return None
    return unquote_plus(client_id), unquote_plus(client_secret)
