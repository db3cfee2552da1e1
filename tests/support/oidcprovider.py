"""A real OpenID Provider for tests: an HTTP server on 127.0.0.1 (its own thread) speaking the
protocol's wire format, since no provider installs from PyPI/Debian as a small daemon.

It serves what a relying party uses:

* ``/.well-known/openid-configuration`` (OpenID Connect Discovery 1.0), ``/jwks`` (RFC 7517);
* ``/authorize``: approves the test user at once (no login page) and redirects back to the
  ``redirect_uri`` with a one-time ``code`` and the ``state``; only ``response_type=code``
  with a PKCE S256 challenge (RFC 7636) is accepted;
* ``/token``: ``authorization_code`` (client authenticated by HTTP Basic or in the form, the
  ``redirect_uri`` and the PKCE verifier checked, the code used once) and ``refresh_token``
  grants, answering JWT access and ID tokens signed with the current key, and
  ``client_credentials`` (an access token for the client itself: how one gets a token by hand);
* ``/logout`` as the end-session endpoint.

Keys are generated with ``cryptography`` (RSA or EC P-256); ``rotate()`` adds a new current
key, ``retire()`` removes old ones; ``stop()``/``start()`` take the provider off and back on
the same port (connection refused meanwhile). Token times come from ``now`` (the test's clock).

By hand (see by_hand.py), it serves until stopped:

    .venv/bin/python tests/support/oidcprovider.py --port 9000 [--issuer URL]
    curl -u gateway:gateway-client-secret -d grant_type=client_credentials \
        http://127.0.0.1:9000/token
"""

from __future__ import annotations

if __name__ == "__main__" and not __package__:  # run by its path: see by_hand.py
    from by_hand import run_as_module

    run_as_module(__file__)

import argparse
import base64
import hashlib
import json
import secrets
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote_plus, urlencode, urlsplit

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

from . import by_hand


@dataclass
class SigningKey:
    kid: str
    alg: str
    private: Any

    def jwk(self) -> dict[str, Any]:
        public = self.private.public_key()
        if self.alg.startswith("ES"):
            jwk = ECAlgorithm.to_jwk(public, as_dict=True)
        else:
            jwk = RSAAlgorithm.to_jwk(public, as_dict=True)
        return {**jwk, "kid": self.kid, "alg": self.alg, "use": "sig"}


def new_key(alg: str = "RS256") -> SigningKey:
    kid = secrets.token_hex(6)
    if alg.startswith("ES"):
        return SigningKey(kid, alg, ec.generate_private_key(ec.SECP256R1()))
    return SigningKey(kid, alg, rsa.generate_private_key(public_exponent=65537, key_size=2048))


@dataclass
class Grant:
    redirect_uri: str
    challenge: str
    nonce: str | None
    user: str


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128


class OidcProvider:
    def __init__(
        self,
        *,
        client_id: str = "gateway",
        client_secret: str = "gateway-client-secret",
        user: str = "alice",
        now: Callable[[], float] = time.time,
        alg: str = "RS256",
        host: str = "127.0.0.1",
        port: int = 0,
        public_url: str | None = None,
    ) -> None:
        self.client_id = client_id
        self.client_secret = client_secret
        self.user = user
        self.now = now
        self.keys = [new_key(alg)]
        self.access_lifetime = 300
        self.hits: Counter[str] = Counter()
        self.codes: dict[str, Grant] = {}
        self.refresh_tokens: dict[str, str] = {}
        self.host = host
        self.port = port
        #: the issuer, when clients reach the provider by another address than host:port
        self.public_url = public_url
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle ----------------------------------------------------------------------

    def start(self) -> OidcProvider:
        self._server = _Server((self.host, self.port), _handler(self))
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> OidcProvider:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def issuer(self) -> str:
        return self.public_url or f"http://{self.host}:{self.port}"

    @property
    def discovery(self) -> str:
        return self.issuer + "/.well-known/openid-configuration"

    # --- keys and tokens ----------------------------------------------------------------

    @property
    def current(self) -> SigningKey:
        return self.keys[-1]

    def rotate(self, alg: str = "RS256") -> SigningKey:
        """A new key signs from now on; the old ones stay published until :meth:`retire`."""
        key = new_key(alg)
        self.keys.append(key)
        return key

    def retire(self) -> None:
        self.keys = [self.current]

    def token(
        self,
        key: SigningKey | None = None,
        headers: dict[str, Any] | None = None,
        **claims: Any,
    ) -> str:
        """An access token for the test user, signed by ``key`` (the current one); ``claims``
        override the defaults (a claim given as None is left out)."""
        key = key or self.current
        now = int(self.now())
        body = {
            "iss": self.issuer,
            "sub": self.user,
            "aud": self.client_id,
            "iat": now,
            "exp": now + self.access_lifetime,
            "scope": "openid",
            **claims,
        }
        body = {name: value for name, value in body.items() if value is not None}
        return jwt.encode(
            body, key.private, algorithm=key.alg, headers={"kid": key.kid, **(headers or {})}
        )

    # --- the endpoints ------------------------------------------------------------------

    def configuration(self) -> dict[str, Any]:
        return {
            "issuer": self.issuer,
            "authorization_endpoint": self.issuer + "/authorize",
            "token_endpoint": self.issuer + "/token",
            "jwks_uri": self.issuer + "/jwks",
            "end_session_endpoint": self.issuer + "/logout",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": sorted({k.alg for k in self.keys}),
            "code_challenge_methods_supported": ["S256"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
        }

    def authorize(self, query: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        if (
            query.get("response_type") != "code"
            or query.get("client_id") != self.client_id
            or query.get("code_challenge_method") != "S256"
            or not query.get("code_challenge")
            or not query.get("redirect_uri")
            or "openid" not in query.get("scope", "").split()
        ):
            return 400, {}, b'{"error":"invalid_request"}'
        code = secrets.token_urlsafe(16)
        self.codes[code] = Grant(
            query["redirect_uri"], query["code_challenge"], query.get("nonce"), self.user
        )
        back = {"code": code, **({"state": query["state"]} if "state" in query else {})}
        return 302, {"location": query["redirect_uri"] + "?" + urlencode(back)}, b""

    def exchange(self, form: dict[str, str], authorization: str | None) -> tuple[int, Any]:
        client = self._client(form, authorization)
        if client != self.client_id:
            return 401, {"error": "invalid_client"}
        grant_type = form.get("grant_type")
        if grant_type == "authorization_code":
            grant = self.codes.pop(form.get("code", ""), None)  # a code works once
            if grant is None or form.get("redirect_uri") != grant.redirect_uri:
                return 400, {"error": "invalid_grant"}
            verifier = form.get("code_verifier", "")
            challenge = (
                base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
                .rstrip(b"=")
                .decode()
            )
            if challenge != grant.challenge:
                return 400, {"error": "invalid_grant", "error_description": "PKCE"}
            return 200, self._tokens(grant.user, grant.nonce)
        if grant_type == "refresh_token":
            user = self.refresh_tokens.pop(form.get("refresh_token", ""), None)
            if user is None:
                return 400, {"error": "invalid_grant"}
            return 200, self._tokens(user, None)
        if grant_type == "client_credentials":  # the client acts for itself (RFC 6749 4.4)
            return 200, {
                "access_token": self.token(sub=client),
                "token_type": "Bearer",
                "expires_in": self.access_lifetime,
            }
        return 400, {"error": "unsupported_grant_type"}

    def _client(self, form: dict[str, str], authorization: str | None) -> str | None:
        if authorization and authorization.lower().startswith("basic "):
            decoded = base64.b64decode(authorization[6:]).decode()
            client, secret = (unquote_plus(p) for p in decoded.partition(":")[::2])
        else:
            client, secret = form.get("client_id", ""), form.get("client_secret", "")
        ok = client == self.client_id and secrets.compare_digest(secret, self.client_secret)
        return client if ok else None

    def _tokens(self, user: str, nonce: str | None) -> dict[str, Any]:
        refresh = secrets.token_urlsafe(16)
        self.refresh_tokens[refresh] = user
        id_claims: dict[str, Any] = {"sub": user, "email": f"{user}@example.com"}
        if nonce is not None:
            id_claims["nonce"] = nonce
        return {
            "access_token": self.token(sub=user),
            "id_token": self.token(**id_claims, scope=None),
            "refresh_token": refresh,
            "token_type": "Bearer",
            "expires_in": self.access_lifetime,
        }


def _handler(provider: OidcProvider) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.send_header("cache-control", "no-store")
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            provider.hits[parts.path] += 1
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            if parts.path == "/.well-known/openid-configuration":
                self._send(200, provider.configuration())
            elif parts.path == "/jwks":
                self._send(200, {"keys": [key.jwk() for key in provider.keys]})
            elif parts.path == "/authorize":
                status, headers, body = provider.authorize(query)
                self._send(status, body, headers)
            elif parts.path == "/logout":
                self._send(200, {"message": "logged out"})
            else:
                self._send(404, {"error": "not found"})

        def do_POST(self) -> None:
            parts = urlsplit(self.path)
            provider.hits[parts.path] += 1
            length = int(self.headers.get("content-length") or 0)
            form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
            if parts.path != "/token":
                self._send(404, {"error": "not found"})
                return
            status, answer = provider.exchange(form, self.headers.get("authorization"))
            self._send(status, answer)

        def log_message(self, *args: object) -> None:
            return

    return Handler


@contextmanager
def _by_hand(arguments: argparse.Namespace) -> Iterator[str]:
    with OidcProvider(
        client_id=arguments.client_id,
        client_secret=arguments.client_secret,
        user=arguments.user,
        alg=arguments.alg,
        host=arguments.host,
        port=arguments.port,
        public_url=arguments.issuer,
    ) as provider:
        provider.access_lifetime = arguments.token_lifetime
        yield (
            f"OpenID provider {by_hand.LISTENING} http://{arguments.host}:{provider.port}"
            f" (issuer {provider.issuer}, discovery {provider.discovery}; a token: curl -u"
            f" {provider.client_id}:{provider.client_secret} -d grant_type=client_credentials"
            f" {provider.issuer}/token)"
        )


if __name__ == "__main__":
    parser = by_hand.command_line(__doc__.split("\n\n")[0], port=9000)
    parser.add_argument("--issuer", help="the issuer URL (default: http://HOST:PORT)")
    defaults = "(default: %(default)s)"
    parser.add_argument("--client-id", default="gateway", help=defaults)
    parser.add_argument("--client-secret", default="gateway-client-secret", help=defaults)
    parser.add_argument("--user", default="alice", help=f"who /authorize signs in {defaults}")
    parser.add_argument("--alg", choices=("RS256", "ES256"), default="RS256", help=defaults)
    parser.add_argument("--token-lifetime", type=int, default=3600, help=f"seconds {defaults}")
    by_hand.serve(parser, _by_hand)
