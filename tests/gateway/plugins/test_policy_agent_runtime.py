"""policy-agent on real traffic: a Gateway on loopback asking a real Rego engine for each
decision. No OPA binary is installable from PyPI, Debian or npm, so the engine is rego-cpp
(PyPI ``regopy``) behind ``tests.support.opaserver``, a server process speaking OPA's REST
data API (``POST /v1/data/<path>`` → ``{"result": ...}``); the policies are real Rego."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.gateway.plugins.test_auth_runtime import consumer, document, echoed
from tests.gateway.test_pipeline import plugin
from tests.support.ldapserver import self_signed
from tests.support.opaserver import OpaServer
from tests.support.ports import free_port

LOOPBACK = ("127.0.0.0/8",)

AUTHZ = """
package portico.authz
import rego.v1

default allow := false

admin if startswith(input.request.path, "/admin")

allow if {
    input.request.method == "GET"
    not admin
}

allow if {
    input.request.method == "POST"
    input.consumer.username == "alice"
    not admin
}

reason := "admins only" if admin

status_code := 429 if input.request.headers["x-flood"] == "yes"

headers["x-policy-consumer"] := input.consumer.username if allow

headers["x-denied-by"] := "portico.authz" if not allow
"""

BODY = """
package portico.body
import rego.v1

default allow := false

allow if {
    input.request.method == "POST"
    json.unmarshal(input.request.body).amount <= 100
}

reason := "amount too large" if not allow
"""

# what the engine was given, sent back as headers, to check the input's shape
ECHO = """
package portico.echo
import rego.v1

allow := true

headers := {
    "x-seen-method": input.request.method,
    "x-seen-path": input.request.path,
    "x-seen-query": input.request.query.q,
    "x-seen-header": input.request.headers["x-custom"],
    "x-seen-route": input.route.id,
    "x-seen-client": input.var.remote_addr,
    "x-seen-body": object.get(input.request, "body", "(none)"),
}
"""

ALICE = consumer("alice", {"key-auth": {"key": "alice-key-0123456789"}})
BOB = consumer("bob", {"key-auth": {"key": "bob-key-0123456789"}})


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpaServer]:
    base = tmp_path_factory.mktemp("rego")
    policies = []
    for name, source in (("authz", AUTHZ), ("body", BODY), ("echo", ECHO)):
        path = base / f"{name}.rego"
        path.write_text(source)
        policies.append(path)
    with OpaServer(free_port(), policies, base / "server.log") as server:
        yield server


def agent(host: str, policy: str, **config: Any) -> dict[str, Any]:
    return plugin("policy-agent", 160, host=host, policy=policy, **config)


def keyed(*after: dict[str, Any]) -> list[dict[str, Any]]:
    return [plugin("key-auth", 100), *after]


async def test_the_decision_admits_or_refuses(served: Any, backend: int, engine: OpaServer) -> None:
    gw, client, _ = await served(LOOPBACK)
    await gw.apply(document(backend, keyed(agent(engine.url, "portico/authz")), [ALICE, BOB]))
    alice, bob = {"apikey": "alice-key-0123456789"}, {"apikey": "bob-key-0123456789"}
    # GET for everyone; the decision's headers go to the upstream
    forwarded = echoed(await client.get("/x", headers=bob))
    assert forwarded["headers"]["x-policy-consumer"] == "bob"
    # POST only for alice
    assert echoed(await client.post("/x", headers=alice, content=b"{}"))
    refused = await client.post("/x", headers=bob, content=b"{}")
    assert refused.status_code == 403
    assert refused.json() == {"message": "The request is not allowed by the policy"}
    assert refused.headers["x-denied-by"] == "portico.authz"
    # nothing under /admin, with the policy's reason; its status code when it gives one
    admin = await client.get("/admin/users", headers=alice)
    assert admin.status_code == 403 and admin.json() == {"message": "admins only"}
    flood = await client.post("/x", headers={**bob, "x-flood": "yes"}, content=b"{}")
    assert flood.status_code == 429


async def test_the_input_carries_request_route_and_client(
    served: Any, backend: int, engine: OpaServer
) -> None:
    gw, client, _ = await served(LOOPBACK)
    await gw.apply(document(backend, [agent(engine.url, "portico/echo")], []))
    forwarded = echoed(await client.get("/items/7?q=find+me", headers={"x-custom": "hello"}))
    seen = forwarded["headers"]
    assert seen["x-seen-method"] == "GET"
    assert seen["x-seen-path"] == "/items/7"
    assert seen["x-seen-query"] == "find me"
    assert seen["x-seen-header"] == "hello"
    assert seen["x-seen-route"] == "rev:0"
    assert seen["x-seen-client"] == "127.0.0.1"
    assert seen["x-seen-body"] == "(none)"  # without with_body


async def test_with_body_the_policy_reads_the_body(
    served: Any, backend: int, engine: OpaServer
) -> None:
    gw, client, _ = await served(LOOPBACK)
    await gw.apply(document(backend, [agent(engine.url, "portico/body", with_body=True)], []))
    small = json.dumps({"amount": 50}).encode()
    forwarded = echoed(await client.post("/pay", content=small))
    assert forwarded["body"] == small.decode()  # still proxied whole after the policy read it
    refused = await client.post("/pay", content=json.dumps({"amount": 500}).encode())
    assert refused.status_code == 403 and refused.json() == {"message": "amount too large"}
    # a request without a body has an empty one
    assert (await client.get("/pay")).json() == {"message": "amount too large"}


async def test_an_undefined_policy_refuses(served: Any, backend: int, engine: OpaServer) -> None:
    gw, client, _ = await served(LOOPBACK)
    await gw.apply(document(backend, [agent(engine.url, "no/such/policy")], []))
    assert (await client.get("/x")).status_code == 403


async def test_an_engine_down_refuses_with_503(
    served: Any, backend: int, engine: OpaServer
) -> None:
    gw, client, _ = await served(LOOPBACK)
    await gw.apply(document(backend, [agent(engine.url, "portico/echo")], []))
    echoed(await client.get("/x"))
    engine.stop()
    try:
        down = await client.get("/x")
        assert down.status_code == 503
        assert down.json() == {"message": "Policy agent unavailable"}
    finally:
        engine.start()
    echoed(await client.get("/x"))


class _Misbehaving(BaseHTTPRequestHandler):
    """An agent that answers what no policy engine should."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        kind = self.path.rsplit("/", 1)[-1]
        if kind == "slow":
            time.sleep(1.0)
        status, body = {
            "html": (200, b"<html>allow</html>"),
            "error": (500, b'{"code": "internal_error"}'),
            "array": (200, b"[true]"),
            "slow": (200, b'{"result": {"allow": true}}'),
        }[kind]
        with contextlib.suppress(OSError):  # "slow": the gateway gave up and hung up
            self.send_response(status)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def misbehaving() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Misbehaving)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("kind", ["html", "error", "array", "slow"])
async def test_no_usable_decision_refuses_with_503(
    served: Any, backend: int, misbehaving: str, kind: str
) -> None:
    gw, client, _ = await served(LOOPBACK)
    await gw.apply(document(backend, [agent(misbehaving, f"p/{kind}", timeout=200)], []))
    refused = await client.get("/x")
    assert refused.status_code == 503


async def test_the_agent_is_reached_through_the_egress_guard(
    served: Any, backend: int, engine: OpaServer
) -> None:
    gw, client, _ = await served()  # loopback not allowed
    await gw.apply(document(backend, [agent(engine.url, "portico/echo")], []))
    assert (await client.get("/x")).status_code == 503


async def test_an_agent_over_https_is_verified_unless_told_otherwise(
    served: Any, backend: int, engine: OpaServer, tmp_path: Path
) -> None:
    cert, key = self_signed(tmp_path)
    pem = tmp_path / "agent.pem"
    pem.write_bytes(cert.read_bytes() + key.read_bytes())
    log = tmp_path / "server.log"
    with OpaServer(free_port(), engine.policies, log, cert=pem) as secure:
        assert secure.url.startswith("https://")
        gw, client, _ = await served(LOOPBACK)
        unverified = agent(secure.url, "portico/echo", ssl_verify=False)
        await gw.apply(document(backend, [unverified], []))
        echoed(await client.get("/x"))
        # a self-signed certificate nobody trusts: no decision
        await gw.apply(document(backend, [agent(secure.url, "portico/echo")], [], version=2))
        assert (await client.get("/x")).status_code == 503
