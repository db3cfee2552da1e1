"""openid-connect on real traffic: a Gateway on loopback in front of the echo backend, and
real OpenID Providers (``tests.support.oidcprovider``: HTTP servers in their own threads
speaking discovery, JWKS, the authorization endpoint and the token endpoint with PKCE, since
no provider installs from the registries as a small daemon). Two independent issuers show
that one's tokens are refused on a route configured for the other."""

from __future__ import annotations

import base64
import copy
import hashlib
import hmac
import json
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from cryptography.hazmat.primitives import serialization

from portico.gateway.plugins.openid_connect import runtime
from portico.gateway.plugins.openid_connect.provider import (
    KEYS_TTL,
    REFETCH_INTERVAL,
    parse_jwks,
)
from portico.gateway.snapshot import content_hash
from tests.gateway.test_pipeline import plugin, snapshot
from tests.support.oidcprovider import OidcProvider, new_key
from tests.support.waiting import eventually

LOOPBACK = ("127.0.0.0/8",)
NOW = 1_000_000.0  # conftest's Clock starts there


@pytest.fixture
def idp() -> Iterator[OidcProvider]:
    with OidcProvider(now=lambda: NOW) as provider:
        yield provider


@pytest.fixture
def other_idp() -> Iterator[OidcProvider]:
    """A second, independent issuer: its own keys, the same client id."""
    with OidcProvider(now=lambda: NOW) as provider:
        yield provider


def bearer_only(provider: OidcProvider, **extra: Any) -> dict[str, Any]:
    return plugin(
        "openid-connect",
        103,
        client_id=provider.client_id,
        discovery=provider.discovery,
        bearer_only=True,
        **extra,
    )


def browser(provider: OidcProvider, **extra: Any) -> dict[str, Any]:
    return plugin(
        "openid-connect",
        103,
        client_id=provider.client_id,
        client_secret=provider.client_secret,
        discovery=provider.discovery,
        bearer_only=False,
        redirect_uri="https://api.example.com/callback",
        **extra,
    )


def document(backend: int, *routes: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    """One route per ``(uri, attachment)``."""
    doc = snapshot(backend, [])
    template = doc["routes"][0]
    doc["routes"] = []
    for number, (uri, attachment) in enumerate(routes):
        route = copy.deepcopy(template)
        route.update(id=f"rev:{number}", name=f"r{number}", uri=uri, plugins=[attachment])
        doc["routes"].append(route)
    doc["content_hash"] = content_hash(doc)
    return doc


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def userinfo(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    headers = response.json()["headers"]
    claims: dict[str, Any] = json.loads(base64.b64decode(headers["x-userinfo"]))
    return claims


def forged(header: dict[str, Any], claims: dict[str, Any], hmac_key: bytes | None) -> str:
    """A token PyJWT refuses to make: unsigned, or HMAC-signed with ``hmac_key``."""

    def segment(part: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(part).encode()).rstrip(b"=").decode()

    signing_input = f"{segment(header)}.{segment(claims)}"
    if hmac_key is None:
        return signing_input + "."
    mac = hmac.new(hmac_key, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"


def claims_of(provider: OidcProvider) -> dict[str, Any]:
    return {"iss": provider.issuer, "aud": provider.client_id, "sub": "mallory", "exp": NOW + 300}


# ------------------------------------------------------------------------- bearer tokens


async def test_a_valid_token_passes_with_its_claims_upstream(
    served: Any, backend: int, idp: OidcProvider
) -> None:
    gw, client, _ = await served(egress_allow=LOOPBACK)
    await gw.apply(document(backend, ("/*", bearer_only(idp))))
    token = idp.token()
    # what the client claims to be under the plugin's header names is overwritten
    forged_info = base64.b64encode(b'{"sub":"root"}').decode()
    response = await client.get("/x", headers={**auth(token), "X-Userinfo": forged_info})
    assert userinfo(response)["sub"] == "alice"
    assert response.json()["headers"]["x-access-token"] == token
    # the keys are cached: more requests, no more fetches
    for _ in range(3):
        assert (await client.get("/x", headers=auth(token))).status_code == 200
    assert idp.hits["/jwks"] == 1
    assert idp.hits["/.well-known/openid-configuration"] == 1


async def test_claims_headers_can_be_turned_off(
    served: Any, backend: int, idp: OidcProvider
) -> None:
    gw, client, _ = await served(egress_allow=LOOPBACK)
    config = bearer_only(idp, set_access_token_header=False, set_userinfo_header=False)
    await gw.apply(document(backend, ("/*", config)))
    response = await client.get("/x", headers={**auth(idp.token()), "X-Userinfo": "e30="})
    assert response.status_code == 200
    assert "x-userinfo" not in response.json()["headers"]
    assert "x-access-token" not in response.json()["headers"]


async def test_a_missing_token_is_challenged(served: Any, backend: int, idp: OidcProvider) -> None:
    gw, client, _ = await served(egress_allow=LOOPBACK)
    await gw.apply(document(backend, ("/*", bearer_only(idp, realm="shop"))))
    for headers in ({}, {"Authorization": "Basic YTpi"}, {"Authorization": "Bearer"}):
        response = await client.get("/x", headers=headers)
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == 'Bearer realm="shop"'


def _public_pem(provider: OidcProvider) -> bytes:
    pem: bytes = provider.current.private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return pem


#: case → (the token, the error_description the gateway answers)
REFUSED: dict[str, tuple[Callable[[OidcProvider], str], str]] = {
    "expired": (lambda p: p.token(exp=NOW - 60, iat=NOW - 400), "token expired"),
    "no exp": (lambda p: p.token(exp=None), "token has no valid exp"),
    "not yet valid": (lambda p: p.token(nbf=NOW + 120), "token not valid yet"),
    "wrong issuer": (lambda p: p.token(iss="https://evil.example.com"), "token issuer mismatch"),
    "wrong audience": (lambda p: p.token(aud="another-client"), "token audience mismatch"),
    "alg none": (
        lambda p: forged({"alg": "none", "kid": p.current.kid}, claims_of(p), None),
        "token signature algorithm not accepted",
    ),
    "HS256 with the public key": (
        lambda p: forged(
            {"alg": "HS256", "typ": "JWT", "kid": p.current.kid}, claims_of(p), _public_pem(p)
        ),
        "token signature algorithm not accepted",
    ),
    "unknown kid": (lambda p: p.token(key=new_key()), "token signed with an unknown key"),
    "tampered": (lambda p: _tampered(p.token()), "token signature invalid"),
    "not a JWT": (lambda p: "not-a-jwt", "token is not a JWS"),
}


def _tampered(token: str) -> str:
    """The token with its claims changed (sub: alice → mallory), the signature kept."""
    header, claims, signature = token.split(".")
    decoded = json.loads(base64.urlsafe_b64decode(claims + "=" * (-len(claims) % 4)))
    decoded["sub"] = "mallory"
    changed = base64.urlsafe_b64encode(json.dumps(decoded).encode()).rstrip(b"=").decode()
    return f"{header}.{changed}.{signature}"


@pytest.mark.parametrize("case", sorted(REFUSED))
async def test_bad_tokens_are_refused(
    served: Any, backend: int, idp: OidcProvider, case: str
) -> None:
    gw, client, _ = await served(egress_allow=LOOPBACK)
    await gw.apply(document(backend, ("/*", bearer_only(idp))))
    make, description = REFUSED[case]
    response = await client.get("/x", headers=auth(make(idp)))
    assert response.status_code == 401, response.text
    assert response.json() == {"message": description}
    assert response.headers["www-authenticate"] == (
        f'Bearer realm="apisix", error="invalid_token", error_description="{description}"'
    )


async def test_clock_skew_within_the_leeway_is_tolerated(
    served: Any, backend: int, idp: OidcProvider
) -> None:
    gw, client, _ = await served(egress_allow=LOOPBACK)
    await gw.apply(document(backend, ("/*", bearer_only(idp, audience="api://orders"))))
    token = idp.token(exp=NOW - 10, nbf=NOW + 10, aud=["other", "api://orders"])
    assert (await client.get("/x", headers=auth(token))).status_code == 200


async def test_only_the_configured_algorithms_pass(
    served: Any, backend: int, idp: OidcProvider
) -> None:
    gw, client, _ = await served(egress_allow=LOOPBACK)
    es_key = idp.rotate("ES256")
    await gw.apply(
        document(
            backend,
            ("/rs/*", bearer_only(idp, token_signing_alg_values_expected=["RS256"])),
            ("/es/*", bearer_only(idp)),
        )
    )
    es_token = idp.token(key=es_key)
    assert (await client.get("/es/x", headers=auth(es_token))).status_code == 200
    assert (await client.get("/rs/x", headers=auth(es_token))).status_code == 401


async def test_tokens_of_another_issuer_are_refused(
    served: Any, backend: int, idp: OidcProvider, other_idp: OidcProvider
) -> None:
    gw, client, _ = await served(egress_allow=LOOPBACK)
    await gw.apply(document(backend, ("/a/*", bearer_only(idp)), ("/b/*", bearer_only(other_idp))))
    assert (await client.get("/a/x", headers=auth(idp.token()))).status_code == 200
    assert (await client.get("/b/x", headers=auth(other_idp.token()))).status_code == 200
    assert (await client.get("/a/x", headers=auth(other_idp.token()))).status_code == 401
    # even carrying the right issuer, a token signed by the other provider's key fails
    crossed = other_idp.token(iss=idp.issuer)
    assert (await client.get("/a/x", headers=auth(crossed))).status_code == 401


# ---------------------------------------------------------------------- keys and outages


async def test_a_rotated_key_is_fetched_once_and_refetches_are_rate_limited(
    served: Any, backend: int, idp: OidcProvider
) -> None:
    gw, client, clock = await served(egress_allow=LOOPBACK)
    await gw.apply(document(backend, ("/*", bearer_only(idp))))
    assert (await client.get("/x", headers=auth(idp.token()))).status_code == 200
    assert idp.hits["/jwks"] == 1
    idp.rotate("ES256")
    idp.retire()
    # a new kid: one refetch finds it
    assert (await client.get("/x", headers=auth(idp.token()))).status_code == 200
    assert idp.hits["/jwks"] == 2
    # kids nobody published: refused, and no refetch before REFETCH_INTERVAL
    for _ in range(3):
        stray = idp.token(key=new_key())
        assert (await client.get("/x", headers=auth(stray))).status_code == 401
    assert idp.hits["/jwks"] == 2
    clock.now += REFETCH_INTERVAL + 1
    assert (await client.get("/x", headers=auth(idp.token(key=new_key())))).status_code == 401
    assert idp.hits["/jwks"] == 3


async def test_a_verified_token_is_remembered_only_while_it_would_verify(
    served: Any, backend: int, idp: OidcProvider
) -> None:
    gw, client, clock = await served(egress_allow=LOOPBACK)
    await gw.apply(document(backend, ("/*", bearer_only(idp))))
    short = idp.token(exp=NOW + 100)
    for _ in range(2):
        assert (await client.get("/x", headers=auth(short))).status_code == 200
    long = idp.token(exp=NOW + 3600)
    assert (await client.get("/x", headers=auth(long))).status_code == 200
    clock.now += 200  # past exp and the leeway: the remembered verdict is not used
    expired = await client.get("/x", headers=auth(short))
    assert expired.json() == {"message": "token expired"}
    # the provider withdraws the key that signed ``long``: once the keys are fetched again,
    # the token is checked again, and fails
    idp.rotate()
    idp.retire()
    clock.now += KEYS_TTL
    await client.get("/x", headers=auth(long))  # stale keys: a background refresh starts
    await eventually(lambda: idp.hits["/jwks"] == 2, what="the background refresh")

    async def refused() -> bool:
        response: httpx.Response = await client.get("/x", headers=auth(long))
        return response.status_code == 401

    await eventually(refused, what="the withdrawn key's token refused")


async def test_cached_keys_serve_while_the_provider_is_down(
    served: Any, backend: int, idp: OidcProvider
) -> None:
    gw, client, clock = await served(egress_allow=LOOPBACK)
    await gw.apply(document(backend, ("/*", bearer_only(idp))))
    token = idp.token(exp=NOW + 3600)
    assert (await client.get("/x", headers=auth(token))).status_code == 200
    idp.stop()
    clock.now += KEYS_TTL + 1  # stale: a background refresh fails; the old keys still serve
    for _ in range(3):
        assert (await client.get("/x", headers=auth(token))).status_code == 200


async def test_an_unreachable_provider_without_cached_keys_gives_503(
    served: Any, backend: int, idp: OidcProvider
) -> None:
    gw, client, _ = await served(egress_allow=LOOPBACK)
    await gw.apply(document(backend, ("/*", bearer_only(idp))))
    token = idp.token()
    idp.stop()
    response = await client.get("/x", headers=auth(token))
    assert response.status_code == 503
    assert response.json() == {"message": "OpenID provider unavailable"}
    idp.start()  # back on the same port: the next request fetches and passes
    assert (await client.get("/x", headers=auth(token))).status_code == 200


async def test_the_ssrf_guard_applies_to_the_discovery_url(
    served: Any, backend: int, idp: OidcProvider
) -> None:
    gw, client, _ = await served()  # loopback not allowed
    await gw.apply(document(backend, ("/*", bearer_only(idp))))
    assert (await client.get("/x", headers=auth(idp.token()))).status_code == 503
    assert idp.hits["/.well-known/openid-configuration"] == 0


async def test_a_url_that_is_no_discovery_document_gives_503(
    served: Any, backend: int, idp: OidcProvider
) -> None:
    gw, client, _ = await served(egress_allow=LOOPBACK)
    config = bearer_only(idp)
    config["config"]["discovery"] = idp.issuer + "/jwks"  # JSON, but no issuer nor jwks_uri
    await gw.apply(document(backend, ("/*", config)))
    assert (await client.get("/x", headers=auth(idp.token()))).status_code == 503


def test_only_asymmetric_signature_keys_are_taken_from_a_jwks() -> None:
    rsa_jwk = new_key("RS256").jwk()
    es_jwk = new_key("ES256").jwk()
    keys = parse_jwks(
        {
            "keys": [
                rsa_jwk,
                {**es_jwk, "kid": "es"},
                {"kty": "oct", "kid": "hmac", "k": "c2VjcmV0LXNlY3JldC1zZWNyZXQ"},
                {**rsa_jwk, "kid": "claims-hs", "alg": "HS256"},  # alg does not fit the key
                {**rsa_jwk, "kid": "for-encryption", "use": "enc"},
                {**es_jwk, "kid": "es-as-rs", "alg": "RS256"},
            ]
        }
    )
    assert {key.kid: key.algorithms for key in keys} == {
        rsa_jwk["kid"]: frozenset({"RS256"}),
        "es": frozenset({"ES256"}),
    }
    unnamed = dict(rsa_jwk)
    del unnamed["alg"]  # no alg: every RSA signature algorithm, never HMAC
    assert parse_jwks({"keys": [unnamed]})[0].algorithms == {
        "RS256",
        "RS384",
        "RS512",
        "PS256",
        "PS384",
        "PS512",
    }


# ---------------------------------------------------------------------- the browser flow


def cookie_of(response: httpx.Response, prefix: str) -> tuple[str, str]:
    """The ``name=value`` of the Set-Cookie whose name starts with ``prefix``, and its
    attributes."""
    for header in response.headers.get_list("set-cookie"):
        pair, _, attributes = header.partition(";")
        if pair.startswith(prefix):
            return pair, attributes
    raise AssertionError(f"no {prefix} cookie in {response.headers}")


async def log_in(
    client: httpx.AsyncClient, idp: OidcProvider, target: str
) -> tuple[httpx.Response, str]:
    """Follow the redirects by hand as a browser would: gateway → provider → callback.
    Returns the callback's answer and the session cookie."""
    client.cookies.clear()
    started = await client.get(target)
    assert started.status_code == 302, started.text
    location = started.headers["location"]
    assert location.startswith(idp.issuer + "/authorize?")
    query = parse_qs(urlsplit(location).query)
    assert query["code_challenge_method"] == ["S256"]
    assert query["state"] and query["nonce"] and query["code_challenge"]
    login_cookie, attributes = cookie_of(started, "portico_oidc_login_")
    assert "HttpOnly" in attributes and "SameSite=Lax" in attributes and "Secure" in attributes
    async with httpx.AsyncClient(timeout=10) as browser_to_idp:
        approved = await browser_to_idp.get(location)
    assert approved.status_code == 302
    back = urlsplit(approved.headers["location"])
    assert back.path == "/callback"
    client.cookies.clear()
    callback = await client.get(f"{back.path}?{back.query}", headers={"Cookie": login_cookie})
    if callback.status_code != 302:
        return callback, ""
    session, _ = cookie_of(callback, "portico_oidc_")
    return callback, session


async def test_a_browser_logs_in_with_the_code_flow_and_pkce(
    served: Any, backend: int, idp: OidcProvider
) -> None:
    gw, client, clock = await served(egress_allow=LOOPBACK)
    idp.now = clock
    await gw.apply(document(backend, ("/*", browser(idp))))
    callback, session = await log_in(client, idp, "/orders?page=2")
    assert callback.headers["location"] == "/orders?page=2"
    assert idp.hits["/token"] == 1
    client.cookies.clear()
    response = await client.get("/orders?page=2", headers={"Cookie": f"{session}; theme=dark"})
    claims = userinfo(response)
    assert claims["sub"] == "alice" and claims["email"] == "alice@example.com"
    forwarded = response.json()["headers"]
    assert forwarded["cookie"] == "theme=dark"  # the plugin's own cookies stay here
    assert forwarded["x-access-token"].count(".") == 2
    # a bearer token on a browser route is verified as one, without a redirect
    assert (await client.get("/orders", headers=auth(idp.token()))).status_code == 200


async def test_an_expired_session_is_refreshed_then_logged_in_again(
    served: Any, backend: int, idp: OidcProvider
) -> None:
    gw, client, clock = await served(egress_allow=LOOPBACK)
    idp.now = clock
    await gw.apply(document(backend, ("/*", browser(idp))))
    _, session = await log_in(client, idp, "/")
    clock.now += idp.access_lifetime + 1  # the access token expired: the refresh token renews
    client.cookies.clear()
    refreshed = await client.get("/x", headers={"Cookie": session})
    assert refreshed.status_code == 200
    assert idp.hits["/token"] == 2
    renewed, _ = cookie_of(refreshed, "portico_oidc_")
    assert renewed != session
    # the refresh token is spent (the provider rotates them): the old session logs in again
    client.cookies.clear()
    again = await client.get("/x", headers={"Cookie": session})
    assert again.status_code == 302
    assert again.headers["location"].startswith(idp.issuer + "/authorize?")


async def test_a_tampered_session_cookie_means_logging_in_again(
    served: Any, backend: int, idp: OidcProvider
) -> None:
    gw, client, _ = await served(egress_allow=LOOPBACK)
    await gw.apply(document(backend, ("/*", browser(idp))))
    _, session = await log_in(client, idp, "/")
    name, value = session.split("=", 1)
    flipped = value[:20] + ("A" if value[20] != "A" else "B") + value[21:]
    client.cookies.clear()
    response = await client.get("/", headers={"Cookie": f"{name}={flipped}"})
    assert response.status_code == 302
    assert response.headers["location"].startswith(idp.issuer + "/authorize?")


async def test_a_forged_state_or_a_replayed_code_is_refused(
    served: Any, backend: int, idp: OidcProvider
) -> None:
    gw, client, _ = await served(egress_allow=LOOPBACK)
    await gw.apply(document(backend, ("/*", browser(idp))))
    started = await client.get("/")
    login_cookie, _ = cookie_of(started, "portico_oidc_login_")
    async with httpx.AsyncClient(timeout=10) as browser_to_idp:
        approved = await browser_to_idp.get(started.headers["location"])
    back = parse_qs(urlsplit(approved.headers["location"]).query)
    code = back["code"][0]
    client.cookies.clear()
    wrong_state = await client.get(
        f"/callback?code={code}&state=guessed", headers={"Cookie": login_cookie}
    )
    assert wrong_state.status_code == 401
    odd_state = await client.get(
        f"/callback?code={code}&state=%C3%A9t%C3%A9", headers={"Cookie": login_cookie}
    )
    assert odd_state.status_code == 401  # not ASCII: compared all the same, no 500
    no_login = await client.get(f"/callback?code={code}&state={back['state'][0]}")
    assert no_login.status_code == 401
    used = await client.get(
        f"/callback?code={code}&state={back['state'][0]}", headers={"Cookie": login_cookie}
    )
    assert used.status_code == 302  # the first real use works...
    replayed = await client.get(
        f"/callback?code={code}&state={back['state'][0]}", headers={"Cookie": login_cookie}
    )
    assert replayed.status_code == 401  # ...and the code works once


async def test_logout_clears_the_session(served: Any, backend: int, idp: OidcProvider) -> None:
    gw, client, _ = await served(egress_allow=LOOPBACK)
    await gw.apply(document(backend, ("/*", browser(idp))))
    _, session = await log_in(client, idp, "/")
    client.cookies.clear()
    response = await client.get("/logout", headers={"Cookie": session})
    assert response.status_code == 302
    assert response.headers["location"] == idp.issuer + "/logout"
    cleared, attributes = cookie_of(response, session.split("=", 1)[0])
    assert cleared.endswith("=") and "Max-Age=0" in attributes


@pytest.mark.parametrize(
    ("original", "sent_to"),
    [
        ("/orders?page=2", "/orders?page=2"),
        ("//evil.example/x", "/"),
        ("/\\evil.example/x", "/"),
        ("/\t/evil.example/x", "/"),
        ("https://evil.example/", "/"),
    ],
)
def test_after_login_the_browser_only_goes_back_to_this_site(original: str, sent_to: str) -> None:
    assert runtime._local(original) == sent_to
