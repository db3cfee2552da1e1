"""The marketplace admin API as a new user meets it: real `portico` processes, a real SMTP
server, real sockets (issue 5's "done when").

`portico bootstrap` + `portico serve` (mailer polling fast, mail to an aiosmtpd server on
loopback): token issuance refused (503) until `portico admin-api set-web-api-key`; then sign
in as the bootstrap administrator, list users, register on the portal, find the registration
pending, approve it, receive the activation email, read the approval's audit event, export
the events as CSV. And the API describes and routes exactly the 106 endpoints built so far:
the seed's 103 that issue 5, the catalogue issue and issue 18 deliver (authentication, users
and roles, events, notifications, jobs, source types, gateway connections and imports, the
API and product catalogue, content and moderation, publishing, feature management,
governance, API health, organisations, members, teams, partner approvals, organisation
roles and subscriptions), and Portico's three page additions.
"""

from __future__ import annotations

import csv
import io
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest

from tests.e2e.test_gateway import wait_for
from tests.support.portico_process import OWNER, OWNER_PASSWORD, PORTICO, bootstrapped_serve
from tests.support.smtpserver import SmtpServer

pytestmark = pytest.mark.e2e

ADMIN_EMAIL = OWNER
ADMIN_PASSWORD = OWNER_PASSWORD
WEB_API_KEY = "AIzaSy-e2e-web-api-key-0123456789"

#: issue 5's endpoints as /openapi.json describes them (it does not describe itself)
DESCRIBED = {
    # auth 2
    ("POST", "/auth/token"),
    ("POST", "/auth/token/refresh"),
    # permissions and roles 3
    ("GET", "/permissions"),
    ("GET", "/roles"),
    ("GET", "/roles/{user_role}"),
    # users 9
    ("GET", "/users"),
    ("GET", "/users/pending"),
    ("GET", "/users/{user}"),
    ("POST", "/users/{user}/approve"),
    ("POST", "/users/{user}/reject"),
    ("POST", "/users/{user}/block"),
    ("POST", "/users/{user}/unblock"),
    ("DELETE", "/users/{user}/firebase-identity"),
    ("GET", "/users/{user}/roles"),
    # events 5
    ("GET", "/events"),
    ("GET", "/events/{event}"),
    ("GET", "/events/export"),
    ("GET", "/events/stats"),
    ("GET", "/events/types"),
    # notifications 3
    ("GET", "/notifications"),
    ("GET", "/notifications/summary"),
    ("GET", "/notifications/{notification}"),
    # jobs 3
    ("GET", "/jobs"),
    ("GET", "/jobs/{job}"),
    ("DELETE", "/jobs/{job}"),
    # source types 2
    ("GET", "/sources"),
    ("GET", "/sources/{source}"),
    # gateway connections 7
    ("GET", "/gateways/connections"),
    ("POST", "/gateways/connections"),
    ("POST", "/gateways/connections/test"),
    ("GET", "/gateways/connections/{gateway_connection}"),
    ("PUT", "/gateways/connections/{gateway_connection}"),
    ("DELETE", "/gateways/connections/{gateway_connection}"),
    ("POST", "/gateways/connections/{gateway_connection}/test"),
    # gateway imports 9
    ("GET", "/gateways/connections/{gateway_connection}/apis"),
    ("POST", "/gateways/connections/{gateway_connection}/apis/import"),
    ("POST", "/gateways/connections/{gateway_connection}/apis/import/all"),
    ("POST", "/gateways/connections/{gateway_connection}/jobs"),
    ("GET", "/gateways/connections/{gateway_connection}/products"),
    ("POST", "/gateways/connections/{gateway_connection}/products/import"),
    ("POST", "/gateways/connections/{gateway_connection}/products/import/all"),
    ("GET", "/gateways/connections/{gateway_connection}/remote/apis"),
    ("GET", "/gateways/connections/{gateway_connection}/remote/products"),
    # content and moderation 7
    ("GET", "/content/moderated"),
    ("GET", "/content/{bundle}"),
    ("GET", "/content/{bundle}/{node}"),
    ("POST", "/content/{bundle}/{node}/publish"),
    ("POST", "/content/{bundle}/{node}/unpublish"),
    ("GET", "/content/{bundle}/{node}/transitions"),
    ("POST", "/content/{bundle}/{node}/transitions/{transition}"),
    # publishing and syndication 4
    ("GET", "/publishing/portals"),
    ("POST", "/publishing/portals"),
    ("POST", "/publishing/transitions"),
    ("POST", "/publishing/visibility"),
    # API and product catalogue 10
    ("GET", "/apis"),
    ("POST", "/apis"),
    ("GET", "/apis/{node}"),
    ("PATCH", "/apis/{node}"),
    ("DELETE", "/apis/{node}"),
    ("GET", "/products"),
    ("POST", "/products"),
    ("GET", "/products/{node}"),
    ("PATCH", "/products/{node}"),
    ("DELETE", "/products/{node}"),
    # feature management 6
    ("GET", "/features"),
    ("POST", "/features/sync"),
    ("GET", "/features/{feature_key}"),
    ("PATCH", "/features/{feature_key}"),
    ("GET", "/organisations/{gid}/features"),
    ("PATCH", "/organisations/{gid}/features/{feature_key}"),
    # governance 3
    ("GET", "/governance"),
    ("GET", "/governance/{node}"),
    ("GET", "/governance/{node}/history"),
    # API health 3
    ("GET", "/health"),
    ("GET", "/health/{node}"),
    ("POST", "/health/{node}/check"),
    # organisations, members, teams 7
    ("GET", "/organisations"),
    ("GET", "/organisations/{group}"),
    ("GET", "/organisations/{group}/members"),
    ("POST", "/organisations/{group}/members/invite"),
    ("DELETE", "/organisations/{group}/members/{relationship}"),
    ("GET", "/organisations/{group}/teams"),
    ("GET", "/organisations/{group}/teams/{team}/members"),
    # partner approvals 3
    ("GET", "/organisations/{group}/approvals"),
    ("POST", "/organisations/{group}/approvals/{relationship}/approve"),
    ("POST", "/organisations/{group}/approvals/{relationship}/reject"),
    # organisation roles and permissions 10
    ("GET", "/organisations/permissions"),
    ("GET", "/organisations/{group}/roles"),
    ("POST", "/organisations/{group}/roles"),
    ("GET", "/organisations/{group}/roles/{role}"),
    ("PATCH", "/organisations/{group}/roles/{role}"),
    ("DELETE", "/organisations/{group}/roles/{role}"),
    ("GET", "/organisations/{group}/members/{relationship}/roles"),
    ("PATCH", "/organisations/{group}/members/{relationship}/roles"),
    ("POST", "/organisations/{group}/members/{relationship}/custom-roles/{role}"),
    ("DELETE", "/organisations/{group}/members/{relationship}/custom-roles/{role}"),
    # subscriptions 6
    ("GET", "/subscriptions"),
    ("GET", "/subscriptions/{subscription}"),
    ("GET", "/subscriptions/{subscription}/analytics"),
    ("POST", "/subscriptions/{subscription}/approve"),
    ("POST", "/subscriptions/{subscription}/reject"),
    ("POST", "/subscriptions/{subscription}/revoke"),
    # Portico's additions, not among the seed's 103: pages are written here 3
    ("POST", "/content/page"),
    ("PATCH", "/content/page/{node}"),
    ("DELETE", "/content/page/{node}"),
}
OPENAPI = ("GET", "/openapi.json")
#: a connection whose check fails (nothing answers on port 9): creating it is refused (400,
#: nothing saved), testing it answers ``ok: false``
UNREACHABLE = {
    "name": "e2e",
    "source": "openapi",
    "config": {"urls": ["http://127.0.0.1:9/openapi.json"]},
}
CONNECTION_BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("POST", "/gateways/connections"): UNREACHABLE,
    ("POST", "/gateways/connections/test"): {
        "source": UNREACHABLE["source"],
        "config": UNREACHABLE["config"],
    },
    ("PUT", "/gateways/connections/{gateway_connection}"): UNREACHABLE,
    # imports name what to import (the connection does not exist: 404 all the same)
    ("POST", "/gateways/connections/{gateway_connection}/apis/import"): {"api_id": "x"},
    ("POST", "/gateways/connections/{gateway_connection}/jobs"): {"kind": "import-apis"},
    ("POST", "/gateways/connections/{gateway_connection}/products/import"): {"product_id": "x"},
}
#: bodies the content and publishing endpoints accept: a page is created (201); the bulk
#: endpoints name a node that does not exist, which their report lists as failed (200)
NOWHERE = str(uuid.uuid4())
CONTENT_BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("POST", "/content/page"): {"title": "e2e", "body": "A page."},
    ("PATCH", "/content/page/{node}"): {"title": "e2e"},
    ("POST", "/publishing/portals"): {"nodes": [NOWHERE], "organisations": [], "operation": "add"},
    ("POST", "/publishing/transitions"): {"nodes": [NOWHERE], "transition": "publish"},
    ("POST", "/publishing/visibility"): {"nodes": [NOWHERE], "visibility": "public"},
    # the catalogue: nodes made (201), and empty changes of nodes that do not exist (404)
    ("POST", "/apis"): {"title": "e2e"},
    # features: valid changes of a feature (and an organisation) that do not exist (404)
    ("PATCH", "/features/{feature_key}"): {"enabled": True},
    ("PATCH", "/organisations/{gid}/features/{feature_key}"): {"enabled": True},
    ("POST", "/products"): {"title": "e2e"},
    ("PATCH", "/apis/{node}"): {},
    ("PATCH", "/products/{node}"): {},
}
CREATED = {("POST", "/apis"), ("POST", "/products"), ("POST", "/content/page")}
#: valid bodies of the organisation endpoints (the organisation does not exist: 404)
ORGANISATION_BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("POST", "/organisations/{group}/members/invite"): {"emails": ["e2e@example.com"]},
    ("POST", "/organisations/{group}/roles"): {"label": "e2e"},
    ("PATCH", "/organisations/{group}/roles/{role}"): {},
    ("PATCH", "/organisations/{group}/members/{relationship}/roles"): {"roles": []},
}


@dataclass(frozen=True)
class Portico:
    env: dict[str, str]
    control: str
    log: Path

    @property
    def admin_api(self) -> str:
        return f"{self.control}/api/admin/v1"


@pytest.fixture
def smtp() -> Iterator[SmtpServer]:
    with SmtpServer() as server:
        yield server


@pytest.fixture
def portico(database_url: str, tmp_path: Path, smtp: SmtpServer) -> Iterator[Portico]:
    settings = {
        "PORTICO_SMTP_URL": smtp.url,
        "PORTICO_MAIL_FROM": "portal@example.com",
        "PORTICO_WORKER_POLL_SECONDS": "0.2",
    }
    with bootstrapped_serve(database_url, tmp_path, **settings) as (env, _):
        yield Portico(
            env=env, control=f"http://{env['PORTICO_LISTEN']}", log=tmp_path / "serve.log"
        )


def set_web_api_key(portico: Portico, key: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PORTICO, "admin-api", "set-web-api-key", "--from-stdin"],
        env=portico.env,
        input=key + "\n",
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_new_administrator_approves_a_registration_and_audits_it(
    portico: Portico, smtp: SmtpServer
) -> None:
    api = httpx.Client(base_url=portico.admin_api, timeout=15)
    credentials = {"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD}

    # no web API key yet: no tokens, for anyone
    disabled = api.post("/auth/token", json=credentials)
    assert disabled.status_code == 503, disabled.text
    assert disabled.headers["content-type"].startswith("application/problem+json")
    assert disabled.json()["type"] == "/problems/token-issuance-disabled"
    assert "set-web-api-key" in disabled.json()["detail"]

    enabled = set_web_api_key(portico, WEB_API_KEY)
    assert enabled.returncode == 0, enabled.stderr + enabled.stdout
    assert WEB_API_KEY not in enabled.stdout + enabled.stderr

    signed_in = api.post("/auth/token", json=credentials)
    assert signed_in.status_code == 200, signed_in.text
    assert signed_in.headers["cache-control"] == "no-store"
    tokens = signed_in.json()["data"]
    assert tokens["token_type"] == "Bearer"
    assert tokens["expires_in"] > 0
    assert tokens["refresh_token"]
    # the ID token verifies with the public JWKS alone
    jwks = httpx.get(f"{portico.control}/api/portal/v1/.well-known/jwks.json", timeout=5)
    assert jwks.status_code == 200
    kid = jwt.get_unverified_header(tokens["id_token"])["kid"]
    key = jwt.PyJWKSet.from_dict(jwks.json())[kid]
    claims = jwt.decode(
        tokens["id_token"], key, algorithms=["ES256"], audience="portico-marketplace"
    )
    assert claims["email"] == ADMIN_EMAIL
    api.headers["Authorization"] = f"Bearer {tokens['id_token']}"

    users = api.get("/users")
    assert users.status_code == 200, users.text
    listed = users.json()
    assert [u["email"] for u in listed["data"]] == [ADMIN_EMAIL]
    assert listed["meta"]["count"] == 1
    admin_id = listed["data"][0]["id"]

    # someone registers on the portal: a pending account
    registered = httpx.post(
        f"{portico.control}/api/portal/v1/registrations",
        json={
            "email": "Ada@Example.com",
            "password": "analytical-engine-1843",
            "display_name": "Ada Lovelace",
        },
        timeout=15,
    )
    assert registered.status_code == 202, registered.text
    assert registered.json() == {"data": {"status": "pending"}}

    pending = api.get("/users/pending")
    assert pending.status_code == 200, pending.text
    (applicant,) = pending.json()["data"]
    assert applicant["email"] == "ada@example.com"
    assert applicant["status"] == "pending"
    assert smtp.messages == []  # registering sends nothing; approving does

    request_id = f"e2e-approve-{uuid.uuid4().hex[:8]}"
    approved = api.post(f"/users/{applicant['id']}/approve", headers={"X-Request-Id": request_id})
    assert approved.status_code == 200, approved.text
    assert approved.json()["data"]["status"] == "active"
    assert approved.headers["x-request-id"] == request_id
    assert api.get("/users/pending").json()["data"] == []

    # the worker delivers the activation email over SMTP
    wait_for(lambda: len(smtp.messages) >= 1, timeout=15)
    assert smtp.recipients == [["ada@example.com"]]
    (message,) = smtp.messages
    assert message["To"] == "ada@example.com"
    assert message["From"] == "portal@example.com"
    assert message["Subject"] == "Your developer portal account is active"
    body = message.get_body(preferencelist=("plain",))
    assert body is not None
    text = body.get_content()
    assert "Hello Ada Lovelace" in text
    assert f"{portico.control}/portal/sign-in" in text

    # the approval is an audit event: who, what, from where, before and after
    events = api.get("/events", params={"filter[operation]": "user.approve"})
    assert events.status_code == 200, events.text
    (event,) = events.json()["data"]
    assert event["operation"] == "user.approve"
    assert event["entity_type"] == "user"
    assert event["entity_id"] == applicant["id"]
    assert event["module"] == "user"
    assert event["actor"] == {"id": admin_id, "email": ADMIN_EMAIL, "kind": "user"}
    assert event["ip"] == "127.0.0.1"
    assert event["request_id"] == request_id
    assert event["before"]["status"] == "pending"
    assert event["after"]["status"] == "active"
    assert "ada@example.com" in event["summary"]
    one = api.get(f"/events/{event['id']}")
    assert one.status_code == 200
    assert one.json()["data"] == event

    # ... and a row of the CSV export
    exported = api.get("/events/export", params={"format": "csv"})
    assert exported.status_code == 200, exported.text
    assert exported.headers["content-type"].startswith("text/csv")
    assert exported.headers["content-disposition"].startswith("attachment; filename=")
    rows = list(csv.DictReader(io.StringIO(exported.text)))
    approvals = [r for r in rows if r["operation"] == "user.approve"]
    assert len(approvals) == 1
    row = approvals[0]
    assert row["id"] == event["id"]
    assert row["entity_id"] == applicant["id"]
    assert row["actor_email"] == ADMIN_EMAIL
    assert row["request_id"] == request_id
    operations = {r["operation"] for r in rows}
    # the registration, the key being set and the sign-in were recorded too
    assert {"user.register", "site_setting.update", "auth.sign_in"} <= operations


def test_the_admin_api_describes_and_routes_exactly_the_endpoints_built(
    portico: Portico,
) -> None:
    assert set_web_api_key(portico, WEB_API_KEY).returncode == 0
    api = httpx.Client(base_url=portico.admin_api, timeout=15)
    assert api.get("/openapi.json").status_code == 401  # behind the baseline permission
    tokens = api.post("/auth/token", json={"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD})
    assert tokens.status_code == 200, tokens.text
    admin = {"Authorization": f"Bearer {tokens.json()['data']['id_token']}"}

    document = api.get("/openapi.json", headers=admin)
    assert document.status_code == 200, document.text
    assert document.headers["content-type"] == "application/json"
    description = document.json()
    assert "data" not in description  # unwrapped
    assert description["openapi"].startswith("3.1")
    assert description["servers"] == [{"url": "/api/admin/v1"}]
    described = {
        (method.upper(), path)
        for path, operations in description["paths"].items()
        for method in operations
        if method in ("get", "post", "put", "patch", "delete")
    }
    assert described == DESCRIBED
    assert len(described | {OPENAPI}) == 106  # the seed's 103, and 3 additions

    # `portico bootstrap` registered every installed module's feature, all on
    features = api.get("/features", headers=admin)
    assert features.status_code == 200, features.text
    registered = features.json()["data"]
    assert {"admin_api", "features", "content", "user"} <= {f["key"] for f in registered}
    assert all(f["enabled"] and f["installed"] for f in registered)

    # each one is routed: without a token, a problem from the endpoint itself, never the
    # router's "no such endpoint" (404) or "method not allowed" (405)
    public = {("POST", "/auth/token"), ("POST", "/auth/token/refresh")}
    for method, path in sorted(described):
        answer = api.request(method, concrete(path), json={} if method == "POST" else None)
        assert answer.headers["content-type"].startswith("application/problem+json"), path
        expected = 400 if (method, path) in public else 401  # an empty body; no token
        assert answer.status_code == expected, (method, path, answer.text)
        declared = description["paths"][path][method.lower()]["responses"][str(expected)]
        assert "application/problem+json" in declared["content"], (method, path)
    # and with the administrator's token, each reaches its handler
    for method, path in sorted(described - public):
        reasoned = path.endswith(("/reject", "/revoke"))
        body: dict[str, Any] | None = {"reason": "e2e"} if reasoned else None
        body = {**CONNECTION_BODIES, **CONTENT_BODIES, **ORGANISATION_BODIES}.get(
            (method, path), body
        )
        answer = api.request(method, concrete(path), headers=admin, json=body)
        if (method, path) == ("POST", "/gateways/connections"):  # its check failed
            assert answer.status_code == 400, answer.text
            assert answer.json()["type"] == "/problems/connection-check-failed"
        elif (method, path) in CREATED:
            assert answer.status_code == 201, (method, path, answer.text)
        elif "{" in path and path != "/roles/{user_role}":  # an id that names nothing
            assert answer.status_code == 404, (method, path, answer.text)
            assert answer.json()["detail"] != "no such endpoint", (method, path)
        else:
            assert answer.status_code == 200, (method, path, answer.text)
        # ... and each answer is one the document declares
        assert str(answer.status_code) in description["paths"][path][method.lower()]["responses"]
    # a method a path does not have: 405, with every method it does have
    not_allowed = api.request("PUT", concrete("/jobs/{job}"), headers=admin)
    assert not_allowed.status_code == 405
    assert not_allowed.headers["allow"] == "DELETE, GET"


def concrete(path: str) -> str:
    """The path with its parameter filled: a real role, any UUID for the other ids."""
    some_id = str(uuid.uuid4())
    return path.format(
        user_role="administrator",
        user=some_id,
        event=some_id,
        notification=some_id,
        job=some_id,
        source="no-such-source",
        gateway_connection=some_id,
        bundle="no-such-bundle",
        node=some_id,
        transition="publish",
        feature_key="no-such-feature",
        gid=some_id,
        group=some_id,
        relationship=some_id,
        team=some_id,
        role=some_id,
        subscription=some_id,
    )
