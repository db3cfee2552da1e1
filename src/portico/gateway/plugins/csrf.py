"""csrf: double-submit token signed with ``key``; unsafe methods without a valid one → 401.

At run time, as APISIX does: every response gets a fresh token cookie
(``Set-Cookie: <name>=<token>; path=/; SameSite=Lax; Expires=...``, readable by the page's
scripts, which is the point of a double-submit cookie); GET, HEAD and OPTIONS pass; any other
method must send the token in the ``<name>`` header, equal to the cookie, signed with ``key``
and not older than ``expires`` seconds, else 401 ``{"error_msg": ...}`` with APISIX's messages.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
import hmac
import json
import re
import secrets
from email.utils import formatdate

from pydantic import Field

from portico.gateway.context import BasePluginRuntime, Reply, RequestContext, ResponseHeaders
from portico.gateway.plugin_services import RuntimeServices
from portico.gateway.plugins.base import HEADER_NAME, Category, PluginConfig, PluginSpec


class CsrfConfig(PluginConfig):
    key: str = Field(
        # 16 characters at least: the token's signature is only as strong as this secret
        min_length=16,
        max_length=4096,
        description="Secret the tokens are signed with (at least 16 characters).",
    )
    expires: int = Field(
        7200, ge=1, le=2_592_000, description="Seconds a token stays valid after it is issued."
    )
    name: str = Field(
        "apisix-csrf-token",
        pattern=HEADER_NAME,
        description="Name of the cookie holding the token and of the header echoing it.",
    )

    secret_fields = frozenset({"key"})


PLUGIN = PluginSpec(
    name="csrf",
    category=Category.SECURITY,
    order=40,
    reorderable=False,
    config=CsrfConfig,
    description="Double-submit CSRF protection: safe methods get a signed token cookie; "
    "unsafe methods without a matching, valid token header → 401.",
)

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

# The token is base64url (no padding) of 16 random bytes, the issue time (8 bytes, big-endian
# Unix seconds) and HMAC-SHA256(key, random + issued) — 56 bytes, 75 characters, safe in a
# cookie and a header as is. The issue time (not an expiry) is signed so that shortening
# ``expires`` in the config also shortens the life of tokens already given out.
_RANDOM, _ISSUED, _MAC = 16, 8, 32
_TOKEN = re.compile(r"[A-Za-z0-9_-]{75}")


def _refusal(message: str) -> bytes:
    return json.dumps({"error_msg": message}).encode()


_NO_HEADER = _refusal("no csrf token in headers")
_NO_COOKIE = _refusal("no csrf cookie")
_MISMATCH = _refusal("csrf token mismatch")
_BAD_SIGNATURE = _refusal("Failed to verify the csrf token signature")


def cookie_value(ctx: RequestContext, name: str) -> str | None:
    """The first cookie ``name`` in the request's Cookie header(s). Parsed leniently: one
    malformed cookie of another application must not hide ours (``SimpleCookie`` gives up
    on the whole header)."""
    for header, value in ctx.request.headers:
        if header != "cookie":
            continue
        for pair in value.split(";"):
            key, sep, found = pair.partition("=")
            if sep and key.strip() == name:
                found = found.strip()
                if len(found) >= 2 and found[0] == found[-1] == '"':
                    found = found[1:-1]
                return found
    return None


class CsrfRuntime(BasePluginRuntime):
    def __init__(self, config: CsrfConfig, services: RuntimeServices) -> None:
        self.name = config.name
        self.expires = config.expires
        self.now = services.now
        self.mac = hmac.new(config.key.encode(), digestmod=hashlib.sha256)  # copied per use

    def _sign(self, payload: bytes) -> bytes:
        mac = self.mac.copy()
        mac.update(payload)
        return mac.digest()

    def issue(self, now: float) -> str:
        payload = secrets.token_bytes(_RANDOM) + int(now).to_bytes(_ISSUED, "big")
        raw = payload + self._sign(payload)
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")

    def valid(self, token: str, now: float) -> bool:
        """Signed with our key and not expired (a token from the future — another node's
        clock — is accepted: only we can have signed it)."""
        if not _TOKEN.fullmatch(token):
            return False
        try:
            raw = base64.urlsafe_b64decode(token + "=")
        except (binascii.Error, ValueError):
            return False
        payload, mac = raw[: _RANDOM + _ISSUED], raw[_RANDOM + _ISSUED :]
        if not hmac.compare_digest(mac, self._sign(payload)):
            return False
        issued = int.from_bytes(payload[_RANDOM:], "big")
        return now - issued <= self.expires

    def access(self, ctx: RequestContext) -> Reply | None:
        if ctx.request.method in SAFE_METHODS:
            return None
        header = ctx.header(self.name)
        if not header:
            return _reply(_NO_HEADER)
        cookie = cookie_value(ctx, self.name)
        if cookie is None:
            return _reply(_NO_COOKIE)
        if not hmac.compare_digest(header.encode(), cookie.encode()):
            return _reply(_MISMATCH)
        if not self.valid(cookie, self.now()):
            return _reply(_BAD_SIGNATURE)
        return None

    def header_filter(self, ctx: RequestContext, status: int, headers: ResponseHeaders) -> None:
        now = self.now()
        expiry = formatdate(int(now) + self.expires, usegmt=True)
        cookie = f"{self.name}={self.issue(now)}; path=/; SameSite=Lax; Expires={expiry}"
        headers.add("set-cookie", cookie)


def _reply(body: bytes) -> Reply:
    return Reply(401, body, [("content-type", "application/json")])


PLUGIN = dataclasses.replace(PLUGIN, runtime=CsrfRuntime)
