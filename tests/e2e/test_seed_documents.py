"""Moving from the seed product, tried as a new user would, through a real ``portico serve``
and its embedded gateway in front of a real backend: OpenAPI documents written for the seed
product's gateway (``tests/e2e/seed_documents/``) import unchanged (only the placeholder its
comments name is filled in), deploy, and answer as they did there.

- ``edge_tokens.yaml``: root ``request-id`` and ``cors``, ``POST /oauth/token`` with
  ``helix-auth`` generate, the other operations with ``helix-auth`` validate (jwt-auth), one
  of them with ``proxy-rewrite`` + ``xml-to-json`` towards a SOAP service: no token → 401;
  client credentials → a JWT with the configured ``expires_in``; the token → 200, and JSON
  converted from the SOAP service's XML; a forged token, a wrong secret, a token without
  ``Bearer `` → 401.
- ``product_quotas.yaml``: ``helix-auth`` validate (key-auth, header ``apikey``) and
  ``api-product-enforcer``: two apps on two products, each metered against its own, and
  named in analytics.
"""

from __future__ import annotations

import base64
import re
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest

from tests.conftest import DatabaseTemplate
from tests.e2e.test_gateway import Echo
from tests.support.management_calls import created
from tests.support.portico_process import OWNER, OWNER_PASSWORD, bootstrapped_serve, wait_for
from tests.support.soapservice import QUOTES, soap_answer

pytestmark = pytest.mark.e2e

DOCUMENTS = Path(__file__).with_name("seed_documents")
HOST = "edge.shop.example.com"
SIGNING_SECRET = "edge-signing-secret-of-the-shop-" + "k" * 16
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")


class EchoAndSoap(Echo):
    """The shop's backend: the quote service's SOAP endpoint at ``POST /soap`` (the SOAP 1.1
    service of the gateway's own tests, which parses each envelope), an echo elsewhere."""

    def do_POST(self) -> None:  # noqa: N802  (http.server's name)
        if self.path != "/soap":
            super().do_POST()
            return
        length = int(self.headers.get("content-length") or 0)
        headers = {k.lower(): v for k, v in self.headers.items()}
        status, answer = soap_answer(headers, self.rfile.read(length))
        self.send_response(status)
        self.send_header("content-type", "text/xml; charset=utf-8")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


@pytest.fixture(scope="module")
def backend() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), EchoAndSoap)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def shop(
    db_template: DatabaseTemplate, tmp_path_factory: pytest.TempPathFactory, backend: int
) -> Iterator[dict[str, Any]]:
    """One ``portico serve`` for the module: an organisation's control client, an
    environment serving ``HOST`` with an upstream to the backend, and a gateway client."""
    tmp_path = tmp_path_factory.mktemp("seed-documents")
    url = db_template.new_url(tmp_path)
    with bootstrapped_serve(url, tmp_path, PORTICO_TELEMETRY_INTERVAL_SECONDS="0.3") as (env, _):
        cp = httpx.Client(base_url=f"http://{env['PORTICO_LISTEN']}", timeout=10)
        login = {"email": OWNER, "password": OWNER_PASSWORD}
        cp.headers["Authorization"] = (
            f"Bearer {cp.post('/api/auth/login', json=login).json()['token']}"
        )
        org = cp.get("/api/me").json()["orgs"][0]["id"]
        cp.base_url = httpx.URL(f"http://{env['PORTICO_LISTEN']}/api/orgs/{org}")
        environment = created(cp.post("/envs", json={"name": "shop", "gatewayHosts": [HOST]}))
        node = {"host": "127.0.0.1", "port": backend}
        upstream = created(
            cp.post(
                f"/envs/{environment['id']}/upstreams",
                json={"name": "echo", "specification": {"nodes": [node]}},
            )
        )
        gw = httpx.Client(
            base_url=f"http://{env['PORTICO_GATEWAY_LISTEN']}", headers={"Host": HOST}, timeout=10
        )
        developer = created(
            cp.post(
                "/developers",
                json={"firstName": "Ada", "lastName": "Lovelace", "email": "ada@example.com"},
            )
        )
        yield {
            "cp": cp,
            "gw": gw,
            "env": environment["id"],
            "upstream": upstream["id"],
            "developer": developer["id"],
        }
        cp.close()
        gw.close()
    db_template.drop(url)


def import_and_deploy(shop: dict[str, Any], text: str) -> dict[str, Any]:
    """The document imported as it is (JSON body, the YAML text), bound, deployed."""
    cp = shop["cp"]
    imported = cp.post("/apis/from-spec", json={"spec": text})
    assert imported.status_code == 201, imported.text
    body = imported.json()
    revision = f"/apis/{body['api']['id']}/revisions/{body['revision']['id']}"
    binding = {"environmentId": shop["env"], "upstreamId": shop["upstream"]}
    created(cp.patch(revision + "/upstream-bindings/add", json={"environmentUpstreams": [binding]}))
    created(cp.post(revision + "/deploy", json={"environmentId": shop["env"]}))
    return dict(body)


def app(shop: dict[str, Any], name: str, products: dict[str, int]) -> dict[str, str]:
    made = created(
        shop["cp"].post(
            f"/developers/{shop['developer']}/envs/{shop['env']}/apps",
            json={"name": name, "products": products, "plugins": {"edge-auth": {}}},
        )
    )
    return dict(made["generatedCredentials"]["edge-auth"])


def basic(client_id: str, client_secret: str) -> dict[str, str]:
    pair = f"{client_id}:{client_secret}".encode()
    return {"Authorization": "Basic " + base64.b64encode(pair).decode()}


def test_edge_tokens_document_imports_unchanged_and_answers_as_the_seed_did(
    shop: dict[str, Any],
) -> None:
    cp, gw = shop["cp"], shop["gw"]
    created(cp.post("/secrets", json={"name": "edge-signing-key", "value": SIGNING_SECRET}))
    text = (DOCUMENTS / "edge_tokens.yaml").read_text()
    body = import_and_deploy(shop, text.replace("__SIGNING_SECRET__", "$secret://edge-signing-key"))
    assert [r["to"] for r in body["renamedPlugins"]] == ["edge-auth"] * 4
    assert body["droppedKeys"] == [
        "/x-helix-gateway/plugins/cors/_comment",
        "/paths/~1oauth~1token/post/x-helix-gateway/plugins/helix-auth/_meta",
    ]
    credentials = app(shop, "mobile", {})

    # the deploy, then the app, reach the node with the next snapshots
    mobile = basic(credentials["client_id"], credentials["client_secret"])
    wait_for(lambda: gw.post("/oauth/token", headers=mobile).status_code == 200)
    assert gw.get("/orders").status_code == 401  # no token
    issued = gw.post("/oauth/token", headers=mobile)
    assert issued.status_code == 200, issued.text
    grant = issued.json()
    assert (grant["token_type"], grant["expires_in"]) == ("Bearer", 900)
    token = grant["access_token"]
    claims = jwt.decode(token, SIGNING_SECRET, algorithms=["HS256"])
    assert claims["sub"] == credentials["client_id"]
    assert claims["exp"] - claims["iat"] == 900 and claims["jti"]
    form = {
        "grant_type": "client_credentials",
        "client_id": credentials["client_id"],
        "client_secret": credentials["client_secret"],
    }
    assert gw.post("/oauth/token", data=form).status_code == 200

    answer = gw.get(
        "/orders/7", headers={"Authorization": f"Bearer {token}", "Origin": "https://web.example"}
    )
    assert answer.status_code == 200, answer.text
    request_id = answer.headers["x-request-id"]
    assert UUID.fullmatch(request_id)
    assert answer.json()["headers"]["x-request-id"] == request_id  # the backend's is the same
    assert answer.json()["path"] == "/orders/7"
    assert answer.headers["access-control-allow-origin"] == "*"

    # the SOAP operation: the client speaks JSON, the quote service SOAP 1.1
    bearer = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    call = {"GetQuote": {"@xmlns": QUOTES, "symbol": "ACME"}}
    quote = gw.post("/quotes", json=call, headers=bearer)
    assert quote.status_code == 200, quote.text
    assert quote.headers["content-type"].startswith("application/json")
    converted = quote.json()["GetQuoteResponse"]["Quote"]
    assert converted["Symbol"] == "ACME" and converted["@currency"] == "EUR"
    assert gw.post("/quotes", json=call).status_code == 401  # the same edge tokens

    head, payload, _ = token.split(".")
    forged = f"{head}.{payload}.{base64.urlsafe_b64encode(b'f' * 32).decode().rstrip('=')}"
    other_key = jwt.encode(
        {"sub": credentials["client_id"], "exp": claims["exp"]}, "x" * 40, algorithm="HS256"
    )
    for refused in (
        gw.get("/orders", headers={"Authorization": f"Bearer {forged}"}),
        gw.get("/orders", headers={"Authorization": f"Bearer {other_key}"}),
        gw.get("/orders", headers={"Authorization": token}),  # no "Bearer "
        gw.post("/oauth/token", headers=basic(credentials["client_id"], "wrong-" + "s" * 40)),
        gw.post("/oauth/token", headers=basic("unknown-client-id", credentials["client_secret"])),
    ):
        assert refused.status_code == 401, refused.text
        assert UUID.fullmatch(refused.headers["x-request-id"])  # refusals carry their id too


def per_month(limit: int) -> dict[str, Any]:
    """A month's window: the node's clock is the wall clock, and a minute's window could
    end between two of the calls below."""
    return {"limit": limit, "interval": 1, "interval_unit": "month"}


def test_product_quotas_document_meters_two_apps_on_two_products(shop: dict[str, Any]) -> None:
    cp, gw = shop["cp"], shop["gw"]
    body = import_and_deploy(shop, (DOCUMENTS / "product_quotas.yaml").read_text())
    assert [r["to"] for r in body["renamedPlugins"]] == ["edge-auth", "product-quota"]
    api_id = body["api"]["id"]
    products = {}
    for name, limit in (("small", 5), ("large", 1000)):
        product = created(
            cp.post(
                "/products",
                json={
                    "name": name,
                    "apiIds": [api_id],
                    "quota": per_month(limit),
                    "quota_key_scope": "app",
                },
            )
        )
        created(cp.post(f"/envs/{shop['env']}/products/{product['id']}/deploy"))
        products[name] = product["id"]
    keys = {name: app(shop, f"{name}-app", {products[name]: 1})["client_id"] for name in products}

    wait_for(lambda: gw.get("/inventory", headers={"apikey": keys["large"]}).status_code == 200)
    assert gw.get("/inventory").status_code == 401
    assert gw.get("/inventory", headers={"apikey": "not-a-client-id"}).status_code == 401
    small = [gw.get("/inventory", headers={"apikey": keys["small"]}) for _ in range(6)]
    assert [answer.status_code for answer in small] == [200] * 5 + [429]
    assert small[-1].content == b'{"error":"quota exceeded"}'
    assert "retry-after" not in small[-1].headers
    large = [gw.get("/inventory", headers={"apikey": keys["large"]}).status_code for _ in range(8)]
    assert large == [200] * 8

    now = datetime.now(UTC)
    query = {
        "startTime": (now - timedelta(hours=1)).isoformat(),
        "endTime": (now + timedelta(minutes=2)).isoformat(),
        "dimensions": ["app_name", "product_name", "response_status_code"],
        "filters": [{"column": "api_name", "operator": "EQ", "value": ["Edge Inventory"]}],
        "excludeTimeUnit": True,
    }

    def counts() -> dict[tuple[Any, ...], int]:
        answer = cp.post("/analytics/metrics/requests-count", json=query)
        assert answer.status_code == 200, answer.text
        return {
            tuple(row["dimensions"].values()): row["value"]
            for row in answer.json()["groupedResults"]
        }

    wait_for(
        lambda: (
            counts().get(("small-app", "small", 429)) == 1
            and counts().get(("large-app", "large", 200), 0) >= 9
        ),
        timeout=15,
    )
    assert counts()[("small-app", "small", 200)] == 5
