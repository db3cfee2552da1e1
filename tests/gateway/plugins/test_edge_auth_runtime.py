"""edge-auth at run time, over real sockets: a token endpoint route (generate) and validated
routes (jwt-auth, key-auth) on a gateway on loopback in front of the echo backend, apps'
consumers as a snapshot carries them, the clock the test's."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import Any

import httpx
import jwt
import pytest

from portico.core.sealing import secret_box
from portico.gateway.plugins.base import SEALED_PREFIX
from portico.gateway.plugins.registry import PluginCheckError, check_plugin
from portico.gateway.snapshot import content_hash
from tests.gateway.test_pipeline import plugin, snapshot

SECRET = "s" * 32 + "-the-edge-signing-secret"
CLIENT_ID = "mobile-app-client"
CLIENT_SECRET = "c" * 40
SERVER_KEY = "server-key-0123456789abcdef0123456789abcdef"


def edge(**config: Any) -> dict[str, Any]:
    _, checked = check_plugin("edge-auth", config)
    return plugin("edge-auth", 105, **checked.model_dump(mode="json", exclude={"meta"}))


def app_consumer(
    name: str, client_id: str, client_secret: str, retiring: list[Any] | None = None
) -> dict[str, Any]:
    return {
        "id": f"c-{name}",
        "username": f"app-{name}",
        "credentials": {
            "edge-auth": {
                "client_id": client_id,
                "client_secret_hash": hashlib.sha256(client_secret.encode()).hexdigest(),
            }
        },
        "retiring": retiring or [],
        "app": {
            "id": f"a-{name}",
            "name": name,
            "developer_id": "dev-1",
            "developer_email": "dev@example.com",
            "product_ids": [],
        },
    }


def world(
    backend: int,
    token_plugin: dict[str, Any],
    validating: dict[str, Any],
    consumers: list[dict[str, Any]] | None = None,
    version: int = 1,
) -> dict[str, Any]:
    """Routes ``POST /oauth/token`` (``token_plugin``) and ``/*`` (``validating``)."""
    document = snapshot(backend, [validating], version=version)
    token_route = dict(
        document["routes"][0],
        id="rev:1",
        uri="/oauth/token",
        methods=["POST", "GET"],
        priority=10,
        plugins=[token_plugin],
    )
    document["routes"].append(token_route)
    document["consumers"] = consumers or [app_consumer("mobile", CLIENT_ID, CLIENT_SECRET)]
    document["content_hash"] = content_hash(document)
    return document


def basic(client_id: str, client_secret: str) -> dict[str, str]:
    raw = base64.b64encode(f"{client_id}:{client_secret}".encode()).decode()
    return {"Authorization": f"Basic {raw}"}


async def token(client: httpx.AsyncClient, **kwargs: Any) -> httpx.Response:
    return await client.post("/oauth/token", **kwargs)


async def test_client_credentials_give_a_jwt_that_opens_the_validated_routes(
    served: Any, backend: int
) -> None:
    gw, client, clock = await served()
    await gw.apply(
        world(
            backend,
            edge(mode="generate", signing_secret=SECRET, token_ttl=600),
            edge(mode="validate", signing_secret=SECRET),
        )
    )
    assert (await client.get("/orders")).status_code == 401
    issued = await token(client, headers=basic(CLIENT_ID, CLIENT_SECRET))
    assert issued.status_code == 200, issued.text
    assert issued.headers["cache-control"] == "no-store"
    body = issued.json()
    assert (body["token_type"], body["expires_in"]) == ("Bearer", 600)
    access = body["access_token"]
    header = json.loads(base64.urlsafe_b64decode(access.split(".")[0] + "=="))
    assert header == {"alg": "HS256", "typ": "JWT"}
    claims = jwt.decode(access, SECRET, algorithms=["HS256"], options={"verify_exp": False})
    assert claims["sub"] == CLIENT_ID
    assert claims["iat"] == int(clock.now) and claims["exp"] == claims["iat"] + 600
    assert len(claims["jti"]) == 32
    again = await token(client, headers=basic(CLIENT_ID, CLIENT_SECRET))
    assert (
        jwt.decode(
            again.json()["access_token"],
            SECRET,
            algorithms=["HS256"],
            options={"verify_exp": False},
        )["jti"]
        != claims["jti"]
    )

    opened = await client.get("/orders", headers={"Authorization": f"Bearer {access}"})
    assert opened.status_code == 200, opened.text
    assert opened.json()["headers"]["authorization"] == f"Bearer {access}"
    # a token from another issuer that writes its header otherwise, same key and algorithm
    foreign = jwt.encode(
        {"sub": CLIENT_ID, "exp": clock.now + 60},
        SECRET,
        algorithm="HS256",
        headers={"kid": "k1"},
    )
    assert (
        await client.get("/x", headers={"Authorization": f"Bearer {foreign}"})
    ).status_code == 200

    clock.now += 600  # exp reached
    expired = await client.get("/orders", headers={"Authorization": f"Bearer {access}"})
    assert expired.status_code == 401
    assert expired.headers["www-authenticate"] == 'Bearer error="invalid_token"'


@pytest.mark.parametrize(
    "authorization",
    [
        "{token}",  # no Bearer prefix
        "Basic {token}",
        "Bearer",
        "Bearer {forged}",
        "Bearer {other_key}",
        "Bearer {none_alg}",
        "Bearer {hs512}",
        "Bearer {no_exp}",
        "Bearer {unknown_sub}",
        "Bearer {tampered}",
    ],
)
async def test_tokens_it_refuses(served: Any, backend: int, authorization: str) -> None:
    gw, client, clock = await served()
    await gw.apply(
        world(
            backend,
            edge(mode="generate", signing_secret=SECRET),
            edge(mode="validate", signing_secret=SECRET),
        )
    )
    good = (await token(client, headers=basic(CLIENT_ID, CLIENT_SECRET))).json()["access_token"]
    head, payload, signature = good.split(".")
    claims = {"sub": CLIENT_ID, "exp": clock.now + 60}
    tokens = {
        "token": good,
        "forged": f"{head}.{payload}.{base64.urlsafe_b64encode(b'x' * 32).decode().rstrip('=')}",
        "other_key": jwt.encode(claims, "o" * 40, algorithm="HS256"),
        "none_alg": jwt.encode(claims, None, algorithm="none"),
        "hs512": jwt.encode(claims, SECRET * 2, algorithm="HS512"),
        "no_exp": jwt.encode({"sub": CLIENT_ID}, SECRET, algorithm="HS256"),
        "unknown_sub": jwt.encode({**claims, "sub": "nobody-knows-me"}, SECRET, algorithm="HS256"),
        "tampered": head
        + "."
        + base64.urlsafe_b64encode(json.dumps({**claims, "sub": "x"}).encode()).decode().rstrip("=")
        + "."
        + signature,
    }
    answer = await client.get("/orders", headers={"Authorization": authorization.format(**tokens)})
    assert answer.status_code == 401, answer.text
    assert "message" in answer.json()


async def test_an_unknown_client_and_a_wrong_secret_get_the_same_401(
    served: Any, backend: int
) -> None:
    gw, client, _ = await served()
    await gw.apply(
        world(
            backend,
            edge(mode="generate", signing_secret=SECRET),
            edge(mode="validate", signing_secret=SECRET),
        )
    )
    wrong = await token(client, headers=basic(CLIENT_ID, "w" * 40))
    unknown = await token(client, headers=basic("nobody-at-all", CLIENT_SECRET))
    for answer in (wrong, unknown):
        assert answer.status_code == 401
        assert answer.headers["www-authenticate"] == 'Basic realm="token"'
    assert wrong.content == unknown.content
    assert wrong.json() == {
        "error": "invalid_client",
        "error_description": "client authentication failed",
    }
    nothing = await token(client)
    assert (nothing.status_code, nothing.content) == (401, wrong.content)


async def test_form_fields_grant_types_and_methods(served: Any, backend: int) -> None:
    gw, client, _ = await served()
    await gw.apply(
        world(
            backend,
            edge(mode="generate", signing_secret=SECRET),
            edge(mode="validate", signing_secret=SECRET),
        )
    )
    form = {
        "grant_type": "client_credentials",
        "client_id": CLIENT_ID,
        "client_secret": CLIENT_SECRET,
    }
    assert (await token(client, data=form)).status_code == 200
    # Basic with the grant in the body
    with_body = await token(
        client, headers=basic(CLIENT_ID, CLIENT_SECRET), data={"grant_type": "client_credentials"}
    )
    assert with_body.status_code == 200
    password = await token(client, data={**form, "grant_type": "password"})
    assert (password.status_code, password.json()["error"]) == (400, "unsupported_grant_type")
    no_grant = await token(client, data={"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET})
    assert (no_grant.status_code, no_grant.json()["error"]) == (400, "invalid_request")
    as_json = await token(client, json=form)
    assert (as_json.status_code, as_json.json()["error"]) == (400, "invalid_request")
    twice = await token(
        client,
        content=b"grant_type=client_credentials&client_id=a&client_id=b",
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert twice.status_code == 400
    wrong_form = await token(client, data={**form, "client_secret": "nope"})
    assert wrong_form.status_code == 401
    get = await client.get("/oauth/token", headers=basic(CLIENT_ID, CLIENT_SECRET))
    assert (get.status_code, get.headers["allow"]) == (405, "POST")
    huge = await token(client, headers=basic(CLIENT_ID, CLIENT_SECRET), content=b"a=" + b"x" * 9000)
    assert huge.status_code == 413


async def test_key_auth_validation_takes_the_client_id_as_the_key(
    served: Any, backend: int
) -> None:
    gw, client, _ = await served()
    in_query = edge(
        mode="validate",
        validate_auth_type="key-auth",
        apikey={"source": "query", "key": "client"},
        hide_credentials=True,
    )
    document = world(
        backend,
        edge(
            mode="validate",
            validate_auth_type="key-auth",
            apikey={"source": "header", "key": "apikey"},
        ),
        edge(mode="validate", validate_auth_type="key-auth"),
    )
    query_route = dict(document["routes"][0], id="rev:2", uri="/q", priority=20, plugins=[in_query])
    document["routes"].append(query_route)
    document["content_hash"] = content_hash(document)
    await gw.apply(document)
    assert (await client.get("/orders")).json() == {"message": "Missing API key in request"}
    assert (await client.get("/orders", headers={"apikey": "not-a-client"})).status_code == 401
    ok = await client.get("/orders", headers={"apikey": CLIENT_ID})
    assert ok.status_code == 200
    hidden = await client.get(f"/q?client={CLIENT_ID}&page=2")
    assert hidden.status_code == 200
    assert hidden.json()["path"] == "/q?page=2"


async def test_retired_credentials_work_until_their_grace_ends(served: Any, backend: int) -> None:
    gw, client, clock = await served()
    old_hash = hashlib.sha256(b"o" * 40).hexdigest()
    retiring = [
        {
            "plugin": "edge-auth",
            "credential": {"client_id": "old-client-id", "client_secret_hash": old_hash},
            "expires_at": clock.now + 100,
        }
    ]
    await gw.apply(
        world(
            backend,
            edge(mode="generate", signing_secret=SECRET),
            edge(mode="validate", signing_secret=SECRET),
            [app_consumer("mobile", CLIENT_ID, CLIENT_SECRET, retiring)],
        )
    )
    old = await token(client, headers=basic("old-client-id", "o" * 40))
    assert old.status_code == 200
    access = old.json()["access_token"]
    assert (
        await client.get("/x", headers={"Authorization": f"Bearer {access}"})
    ).status_code == 200
    clock.now += 100
    assert (
        await client.get("/x", headers={"Authorization": f"Bearer {access}"})
    ).status_code == 401
    assert (await token(client, headers=basic("old-client-id", "o" * 40))).status_code == 401


async def test_a_sealed_secret_is_opened_with_the_node_s_server_secret(
    served: Any, backend: int
) -> None:
    sealed = SEALED_PREFIX + secret_box((SERVER_KEY,)).encrypt(SECRET)
    document = world(
        backend,
        edge(mode="generate", signing_secret=sealed),
        edge(mode="validate", signing_secret=sealed),
    )
    gw, client, _ = await served(secret_keys=(SERVER_KEY,))
    await gw.apply(document)
    issued = await token(client, headers=basic(CLIENT_ID, CLIENT_SECRET))
    assert issued.status_code == 200
    assert (
        jwt.decode(
            issued.json()["access_token"],
            SECRET,
            algorithms=["HS256"],
            options={"verify_exp": False},
        )["sub"]
        == CLIENT_ID
    )
    # a node without the server secret cannot sign or check: it fails closed
    blind, blind_client, _ = await served()
    await blind.apply(document)
    for answer in (
        await token(blind_client, headers=basic(CLIENT_ID, CLIENT_SECRET)),
        await blind_client.get("/x", headers={"Authorization": "Bearer a.b.c"}),
    ):
        assert answer.status_code == 503


def test_hmac_of_the_issued_token_is_the_configured_secret_s() -> None:
    from portico.gateway.plugins.edge_auth.tokens import Signer

    signer = Signer(SECRET.encode(), "HS256")
    issued = signer.issue({"sub": "x", "exp": 10})
    head, payload, signature = issued.split(".")
    expected = hmac.digest(SECRET.encode(), f"{head}.{payload}".encode(), "sha256")
    assert base64.urlsafe_b64encode(expected).decode().rstrip("=") == signature
    assert signer.verify(issued, 9.0) == {"sub": "x", "exp": 10}
    assert signer.verify(issued, 10.0) is None


@pytest.mark.parametrize(
    ("config", "reason"),
    [
        ({"mode": "generate"}, 'property "signing_secret" is required for mode generate'),
        (
            {"mode": "validate"},
            'property "signing_secret" is required for mode validate with jwt-auth',
        ),
        (
            {"mode": "generate", "signing_secret": "short"},
            "signing_secret must be at least 32 bytes for HS256 once resolved (it is 5): a "
            "shorter HMAC key is a guessable key",
        ),
        (
            {"mode": "generate", "signing_secret": SECRET, "algorithm": "HS512"},
            "signing_secret must be at least 64 bytes for HS512 once resolved",
        ),
        ({"mode": "generate", "signing_secret": "$env://1BAD"}, "'$env://1BAD' is not a valid"),
        ({"mode": "generate", "signing_secret": SECRET, "token_ttl": 0}, "$.token_ttl: must be"),
        ({"mode": "generate", "signing_secret": SECRET, "token_ttl": 86401}, "$.token_ttl: must"),
        ({"mode": "issue"}, "$.mode: must be one of"),
        ({"mode": "validate", "validate_auth_type": "basic-auth"}, "$.validate_auth_type"),
        (
            {"mode": "validate", "validate_auth_type": "key-auth", "apikey": {"source": "cookie"}},
            "$.apikey.source",
        ),
    ],
)
def test_configurations_it_refuses(config: dict[str, Any], reason: str) -> None:
    with pytest.raises(PluginCheckError) as refused:
        check_plugin("edge-auth", config)
    assert refused.value.reason.startswith(reason), refused.value.reason


def test_configurations_it_takes() -> None:
    for config in (
        {"mode": "generate", "signing_secret": "$env://EDGE_SECRET", "token_ttl": 86400},
        {"mode": "validate", "signing_secret": "$secret://edge.signing-key"},
        {"mode": "validate", "validate_auth_type": "key-auth"},
        {"mode": "generate", "signing_secret": SECRET, "token_ttl": 1},
    ):
        check_plugin("edge-auth", config)


async def test_the_token_endpoint_names_the_app_for_analytics(served: Any, backend: int) -> None:
    gw, client, _ = await served()
    seen: list[str | None] = []
    gw.observers.append(
        lambda env, ctx: seen.append(
            ctx.consumer.app.name if ctx.consumer and ctx.consumer.app else None
        )
    )
    await gw.apply(
        world(
            backend,
            edge(mode="generate", signing_secret=SECRET),
            edge(mode="validate", signing_secret=SECRET),
        )
    )
    access = (await token(client, headers=basic(CLIENT_ID, CLIENT_SECRET))).json()["access_token"]
    await client.get("/x", headers={"Authorization": f"Bearer {access}"})
    await client.get("/x")
    assert seen == ["mobile", "mobile", None]
