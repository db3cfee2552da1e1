"""openid-connect's per-request work.

Bearer tokens (always with ``bearer_only``; otherwise when the request brings one, as APISIX
does): verified against the provider's cached keys without waiting (``tokens``); the provider
is awaited only when nothing is cached yet or when the token names a ``kid`` the cache lacks
(one rate-limited refetch, ``provider``).

Browsers (``bearer_only: false``): the authorization-code flow with PKCE (RFC 7636, S256). A
request without a session is redirected to the provider with a fresh ``state``, ``nonce`` and
code challenge, kept meanwhile in a sealed login-state cookie; the callback (``redirect_uri``)
checks the state, exchanges the code with the verifier and the client secret, verifies the ID
token and its nonce, sets the sealed session cookie and sends the browser back where it was
going. A session whose access token expired is refreshed with its refresh token, or logged in
again.

What the upstream gets: X-Access-Token and X-Userinfo (base64 of the claims' JSON) as
APISIX's plugin sends them, always overwriting what the client sent under those names; never
the plugin's own cookies.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from portico.gateway.context import Access, BasePluginRuntime, Reply, RequestContext
from portico.gateway.plugin_services import RuntimeServices
from portico.gateway.plugins.jwt_auth import without_cookie
from portico.gateway.plugins.openid_connect.config import OpenidConnectConfig
from portico.gateway.plugins.openid_connect.provider import (
    KeySet,
    Metadata,
    ProviderUnavailable,
    provider_factory,
)
from portico.gateway.plugins.openid_connect.session import (
    CookieBox,
    cookie_header,
    pkce_challenge,
    random_token,
)
from portico.gateway.plugins.openid_connect.token_cache import TokenCache, Verified
from portico.gateway.plugins.openid_connect.tokens import (
    Expectations,
    TokenRejected,
    UnknownKey,
    header_of,
    key_for,
    verify,
)

logger = logging.getLogger("portico.gateway.plugins.openid_connect")

#: seconds a browser has to come back from the provider
LOGIN_LIFETIME = 600
#: seconds a browser session lasts at most (refreshes included)
SESSION_LIFETIME = 86_400
#: when the provider's token answer has no ``expires_in``
DEFAULT_ACCESS_LIFETIME = 300
#: the callback path when ``redirect_uri`` is unset (APISIX's)
DEFAULT_CALLBACK_SUFFIX = "/.apisix/redirect"


class OpenidConnectRuntime(BasePluginRuntime):
    def __init__(self, config: OpenidConnectConfig, services: RuntimeServices) -> None:
        self.config = config
        self.now = services.now
        identity = f"{config.discovery}\x00{config.timeout}\x00{config.ssl_verify}"
        self.provider = services.shared(
            "openid-connect",
            hashlib.sha256(identity.encode()).hexdigest(),
            provider_factory(
                config.discovery,
                client=services.http(),
                guard=services.egress,
                timeout=float(config.timeout),
                now=services.now,
                ssl_verify=config.ssl_verify,
            ),
        )
        self.algorithms = frozenset(config.token_signing_alg_values_expected)
        self.audience = config.audience or config.client_id
        self.realm = f'Bearer realm="{config.realm}"'
        self._expectations: dict[tuple[str, str], Expectations] = {}
        #: the bearer path's last metadata and its expectations (the same until a refetch)
        self._bearer_expect: tuple[Metadata | None, Expectations | None] = (None, None)
        self.set_access_token = config.set_access_token_header
        self.set_userinfo = config.set_userinfo_header
        self.tokens = TokenCache()
        suffix = hashlib.sha256(f"{config.discovery}\x00{config.client_id}".encode()).hexdigest()
        self.session_cookie = "portico_oidc_" + suffix[:12]
        self.state_cookie = "portico_oidc_login_" + suffix[:12]
        secret = config.session_secret or config.client_secret
        self.box = CookieBox(secret, config.client_id) if secret else None
        self.callback_path = urlsplit(config.redirect_uri).path if config.redirect_uri else None

    # --- the request --------------------------------------------------------------------

    def access(self, ctx: RequestContext) -> Access:
        authorization = ctx.header("authorization")
        token = _bearer(authorization)
        if token is not None:
            return self._bearer(ctx, token)
        if self.config.bearer_only or self.box is None:
            return Reply.error(
                401, "Missing bearer token in request", [("www-authenticate", self.realm)]
            )
        return self._browser(ctx, self.box)

    def _bearer(self, ctx: RequestContext, token: str) -> Access:
        """Verified at once against the cached keys (or found verified already); the
        provider is awaited only when nothing is cached or the token's ``kid`` is unknown."""
        cached = self.provider.cached()
        if cached is None:
            return self._bearer_waiting(ctx, token)
        metadata, keys = cached
        seen, expect = self._bearer_expect
        if metadata is not seen or expect is None:
            expect = self._expect(metadata, self.audience)
            self._bearer_expect = (metadata, expect)
        now = self.now()
        verified = self.tokens.get(token, expect, keys.generation, now)
        if verified is None:
            try:
                header = header_of(token)
                claims = verify(token, header, key_for(header, keys, expect), expect, now)
            except UnknownKey:
                return self._bearer_waiting(ctx, token)
            except TokenRejected as rejected:
                return self._invalid(str(rejected))
            verified = Verified(claims, expect, keys.generation)
            self.tokens.put(token, verified)
        self._pass(ctx, token, verified.userinfo)
        return None

    async def _bearer_waiting(self, ctx: RequestContext, token: str) -> Reply | None:
        try:
            claims = await self._verified(token, self.audience)
        except TokenRejected as rejected:
            return self._invalid(str(rejected))
        except ProviderUnavailable as error:
            return self._unavailable(error)
        self._pass(ctx, token, _userinfo(claims))
        return None

    async def _verified(self, token: str, audience: str) -> dict[str, Any]:
        """The claims of a token, waiting for the provider's keys if needed (one refetch for
        an unknown ``kid``, as the rate limit allows)."""
        metadata, keys = await self.provider.load()
        expect = self._expect(metadata, audience)
        header = header_of(token)
        try:
            key = key_for(header, keys, expect)
        except UnknownKey as unknown:
            refetched: KeySet | None = await self.provider.refetch_for(unknown.kid)
            if refetched is None:
                raise
            key = key_for(header, refetched, expect)
        return verify(token, header, key, expect, self.now())

    def _expect(self, metadata: Metadata, audience: str) -> Expectations:
        found = self._expectations.get((metadata.issuer, audience))
        if found is None:
            found = Expectations(metadata.issuer, audience, self.algorithms)
            self._expectations[(metadata.issuer, audience)] = found
        return found

    def _pass(self, ctx: RequestContext, access_token: str, userinfo: str) -> None:
        """``userinfo``: X-Userinfo's value (base64 of the claims' JSON)."""
        headers = ctx.upstream_headers
        if self.set_access_token:
            headers["x-access-token"] = access_token
        else:
            ctx.remove_upstream_headers.add("x-access-token")
        if self.set_userinfo:
            headers["x-userinfo"] = userinfo
        else:
            ctx.remove_upstream_headers.add("x-userinfo")

    def _invalid(self, description: str) -> Reply:
        challenge = f'{self.realm}, error="invalid_token", error_description="{description}"'
        return Reply.error(401, description, [("www-authenticate", challenge)])

    def _unavailable(self, error: ProviderUnavailable) -> Reply:
        logger.warning("openid-connect: provider %s unavailable: %s", self.config.discovery, error)
        return Reply.error(503, "OpenID provider unavailable")

    # --- browsers -----------------------------------------------------------------------

    async def _browser(self, ctx: RequestContext, box: CookieBox) -> Reply | None:
        path = ctx.path
        now = self.now()
        if path == self.config.logout_path:
            return self._logout()
        if self._is_callback(path):
            return await self._callback(ctx, box, now)
        session = box.open(self.session_cookie, ctx.var("cookie_" + self.session_cookie), now)
        if session is not None:
            if now < float(session.get("access_expires", 0)):
                self._pass_session(ctx, session)
                return None
            if isinstance(session.get("refresh_token"), str):
                return await self._refresh(ctx, box, session, now)
        return await self._login(ctx, box, now)

    def _is_callback(self, path: str) -> bool:
        if self.callback_path is not None:
            return path == self.callback_path
        return path.endswith(DEFAULT_CALLBACK_SUFFIX)

    def _redirect_uri(self, ctx: RequestContext) -> str:
        if self.config.redirect_uri:
            return self.config.redirect_uri
        host = ctx.header("host") or ctx.host
        return f"{ctx.request.scheme}://{host}{ctx.path.rstrip('/')}{DEFAULT_CALLBACK_SUFFIX}"

    async def _login(self, ctx: RequestContext, box: CookieBox, now: float) -> Reply:
        try:
            metadata, _ = await self.provider.load()
        except ProviderUnavailable as error:
            return self._unavailable(error)
        endpoint = metadata.authorization_endpoint
        if endpoint is None or metadata.token_endpoint is None:
            return self._unavailable(ProviderUnavailable("no authorization or token endpoint"))
        state, nonce, verifier = random_token(), random_token(), random_token()
        redirect_uri = self._redirect_uri(ctx)
        query = ctx.request.query
        original = ctx.request.path + ("?" + query if query else "")
        login = {
            "state": state,
            "nonce": nonce,
            "verifier": verifier,
            "redirect_uri": redirect_uri,
            "original": original,
            "expires": now + LOGIN_LIFETIME,
        }
        arguments = urlencode(
            {
                "response_type": "code",
                "client_id": self.config.client_id,
                "redirect_uri": redirect_uri,
                "scope": self.config.scope,
                "state": state,
                "nonce": nonce,
                "code_challenge": pkce_challenge(verifier),
                "code_challenge_method": "S256",
            }
        )
        location = endpoint + ("&" if "?" in endpoint else "?") + arguments
        cookie = cookie_header(
            self.state_cookie,
            box.seal(self.state_cookie, login),
            secure=self.config.session_cookie_secure,
            max_age=LOGIN_LIFETIME,
        )
        return Reply(
            302,
            b"",
            [("location", location), ("set-cookie", cookie), ("cache-control", "no-store")],
        )

    async def _callback(self, ctx: RequestContext, box: CookieBox, now: float) -> Reply:
        login = box.open(self.state_cookie, ctx.var("cookie_" + self.state_cookie), now)
        if login is None:
            return Reply.error(401, "login state missing or expired")
        if ctx.arg("error"):
            return Reply.error(401, "the provider refused the login")
        code, state = ctx.arg("code"), ctx.arg("state")
        if not code or not state or not _same(state, login["state"]):
            return Reply.error(401, "login state mismatch")
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": str(login["redirect_uri"]),
            "code_verifier": str(login["verifier"]),
            "client_id": self.config.client_id,
        }
        try:
            answer = await self._token_request(form)
            if answer is None:
                return Reply.error(401, "the provider refused the authorization code")
            claims = await self._verified(str(answer.get("id_token", "")), self.config.client_id)
        except ProviderUnavailable as error:
            return self._unavailable(error)
        except TokenRejected as rejected:
            return Reply.error(401, f"ID token rejected: {rejected}")
        if not _same(claims.get("nonce", ""), login["nonce"]):
            return Reply.error(401, "ID token nonce mismatch")
        session = self._session(answer, claims, None, now)
        original = _local(str(login["original"]))
        secure = self.config.session_cookie_secure
        return Reply(
            302,
            b"",
            [
                ("location", original),
                ("set-cookie", self._session_cookie(box, session)),
                ("set-cookie", cookie_header(self.state_cookie, "", secure=secure, max_age=0)),
                ("cache-control", "no-store"),
            ],
        )

    async def _refresh(
        self, ctx: RequestContext, box: CookieBox, session: dict[str, Any], now: float
    ) -> Reply | None:
        form = {
            "grant_type": "refresh_token",
            "refresh_token": str(session["refresh_token"]),
            "client_id": self.config.client_id,
        }
        try:
            answer = await self._token_request(form)
        except ProviderUnavailable as error:
            return self._unavailable(error)
        if answer is None:  # refresh token expired or revoked: log in again
            return await self._login(ctx, box, now)
        claims = session.get("userinfo") if isinstance(session.get("userinfo"), dict) else {}
        renewed = self._session(answer, claims or {}, session, now)
        ctx.response_headers["set-cookie"] = self._session_cookie(box, renewed)
        self._pass_session(ctx, renewed)
        return None

    async def _token_request(self, form: dict[str, str]) -> dict[str, Any] | None:
        """The token endpoint's answer (client_secret_basic, RFC 6749 §2.3.1), or None when
        it refused; :class:`ProviderUnavailable` when it cannot be reached."""
        metadata, _ = await self.provider.load()
        if metadata.token_endpoint is None:
            raise ProviderUnavailable("the provider has no token endpoint")
        credentials = f"{quote(self.config.client_id, safe='')}:" + quote(
            self.config.client_secret or "", safe=""
        )
        headers = {
            "authorization": "Basic " + base64.b64encode(credentials.encode()).decode(),
            "accept": "application/json",
        }
        status, answer = await self.provider.post_form(metadata.token_endpoint, form, headers)
        if status >= 500:
            raise ProviderUnavailable(f"the token endpoint answered {status}")
        if status != 200 or not isinstance(answer, dict):
            return None
        if not isinstance(answer.get("access_token"), str):
            return None
        return answer

    def _session(
        self,
        answer: dict[str, Any],
        claims: dict[str, Any],
        previous: dict[str, Any] | None,
        now: float,
    ) -> dict[str, Any]:
        lifetime = answer.get("expires_in")
        if not isinstance(lifetime, int) or lifetime <= 0:
            lifetime = DEFAULT_ACCESS_LIFETIME
        refresh = answer.get("refresh_token")
        if not isinstance(refresh, str) and previous is not None:
            refresh = previous.get("refresh_token")  # providers may keep the old one valid
        expires = previous["expires"] if previous is not None else now + SESSION_LIFETIME
        return {
            "access_token": answer["access_token"],
            "access_expires": now + lifetime,
            "refresh_token": refresh if isinstance(refresh, str) else None,
            "userinfo": claims,
            "expires": expires,
        }

    def _session_cookie(self, box: CookieBox, session: dict[str, Any]) -> str:
        return cookie_header(
            self.session_cookie,
            box.seal(self.session_cookie, session),
            secure=self.config.session_cookie_secure,
        )

    def _pass_session(self, ctx: RequestContext, session: dict[str, Any]) -> None:
        userinfo = session.get("userinfo")
        claims = userinfo if isinstance(userinfo, dict) else {}
        self._pass(ctx, str(session["access_token"]), _userinfo(claims))
        cookies = "; ".join(v for k, v in ctx.request.headers if k == "cookie")
        kept = without_cookie(without_cookie(cookies, self.session_cookie), self.state_cookie)
        if kept:
            ctx.upstream_headers["cookie"] = kept
        else:
            ctx.remove_upstream_headers.add("cookie")

    def _logout(self) -> Reply:
        cleared = cookie_header(
            self.session_cookie, "", secure=self.config.session_cookie_secure, max_age=0
        )
        cached = self.provider.cached()
        end_session = cached[0].end_session_endpoint if cached is not None else None
        if end_session:
            return Reply(302, b"", [("location", end_session), ("set-cookie", cleared)])
        reply = Reply.error(200, "logged out")
        reply.headers.append(("set-cookie", cleared))
        return reply


def _userinfo(claims: dict[str, Any]) -> str:
    return base64.b64encode(json.dumps(claims, separators=(",", ":")).encode()).decode()


def _bearer(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


def _local(target: str) -> str:
    """Only a path on this site: ``//host`` or ``/\\host`` would send the browser away, and
    so would a control character (browsers drop tabs and newlines from URLs)."""
    if not target.startswith("/") or target.startswith(("//", "/\\")):
        return "/"
    if any(c < " " or c == "\x7f" for c in target):
        return "/"
    return target


def _same(presented: object, expected: object) -> bool:
    """Constant-time equality of two strings (any characters: compared as UTF-8)."""
    if not isinstance(presented, str) or not isinstance(expected, str):
        return False
    return hmac.compare_digest(presented.encode(), expected.encode())
