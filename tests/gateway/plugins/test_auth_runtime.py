"""basic-auth, jwt-auth and consumer-restriction on real traffic: a Gateway with its HTTP
engine on loopback, a real echo backend, consumers whose credentials are stored exactly as
the management service stores them (``credentials.prepare`` then ``gateway_credential``)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import logging
import secrets
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from http.server import ThreadingHTTPServer
from typing import Any

import httpx
import jwt
import pytest
import uvloop
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from portico.gateway.gateway import Gateway
from portico.gateway.http.server import serve
from portico.gateway.node_options import GatewayOptions
from portico.gateway.plugins import basic_auth, jwt_auth
from portico.gateway.plugins.jwt_auth.verify import ConsumerKey, prepare_key
from portico.gateway.sealing import SecretBox, verify_password_hash
from portico.gateway.snapshot import content_hash
from portico.management.consumer.credentials import gateway_credential, prepare, secret_box
from tests.e2e.test_gateway import Echo
from tests.gateway.test_pipeline import HOST, plugin, snapshot

SERVER_KEY = "control-plane-secret-0123456789abcdef0123456789"
BOX = secret_box((SERVER_KEY,))
HS_SECRET = "alice-hmac-secret-" + "0123456789abcdef" * 4  # ≥ 64 bytes: HS512 can sign too
RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
RSA_PUBLIC = (
    RSA_KEY.public_key()
    .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    .decode()
)

Client = httpx.AsyncClient
Start = Callable[..., Awaitable[tuple[Gateway, Client, list[str | None]]]]


# ------------------------------------------------------------------------------ fixtures


@pytest.fixture
def backend() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    # a short poll so that shutdown() does not wait half a second per test
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


#: the wall clock of the gateways here (``Gateway(now=...)``) and of the tokens they verify: a
#: fixed moment at the start of an hour, so that a token's exp/nbf is judged against the
#: moment it was made for and limit-count's windows (an hour here) never end mid-test
NOW = 1_800_000_000


def clock() -> float:
    return float(NOW)


@pytest.fixture
async def start() -> AsyncIterator[Start]:
    """Start a Gateway (given options) on loopback; returns it, a client and the consumer
    names the pipeline identified, one per request (from the gateway's observers)."""
    running: list[tuple[Gateway, asyncio.Server, Client]] = []

    async def make(
        options: GatewayOptions | None = None,
    ) -> tuple[Gateway, Client, list[str | None]]:
        gw = Gateway(options=options or GatewayOptions(secret_keys=(SERVER_KEY,)), now=clock)
        seen: list[str | None] = []
        gw.observers.append(
            lambda _, ctx: seen.append(ctx.consumer.username if ctx.consumer else None)
        )
        server = await serve(gw.handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        client = Client(base_url=f"http://127.0.0.1:{port}", headers={"Host": HOST}, timeout=10)
        running.append((gw, server, client))
        return gw, client, seen

    yield make
    for gw, server, client in running:
        await client.aclose()
        server.close()
        await gw.close()


# ------------------------------------------------------------------------------- helpers


def consumer(username: str, credentials: dict[str, dict[str, Any]], *own: dict[str, Any]) -> Any:
    """A snapshot consumer whose credentials went through the management service's own
    validation and sealing, then its gateway form."""
    stored = {name: prepare(name, raw, None, BOX)[0] for name, raw in credentials.items()}
    return {
        "id": f"id-{username}",
        "username": username,
        "credentials": {name: gateway_credential(name, s) for name, s in stored.items()},
        "plugins": [{**attachment, "scope": "consumer"} for attachment in own],
    }


def document(
    backend: int, plugins: list[dict[str, Any]], consumers: list[Any], version: int = 1
) -> dict[str, Any]:
    doc = snapshot(backend, plugins, version)
    doc["consumers"] = consumers
    doc["content_hash"] = content_hash(doc)
    return doc


def basic(user: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def hs_token(claims: dict[str, Any], secret: str = HS_SECRET, alg: str = "HS256") -> str:
    return jwt.encode({"exp": NOW + 600, **claims}, secret, algorithm=alg)


def rs_token(claims: dict[str, Any]) -> str:
    return jwt.encode({"exp": NOW + 600, **claims}, RSA_KEY, algorithm="RS256")


def forged(header: dict[str, Any], claims: dict[str, Any], signer: bytes | None) -> str:
    """A token signed by hand (PyJWT refuses to make these): HMAC-SHA256 under ``signer``,
    or no signature at all."""

    def segment(part: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(part).encode()).rstrip(b"=").decode()

    signing_input = f"{segment(header)}.{segment(claims)}"
    if signer is None:
        return signing_input + "."
    mac = hmac.new(signer, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"


def echoed(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


ALICE_BASIC = consumer("alice", {"basic-auth": {"username": "alice", "password": "pa:ss w0rd"}})
BOB_BASIC = consumer("bob", {"basic-auth": {"username": "bob", "password": "bob-password"}})
ALICE_JWT = consumer("alice", {"jwt-auth": {"key": "alice-key", "secret": HS_SECRET}})
CAROL_RS = consumer(
    "carol", {"jwt-auth": {"key": "carol-key", "algorithm": "RS256", "public_key": RSA_PUBLIC}}
)


# ---------------------------------------------------------------------------- basic-auth


async def test_basic_auth_identifies_the_consumer_and_can_hide_the_header(
    start: Start, backend: int
) -> None:
    gw, client, seen = await start()
    await gw.apply(document(backend, [plugin("basic-auth", 101)], [ALICE_BASIC, BOB_BASIC]))
    # the password holds a colon and a space: the user-id ends at the first colon (RFC 7617)
    forwarded = echoed(await client.get("/x", headers=basic("alice", "pa:ss w0rd")))
    assert forwarded["headers"]["authorization"] == basic("alice", "pa:ss w0rd")["Authorization"]
    assert echoed(await client.get("/x", headers=basic("bob", "bob-password")))
    assert seen == ["alice", "bob"]

    hidden = [plugin("basic-auth", 101, hide_credentials=True)]
    await gw.apply(document(backend, hidden, [ALICE_BASIC], version=2))
    forwarded = echoed(await client.get("/x", headers=basic("alice", "pa:ss w0rd")))
    assert "authorization" not in forwarded["headers"]
    assert seen[-1] == "alice"


@pytest.mark.parametrize(
    ("headers", "message"),
    [
        ({}, "Missing authorization in request"),
        ({"Authorization": "Basic !!not-base64!!"}, "Invalid authorization in request"),
        (
            {"Authorization": "Basic " + base64.b64encode(b"no-colon").decode()},
            "Invalid authorization in request",
        ),
        ({"Authorization": "Bearer abc"}, "Invalid authorization in request"),
        (basic("alice", "wrong"), "Invalid user authorization"),
        (basic("mallory", "pa:ss w0rd"), "Invalid user authorization"),
        (basic("alice", "pa:ss"), "Invalid user authorization"),  # not cut at a 2nd colon
    ],
)
async def test_basic_auth_refusals(
    start: Start, backend: int, headers: dict[str, str], message: str
) -> None:
    gw, client, seen = await start()
    await gw.apply(document(backend, [plugin("basic-auth", 101)], [ALICE_BASIC]))
    response = await client.get("/x", headers=headers)
    assert response.status_code == 401
    assert response.json() == {"message": message}
    assert response.headers["www-authenticate"] == 'Basic realm="basic"'
    assert seen == [None]


async def test_basic_auth_remembers_successes_only_and_spends_a_hash_on_unknown_users(
    start: Start, backend: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    hashed: list[str] = []

    def counting(stored: str, presented: str) -> bool:
        hashed.append(stored)
        return verify_password_hash(stored, presented)

    monkeypatch.setattr(basic_auth, "verify_password_hash", counting)
    monkeypatch.setattr(basic_auth, "CACHE_SIZE", 1)
    gw, client, _ = await start()
    await gw.apply(document(backend, [plugin("basic-auth", 101)], [ALICE_BASIC, BOB_BASIC]))
    alice_hash = ALICE_BASIC["credentials"]["basic-auth"]["password_hash"]

    for _ in range(3):
        echoed(await client.get("/x", headers=basic("alice", "pa:ss w0rd")))
    assert hashed == [alice_hash]  # verified once, then remembered
    # a wrong password for a remembered user is verified (and refused), never remembered
    for _ in range(2):
        assert (await client.get("/x", headers=basic("alice", "nope"))).status_code == 401
    assert hashed == [alice_hash] * 3
    # an unknown user costs one hash too, against a decoy
    assert (await client.get("/x", headers=basic("mallory", "x"))).status_code == 401
    assert len(hashed) == 4 and hashed[-1] == basic_auth._decoy_hash()
    # the LRU is bounded: bob's success evicts alice's (CACHE_SIZE 1)
    echoed(await client.get("/x", headers=basic("bob", "bob-password")))
    echoed(await client.get("/x", headers=basic("alice", "pa:ss w0rd")))
    assert hashed[-1] == alice_hash and len(hashed) == 6
    runtime = gw.environments["env"].routes["rev:0"].chain[0][1]
    assert isinstance(runtime, basic_auth.BasicAuthRuntime)
    cached = list(runtime._verified)
    assert len(cached) == 1 and all(len(k) == 32 and b"pa:ss" not in k for k in cached)


# ------------------------------------------------------------------------------ jwt-auth


async def test_jwt_auth_finds_the_token_in_header_query_or_cookie(
    start: Start, backend: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    prepared: list[str] = []

    def counting(credential: dict[str, Any], box: SecretBox | None) -> ConsumerKey:
        prepared.append(credential["key"])
        return prepare_key(credential, box)

    monkeypatch.setattr(jwt_auth, "prepare_key", counting)
    gw, client, seen = await start()
    await gw.apply(document(backend, [plugin("jwt-auth", 102)], [ALICE_JWT, CAROL_RS]))
    token = hs_token({"key": "alice-key"})
    forwarded = echoed(await client.get("/x", headers={"Authorization": f"Bearer {token}"}))
    assert forwarded["headers"]["authorization"] == f"Bearer {token}"
    echoed(await client.get("/x", headers={"Authorization": token}))  # the raw value
    forwarded = echoed(await client.get(f"/x?a=1&jwt={token}"))
    assert forwarded["path"] == f"/x?a=1&jwt={token}"
    echoed(await client.get("/x", headers={"Cookie": f"jwt={token}"}))
    carol = rs_token({"key": "carol-key"})
    echoed(await client.get("/x", headers={"Authorization": f"bearer {carol}"}))
    assert seen == ["alice"] * 4 + ["carol"]
    assert prepared == ["alice-key", "carol-key"]  # decrypted / parsed once, not per request


async def test_jwt_auth_other_algorithms_and_base64_secrets(start: Start, backend: int) -> None:
    raw = secrets.token_bytes(64)
    dave = consumer(
        "dave",
        {
            "jwt-auth": {
                "key": "dave-key",
                "algorithm": "HS512",
                "secret": base64.b64encode(raw).decode(),
                "base64_secret": True,
            }
        },
    )
    ec_key = ec.generate_private_key(ec.SECP256R1())
    pem = ec_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    erin = consumer(
        "erin", {"jwt-auth": {"key": "erin-key", "algorithm": "ES256", "public_key": pem.decode()}}
    )
    gw, client, seen = await start()
    await gw.apply(document(backend, [plugin("jwt-auth", 102)], [dave, erin]))
    dave_token = jwt.encode({"key": "dave-key"}, raw, algorithm="HS512")
    echoed(await client.get("/x", headers={"Authorization": dave_token}))
    erin_token = jwt.encode({"key": "erin-key"}, ec_key, algorithm="ES256")
    echoed(await client.get("/x", headers={"Authorization": erin_token}))
    # the base64 text itself is not the key
    text_signed = jwt.encode({"key": "dave-key"}, base64.b64encode(raw), algorithm="HS512")
    assert (await client.get("/x", headers={"Authorization": text_signed})).status_code == 401
    assert seen == ["dave", "erin", None]


async def test_jwt_auth_hides_the_token_wherever_it_came_from(start: Start, backend: int) -> None:
    gw, client, seen = await start()
    config = {"header": "x-token", "query": "t", "cookie": "tok", "hide_credentials": True}
    await gw.apply(document(backend, [plugin("jwt-auth", 102, **config)], [ALICE_JWT]))
    token = hs_token({"key": "alice-key"})
    forwarded = echoed(await client.get("/x", headers={"X-Token": token, "X-Other": "kept"}))
    assert "x-token" not in forwarded["headers"] and forwarded["headers"]["x-other"] == "kept"
    forwarded = echoed(await client.get(f"/x?a=1&t={token}&b=%20two"))
    assert forwarded["path"] == "/x?a=1&b=%20two"
    forwarded = echoed(await client.get(f"/x?t={token}"))
    assert forwarded["path"] == "/x"
    forwarded = echoed(await client.get("/x", headers={"Cookie": f"a=1; tok={token}; b=2"}))
    assert forwarded["headers"]["cookie"] == "a=1; b=2"
    forwarded = echoed(await client.get("/x", headers={"Cookie": f"tok={token}"}))
    assert "cookie" not in forwarded["headers"]
    # the default names are not looked at once others are configured
    response = await client.get("/x", headers={"Authorization": f"Bearer {token}"})
    assert response.json() == {"message": "Missing JWT token in request"}
    assert seen == ["alice"] * 5 + [None]


def _rs_public_pem() -> bytes:
    return RSA_PUBLIC.encode()


@pytest.mark.parametrize(
    ("token", "message"),
    [
        (None, "Missing JWT token in request"),
        ("Bearer", "Missing JWT token in request"),  # a scheme without a token
        ("not.a.jwt", "JWT token invalid"),
        ("garbage", "JWT token invalid"),
        (hs_token({"sub": "alice"}), "missing user key in JWT token"),
        (hs_token({"key": "nobody"}), "Invalid user key in JWT token"),
        (hs_token({"key": 42}), "Invalid user key in JWT token"),
        (hs_token({"key": "alice-key", "exp": NOW - 5}), "failed to verify jwt"),
        (hs_token({"key": "alice-key", "nbf": NOW + 600}), "failed to verify jwt"),
        (hs_token({"key": "alice-key", "exp": "tomorrow"}), "failed to verify jwt"),
        (hs_token({"key": "alice-key"}, secret="another-secret-" + "x" * 32), None),
        # the algorithm is the consumer's: a token by her own secret but another HMAC fails
        (hs_token({"key": "alice-key"}, alg="HS512"), None),
        (rs_token({"key": "alice-key"}), None),
        # alg confusion: HMAC keyed with the RS consumer's public key PEM
        (forged({"alg": "HS256", "typ": "JWT"}, {"key": "carol-key"}, _rs_public_pem()), None),
        (forged({"alg": "none", "typ": "JWT"}, {"key": "carol-key"}, None), None),
        (forged({"alg": "none", "typ": "JWT"}, {"key": "alice-key"}, None), None),
        (forged({"alg": "HS256"}, {"key": "alice-key"}, HS_SECRET.encode())[:-4] + "AAAA", None),
        # unknown critical header extensions are refused (RFC 7515 §4.1.11)
        (
            forged({"alg": "HS256", "crit": ["x"]}, {"key": "alice-key"}, HS_SECRET.encode()),
            "JWT token invalid",
        ),
    ],
)
async def test_jwt_auth_refusals(
    start: Start, backend: int, token: str | None, message: str | None
) -> None:
    gw, client, seen = await start()
    await gw.apply(document(backend, [plugin("jwt-auth", 102)], [ALICE_JWT, CAROL_RS]))
    headers = {} if token is None else {"Authorization": token}
    response = await client.get("/x", headers=headers)
    assert response.status_code == 401
    assert response.json() == {"message": message or "failed to verify jwt"}
    assert seen == [None]


async def test_jwt_auth_checks_exp_and_nbf_with_the_gateway_clock(
    start: Start, backend: int
) -> None:
    gw, client, _ = await start()
    clock = [1_900_000_000.0]
    gw.now = lambda: clock[0]  # read when the snapshot is built
    await gw.apply(document(backend, [plugin("jwt-auth", 102)], [ALICE_JWT]))
    t = 1_900_000_000
    token = jwt.encode({"key": "alice-key", "nbf": t + 30, "exp": t + 60}, HS_SECRET)
    auth = {"Authorization": f"Bearer {token}"}
    assert (await client.get("/x", headers=auth)).status_code == 401  # not yet
    clock[0] = t + 30
    echoed(await client.get("/x", headers=auth))
    clock[0] = t + 59.5
    echoed(await client.get("/x", headers=auth))
    clock[0] = t + 60
    assert (await client.get("/x", headers=auth)).json() == {"message": "failed to verify jwt"}


@pytest.mark.parametrize("keys", [(), ("a-different-server-secret-0123456789abcdef",)])
async def test_jwt_auth_without_the_server_secret_refuses_hmac_consumers_and_warns_once(
    start: Start, backend: int, caplog: pytest.LogCaptureFixture, keys: tuple[str, ...]
) -> None:
    gw, client, seen = await start(GatewayOptions(secret_keys=keys))
    await gw.apply(document(backend, [plugin("jwt-auth", 102)], [ALICE_JWT, CAROL_RS]))
    caplog.set_level(logging.WARNING, "portico.gateway.plugins.jwt_auth")
    auth = {"Authorization": f"Bearer {hs_token({'key': 'alice-key'})}"}
    for _ in range(3):
        response = await client.get("/x", headers=auth)
        assert response.status_code == 401
        assert response.json() == {"message": "failed to verify jwt"}
    warnings = [r for r in caplog.records if "consumer alice" in r.getMessage()]
    assert len(warnings) == 1
    assert HS_SECRET not in caplog.text
    # public keys travel in clear: the RS consumer is still served
    echoed(await client.get("/x", headers={"Authorization": rs_token({"key": "carol-key"})}))
    assert seen == [None, None, None, "carol"]


# -------------------------------------------------------------------- consumer-restriction


async def test_consumer_restriction_without_an_identified_consumer_is_401(
    start: Start, backend: int
) -> None:
    gw, client, _ = await start()
    await gw.apply(document(backend, [plugin("consumer-restriction", 150, whitelist=["a"])], []))
    response = await client.get("/x")
    assert response.status_code == 401
    assert response.json() == {"message": "Missing authentication or identity verification."}


async def test_consumer_restriction_whitelist_and_blacklist(start: Start, backend: int) -> None:
    gw, client, _ = await start()
    chain = [plugin("basic-auth", 101), plugin("consumer-restriction", 150, whitelist=["alice"])]
    await gw.apply(document(backend, chain, [ALICE_BASIC, BOB_BASIC]))
    echoed(await client.get("/x", headers=basic("alice", "pa:ss w0rd")))
    refused = await client.get("/x", headers=basic("bob", "bob-password"))
    assert refused.status_code == 403
    assert refused.json() == {"message": "The consumer_name is forbidden."}

    restriction = {"blacklist": ["alice"], "rejected_code": 429, "rejected_msg": "go away"}
    chain = [plugin("basic-auth", 101), plugin("consumer-restriction", 150, **restriction)]
    await gw.apply(document(backend, chain, [ALICE_BASIC, BOB_BASIC], version=2))
    refused = await client.get("/x", headers=basic("alice", "pa:ss w0rd"))
    assert refused.status_code == 429 and refused.json() == {"message": "go away"}
    echoed(await client.get("/x", headers=basic("bob", "bob-password")))


# -------------------------------------------------------------------- consumer scope


async def test_a_consumers_own_restriction_replaces_the_routes_once_identified(
    start: Start, backend: int
) -> None:
    gw, client, _ = await start()
    own = {"name": "consumer-restriction", "order": 150}
    suspended = {**own, "config": {"blacklist": ["bob"], "rejected_msg": "bob is suspended"}}
    bob = consumer(
        "bob", {"basic-auth": {"username": "bob", "password": "bob-password"}}, suspended
    )
    route = [
        plugin("basic-auth", 101),
        plugin("consumer-restriction", 150, whitelist=["alice", "bob"]),
    ]
    await gw.apply(document(backend, route, [ALICE_BASIC, bob]))
    echoed(await client.get("/x", headers=basic("alice", "pa:ss w0rd")))
    refused = await client.get("/x", headers=basic("bob", "bob-password"))
    assert refused.status_code == 403
    assert refused.json() == {"message": "bob is suspended"}


async def test_a_consumers_own_limit_replaces_the_routes_after_jwt_auth(
    start: Start, backend: int
) -> None:
    gw, client, _ = await start()
    limit = {"name": "limit-count", "order": 210}
    tight = {**limit, "config": {"count": 1, "time_window": 3600, "rejected_code": 429}}
    alice = consumer("alice", {"jwt-auth": {"key": "alice-key", "secret": HS_SECRET}}, tight)
    route = [plugin("jwt-auth", 102), plugin("limit-count", 210, count=100, time_window=3600)]
    await gw.apply(document(backend, route, [alice, CAROL_RS]))
    alice_auth = {"Authorization": hs_token({"key": "alice-key"})}
    first = await client.get("/x", headers=alice_auth)
    assert first.status_code == 200 and first.headers["x-ratelimit-limit"] == "1"
    assert (await client.get("/x", headers=alice_auth)).status_code == 429
    carol_auth = {"Authorization": rs_token({"key": "carol-key"})}
    for _ in range(3):
        response = await client.get("/x", headers=carol_auth)
        assert response.status_code == 200 and response.headers["x-ratelimit-limit"] == "100"


# ------------------------------------------------------------------------------ key-auth

ALICE_KEY = "alice-api-key-0123456789"
ALICE_KEYED = consumer("alice", {"key-auth": {"key": ALICE_KEY}})


async def test_key_auth_hides_the_key_wherever_it_was_read(start: Start, backend: int) -> None:
    gw, client, seen = await start()
    config = {"header": "X-Api-Key", "query": "k", "hide_credentials": True}
    await gw.apply(document(backend, [plugin("key-auth", 100, **config)], [ALICE_KEYED]))
    # from the header: the header goes, the query (even one naming the argument) stays
    forwarded = echoed(
        await client.get("/x?k=other&a=1", headers={"X-Api-Key": ALICE_KEY, "X-Other": "kept"})
    )
    assert "x-api-key" not in forwarded["headers"] and forwarded["headers"]["x-other"] == "kept"
    assert forwarded["path"] == "/x?k=other&a=1"
    # from the query: every argument of that name goes, the others byte for byte, in order
    forwarded = echoed(await client.get(f"/x?b=%20two&k={ALICE_KEY}&a=1&a=0&k=again&c"))
    assert forwarded["path"] == "/x?b=%20two&a=1&a=0&c"
    forwarded = echoed(await client.get(f"/x?%6B={ALICE_KEY}&z=+y"))  # the name as decoded
    assert forwarded["path"] == "/x?z=+y"
    forwarded = echoed(await client.get(f"/x?k={ALICE_KEY}", headers={"X-Other": "kept"}))
    assert forwarded["path"] == "/x" and forwarded["headers"]["x-other"] == "kept"
    assert seen == ["alice"] * 4


async def test_key_auth_forwards_the_key_unless_told_to_hide_it(start: Start, backend: int) -> None:
    gw, client, seen = await start()
    config = {"header": "x-api-key", "query": "k", "hide_credentials": False}
    await gw.apply(document(backend, [plugin("key-auth", 100, **config)], [ALICE_KEYED]))
    forwarded = echoed(await client.get("/x?a=1", headers={"X-Api-Key": ALICE_KEY}))
    assert forwarded["headers"]["x-api-key"] == ALICE_KEY and forwarded["path"] == "/x?a=1"
    forwarded = echoed(await client.get(f"/x?a=1&k={ALICE_KEY}"))
    assert forwarded["path"] == f"/x?a=1&k={ALICE_KEY}"
    response = await client.get("/x?k=wrong-key-0123")
    assert (response.status_code, response.json()) == (
        401,
        {"message": "Invalid API key in request"},
    )
    assert seen == ["alice", "alice", None]


async def test_a_consumer_plugin_this_gateway_does_not_know_fails_closed(
    start: Start, backend: int
) -> None:
    """A consumer's plugin this gateway cannot run (named by a newer control plane) refuses
    that consumer's requests rather than being skipped."""
    gw, client, seen = await start()
    newer = {"name": "plugin-of-a-newer-release", "order": 50, "config": {}}
    alice = consumer("alice", {"key-auth": {"key": ALICE_KEY}}, newer)
    bob = consumer("bob", {"key-auth": {"key": "bob-api-key-0123456789"}})
    await gw.apply(document(backend, [plugin("key-auth", 100)], [alice, bob]))
    refused = await client.get("/x", headers={"apikey": ALICE_KEY})
    assert refused.status_code == 503
    assert refused.json() == {
        "error_msg": "503 plugin plugin-of-a-newer-release is not supported by this gateway"
    }
    echoed(await client.get("/x", headers={"apikey": "bob-api-key-0123456789"}))
    assert (await client.get("/x")).status_code == 401
    assert seen == ["alice", "bob", None]


# -------------------------------------------------------------------------------- uvloop


def test_authentication_on_uvloop(backend: int) -> None:
    """Production's loop: basic-auth's hashing leaves the loop for a thread and comes back."""

    async def scenario() -> None:
        gw = Gateway(options=GatewayOptions(secret_keys=(SERVER_KEY,)), now=clock)
        server = await serve(gw.handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        chain = [
            plugin("basic-auth", 101),
            plugin("consumer-restriction", 150, whitelist=["alice"]),
        ]
        try:
            await gw.apply(document(backend, chain, [ALICE_BASIC, BOB_BASIC]))
            async with Client(base_url=f"http://127.0.0.1:{port}", headers={"Host": HOST}) as c:
                ok, refused, wrong = await asyncio.gather(
                    c.get("/x", headers=basic("alice", "pa:ss w0rd")),
                    c.get("/x", headers=basic("bob", "bob-password")),
                    c.get("/x", headers=basic("alice", "nope")),
                )
                assert (ok.status_code, refused.status_code, wrong.status_code) == (200, 403, 401)
                await gw.apply(document(backend, [plugin("jwt-auth", 102)], [ALICE_JWT], 2))
                token = hs_token({"key": "alice-key"})
                echoed(await c.get("/x", headers={"Authorization": f"Bearer {token}"}))
        finally:
            server.close()
            await gw.close()

    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(scenario())
