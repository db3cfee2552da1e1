"""cors, csrf and response-rewrite on real traffic: a Gateway given a snapshot, its HTTP engine
on loopback (default loop and uvloop), and a real upstream answering with known headers and
bodies (length-framed, chunked, 204) that records what reached it."""

from __future__ import annotations

import asyncio
import base64
import itertools
import threading
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
import uvloop

from portico.gateway.context import RequestContext
from portico.gateway.counters.local import LocalCounters
from portico.gateway.gateway import Gateway
from portico.gateway.http.server import serve, shutdown
from portico.gateway.plugin_services import ConsumerIndex, RuntimeServices
from portico.gateway.plugins.csrf import CsrfConfig, CsrfRuntime
from portico.gateway.plugins.registry import PluginCheckError, check_plugin
from tests.gateway.test_pipeline import HOST, plugin, snapshot

LOOPS = {"asyncio": asyncio.new_event_loop, "uvloop": uvloop.new_event_loop}
UPSTREAM_BODY = b'{"from":"upstream"}'
CHUNKS = (b"first-", b"second-", b"third")
APP = "https://app.example"
EVIL = "https://evil.example"


# ---------------------------------------------------------------------------- the upstream


class UpstreamServer(ThreadingHTTPServer):
    daemon_threads = True
    seen: list[str]


class Upstream(BaseHTTPRequestHandler):
    """``/chunked``: a chunked body; ``/empty``: 204; anything else: a length-framed JSON body
    with CORS headers of its own (which the gateway's policy must replace)."""

    protocol_version = "HTTP/1.1"
    server: UpstreamServer

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        if length:
            self.rfile.read(length)
        self.server.seen.append(f"{self.command} {self.path}")
        path = self.path.split("?", 1)[0]
        if path == "/empty":
            self.send_response(204)
            self.send_header("x-upstream", "yes")
            self.end_headers()
            return
        if path == "/chunked":
            self.send_response(200)
            self.send_header("content-type", "text/plain")
            self.send_header("transfer-encoding", "chunked")
            self.send_header("etag", '"c1"')
            self.end_headers()
            if self.command != "HEAD":
                for part in CHUNKS:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
            return
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(UPSTREAM_BODY)))
        self.send_header("etag", '"v1"')
        self.send_header("content-encoding", "identity")
        self.send_header("vary", "Accept-Encoding")
        self.send_header("x-upstream", "yes")
        self.send_header("access-control-allow-origin", EVIL)
        self.send_header("access-control-allow-credentials", "true")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(UPSTREAM_BODY)

    do_GET = do_POST = do_PUT = do_DELETE = do_OPTIONS = do_HEAD = _answer  # noqa: N815

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture
def upstream() -> Iterator[UpstreamServer]:
    server = UpstreamServer(("127.0.0.1", 0), Upstream)
    server.seen = []
    # a short poll so that shutdown() returns quickly
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


# ---------------------------------------------------------------------------- the harness


@dataclass
class Clock:
    value: float = 1_800_000_000.0

    def __call__(self) -> float:
        return self.value


@dataclass
class Harness:
    gw: Gateway
    client: httpx.AsyncClient
    upstream: UpstreamServer
    clock: Clock
    statuses: list[int] = field(default_factory=list)  # ctx.status as the log phase saw it
    versions: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    async def apply(self, *plugins: dict[str, Any]) -> None:
        port = self.upstream.server_address[1]
        await self.gw.apply(snapshot(port, list(plugins), version=next(self.versions)))
        self.upstream.seen.clear()

    async def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        self.client.cookies.clear()  # each test says which cookies it sends
        return await self.client.request(method, path, **kwargs)


Scenario = Callable[[Harness], Awaitable[None]]


@pytest.fixture(params=list(LOOPS))
def run(request: pytest.FixtureRequest, upstream: UpstreamServer) -> Callable[[Scenario], None]:
    """Runs a scenario against a fresh gateway on the loop of this parameter; the gateway's
    runtime services get a controllable clock."""

    def runner(scenario: Scenario) -> None:
        async def main() -> None:
            clock = Clock()
            gw = Gateway(now=clock)
            server = await serve(gw.handle, "127.0.0.1", 0)
            port = server.sockets[0].getsockname()[1]
            try:
                async with httpx.AsyncClient(
                    base_url=f"http://127.0.0.1:{port}", headers={"Host": HOST}, timeout=10
                ) as client:
                    harness = Harness(gw, client, upstream, clock)

                    def observe(_: object, ctx: RequestContext) -> None:
                        harness.statuses.append(ctx.status)

                    gw.observers.append(observe)
                    await scenario(harness)
            finally:
                await shutdown(server, grace=1)
                await gw.close()

        with asyncio.Runner(loop_factory=LOOPS[request.param]) as loop_runner:
            loop_runner.run(main())

    return runner


def cors_headers(response: httpx.Response) -> dict[str, str]:
    return {k: v for k, v in response.headers.items() if k.startswith("access-control-")}


# ---------------------------------------------------------------------------- cors

LISTED = plugin(
    "cors",
    30,
    allow_origins=f"{APP}, https://admin.example:8443, https://legacy.example:443",
    allow_methods="GET,POST",
    allow_headers="X-Token, Content-Type",
    expose_headers="X-Upstream",
    max_age=600,
    allow_credential=True,
)
PREFLIGHT = {"Origin": APP, "Access-Control-Request-Method": "POST"}


def test_cors_preflight_is_answered_before_authentication_without_the_upstream(
    run: Callable[[Scenario], None],
) -> None:
    async def scenario(h: Harness) -> None:
        await h.apply(LISTED, plugin("key-auth", 100))
        response = await h.request(
            "OPTIONS", "/orders", headers={**PREFLIGHT, "Access-Control-Request-Headers": "x-token"}
        )
        assert response.status_code == 200
        assert response.content == b""
        assert cors_headers(response) == {
            "access-control-allow-origin": APP,
            "access-control-allow-methods": "GET,POST",
            "access-control-allow-headers": "X-Token,Content-Type",
            "access-control-max-age": "600",
            "access-control-allow-credentials": "true",
        }
        assert response.headers["vary"] == "Origin"
        # an origin written with its default port matches the browser's serialisation
        legacy = await h.request(
            "OPTIONS", "/", headers={**PREFLIGHT, "Origin": "https://legacy.example"}
        )
        assert legacy.headers["access-control-allow-origin"] == "https://legacy.example"
        assert h.upstream.seen == []  # never proxied, and key-auth did not ask for a key
        assert h.statuses == [200, 200]

    run(scenario)


def test_cors_actual_requests_get_the_policy_headers_instead_of_the_upstreams(
    run: Callable[[Scenario], None],
) -> None:
    async def scenario(h: Harness) -> None:
        await h.apply(LISTED)
        response = await h.request("GET", "/orders", headers={"Origin": APP})
        assert response.status_code == 200
        assert response.content == UPSTREAM_BODY
        assert cors_headers(response) == {
            "access-control-allow-origin": APP,  # echoed, never "*", with credentials
            "access-control-allow-credentials": "true",
            "access-control-expose-headers": "X-Upstream",
        }
        assert response.headers["vary"] == "Accept-Encoding, Origin"
        # OPTIONS without Access-Control-Request-Method is not a preflight: proxied
        options = await h.request("OPTIONS", "/orders", headers={"Origin": APP})
        assert options.headers["access-control-allow-origin"] == APP
        assert h.upstream.seen == ["GET /orders", "OPTIONS /orders"]

    run(scenario)


def test_cors_a_disallowed_origin_gets_no_cors_headers_and_still_proceeds(
    run: Callable[[Scenario], None],
) -> None:
    async def scenario(h: Harness) -> None:
        await h.apply(LISTED, plugin("key-auth", 100))
        preflight = await h.request("OPTIONS", "/orders", headers={**PREFLIGHT, "Origin": EVIL})
        assert preflight.status_code == 200  # the browser refuses it: no Allow-Origin
        assert cors_headers(preflight) == {}
        assert preflight.headers["vary"] == "Origin"
        assert h.upstream.seen == []
        await h.apply(LISTED)
        for origin in (EVIL, "https://app.example.evil", None):
            headers = {"Origin": origin} if origin else {}
            response = await h.request("GET", "/orders", headers=headers)
            assert response.status_code == 200
            assert cors_headers(response) == {}  # the upstream's own are gone too
            assert response.headers["vary"] == "Accept-Encoding, Origin"
        assert len(h.upstream.seen) == 3

    run(scenario)


def test_cors_headers_reach_answers_of_other_plugins(run: Callable[[Scenario], None]) -> None:
    async def scenario(h: Harness) -> None:
        await h.apply(LISTED, plugin("key-auth", 100))
        refused = await h.request("GET", "/orders", headers={"Origin": APP})
        assert refused.status_code == 401  # readable by the page: it carries Allow-Origin
        assert refused.headers["access-control-allow-origin"] == APP
        assert h.upstream.seen == []

    run(scenario)


def test_cors_wildcards(run: Callable[[Scenario], None]) -> None:
    async def scenario(h: Harness) -> None:
        await h.apply(plugin("cors", 30, allow_origins="*", expose_headers="*"))
        preflight = await h.request(
            "OPTIONS",
            "/",
            headers={**PREFLIGHT, "Access-Control-Request-Headers": "authorization,x-a"},
        )
        assert cors_headers(preflight) == {
            "access-control-allow-origin": "*",
            "access-control-allow-methods": "*",
            # browsers never let "*" cover Authorization: the requested headers are listed
            "access-control-allow-headers": "authorization,x-a",
            "access-control-max-age": "5",
        }
        assert "vary" not in preflight.headers  # the answer does not depend on the origin
        actual = await h.request("GET", "/", headers={"Origin": EVIL})
        assert cors_headers(actual) == {
            "access-control-allow-origin": "*",
            "access-control-expose-headers": "*",
        }
        assert actual.headers["vary"] == "Accept-Encoding"
        # with credentials "*" is a header name to browsers: the real names are listed
        await h.apply(
            plugin(
                "cors",
                30,
                allow_origins=APP,
                allow_credential=True,
                expose_headers="*",
                max_age=-1,
            )
        )
        preflight = await h.request("OPTIONS", "/", headers=PREFLIGHT)
        assert preflight.headers["access-control-allow-methods"] == "POST"
        assert "access-control-allow-headers" not in preflight.headers
        assert preflight.headers["access-control-max-age"] == "-1"
        actual = await h.request("GET", "/", headers={"Origin": APP})
        exposed = actual.headers["access-control-expose-headers"].split(",")
        assert {"x-upstream", "etag", "content-type"} <= set(exposed)
        assert not any(name.startswith("access-control-") for name in exposed)

    run(scenario)


# ---------------------------------------------------------------------------- csrf

KEY = "0123456789abcdef-signing-secret"
CSRF = plugin("csrf", 40, key=KEY, expires=600)
NAME = "apisix-csrf-token"


def token_of(response: httpx.Response) -> tuple[str, dict[str, str]]:
    """The token of the csrf Set-Cookie, and its attributes."""
    (line,) = [v for v in response.headers.get_list("set-cookie") if v.startswith(NAME + "=")]
    first, *attributes = [part.strip() for part in line.split(";")]
    pairs = dict(attr.partition("=")[::2] for attr in attributes)
    return first.split("=", 1)[1], pairs


def test_csrf_double_submit_full_cycle(run: Callable[[Scenario], None]) -> None:
    async def scenario(h: Harness) -> None:
        await h.apply(CSRF)
        page = await h.request("GET", "/form")
        assert page.status_code == 200
        token, attributes = token_of(page)
        assert attributes["path"] == "/" and attributes["SameSite"] == "Lax"
        expires = parsedate_to_datetime(attributes["Expires"]).timestamp()
        assert expires == h.clock.value + 600
        assert "HttpOnly" not in attributes  # the page's script must read it

        async def post(headers: dict[str, str]) -> httpx.Response:
            return await h.request("POST", "/orders", headers=headers, content=b"{}")

        def refused(response: httpx.Response, message: str) -> None:
            assert response.status_code == 401
            assert response.json() == {"error_msg": message}

        refused(await post({}), "no csrf token in headers")
        refused(await post({NAME: token}), "no csrf cookie")
        cookie = f"other=1; {NAME}={token}"
        other = token[:-1] + ("A" if token[-1] != "A" else "Q")
        refused(await post({NAME: other, "Cookie": cookie}), "csrf token mismatch")
        tampered = token[:10] + ("B" if token[10] != "B" else "C") + token[11:]
        refused(
            await post({NAME: tampered, "Cookie": f"{NAME}={tampered}"}),
            "Failed to verify the csrf token signature",
        )
        assert h.upstream.seen == ["GET /form"]
        accepted = await post({NAME: token, "Cookie": cookie})
        assert accepted.status_code == 200
        token_of(accepted)  # every response carries a fresh token
        assert h.upstream.seen == ["GET /form", "POST /orders"]
        # refusals carry a fresh token too, so the page can recover
        token_of(await post({}))

    run(scenario)


def test_csrf_tokens_expire_by_the_gateway_clock(run: Callable[[Scenario], None]) -> None:
    async def scenario(h: Harness) -> None:
        await h.apply(CSRF)
        token, _ = token_of(await h.request("HEAD", "/"))
        headers = {NAME: token, "Cookie": f"{NAME}={token}"}
        h.clock.value += 600  # the last valid second
        assert (await h.request("DELETE", "/x", headers=headers)).status_code == 200
        h.clock.value += 1
        expired = await h.request("DELETE", "/x", headers=headers)
        assert expired.status_code == 401
        assert expired.json() == {"error_msg": "Failed to verify the csrf token signature"}
        assert h.upstream.seen == ["HEAD /", "DELETE /x"]
        # a token signed with another key is refused the same way
        await h.apply(plugin("csrf", 40, key="another-secret-of-16+chars", expires=600))
        h.clock.value -= 1
        foreign = await h.request("DELETE", "/x", headers=headers)
        assert foreign.json() == {"error_msg": "Failed to verify the csrf token signature"}
        # safe methods never need a token
        for method in ("GET", "HEAD", "OPTIONS"):
            assert (await h.request(method, "/x")).status_code == 200
        assert h.upstream.seen == ["GET /x", "HEAD /x", "OPTIONS /x"]

    run(scenario)


def test_csrf_tokens_and_cookie_parsing(run: Callable[[Scenario], None]) -> None:
    config = check_plugin("csrf", {"key": KEY})[1]
    assert isinstance(config, CsrfConfig)
    now = Clock()
    runtime = CsrfRuntime(config, RuntimeServices(ConsumerIndex(), LocalCounters(), now=now))
    token = runtime.issue(now())
    assert len(token) == 75 and runtime.valid(token, now())
    assert not runtime.valid(token + "A", now())
    assert not runtime.valid("!" * 75, now())

    async def scenario(h: Harness) -> None:
        await h.apply(CSRF)
        token, _ = token_of(await h.request("GET", "/"))
        # another application's malformed cookie must not hide ours (SimpleCookie would)
        cookie = f'broken="x; {NAME}="{token}"; c=d'
        response = await h.request("PUT", "/", headers={NAME: token, "Cookie": cookie})
        assert response.status_code == 200

    run(scenario)


# ---------------------------------------------------------------------------- response-rewrite

NEW_BODY = "replaced by the gateway"


def test_response_rewrite_status_and_headers(run: Callable[[Scenario], None]) -> None:
    async def scenario(h: Harness) -> None:
        await h.apply(
            plugin(
                "response-rewrite",
                500,
                status_code=202,
                headers={
                    "set": {"X-Served-By": "portico $remote_addr", "Content-Type": "text/x"},
                    "add": ["X-Trace: ${request_method}-$arg_id-\\$1-$nope", "Set-Cookie: a=1"],
                    "remove": ["X-Upstream", "ETag"],
                },
            )
        )
        response = await h.request("GET", "/orders?id=42")
        assert response.status_code == 202
        assert response.content == UPSTREAM_BODY  # the body is left alone
        assert response.headers["x-served-by"] == "portico 127.0.0.1"
        assert response.headers["content-type"] == "text/x"
        assert response.headers["x-trace"] == "GET-42-$1-"
        assert response.headers["set-cookie"] == "a=1"
        assert "x-upstream" not in response.headers and "etag" not in response.headers
        # a variable from a decoded query argument cannot inject a header
        injected = await h.request("GET", "/orders?id=a%0d%0aX-Evil:%201")
        assert injected.status_code == 202
        assert injected.headers["x-trace"] == "GET-aX-Evil: 1-$1-"
        assert "x-evil" not in injected.headers
        odd = await h.request("GET", "/orders?id=%01%E2%82%AC%C3%A9")
        assert odd.headers.raw[0] is not None
        assert odd.headers["x-trace"].encode("latin-1") == b"GET-?\xe9-$1-"
        assert len(h.upstream.seen) == 3
        assert h.statuses == [202, 202, 202]  # what the client got, for the log and metrics

    run(scenario)


@pytest.mark.parametrize("path", ["/length", "/chunked"])
def test_response_rewrite_replaces_the_body(run: Callable[[Scenario], None], path: str) -> None:
    async def scenario(h: Harness) -> None:
        await h.apply(plugin("response-rewrite", 500, body=NEW_BODY))
        for _ in range(2):  # the same kept-alive connection: the framing must be exact
            response = await h.request("GET", path)
            assert response.status_code == 200
            assert response.content == NEW_BODY.encode()
            assert response.headers["content-length"] == str(len(NEW_BODY))
            assert "etag" not in response.headers
            assert "content-encoding" not in response.headers
        assert h.upstream.seen == [f"GET {path}"] * 2  # the upstream is still called
        head = await h.request("HEAD", path)
        assert head.status_code == 200 and head.content == b""
        assert head.headers["content-length"] == str(len(NEW_BODY))
        assert (await h.request("GET", path)).content == NEW_BODY.encode()

    run(scenario)


def test_response_rewrite_binary_body_and_status(run: Callable[[Scenario], None]) -> None:
    binary = bytes(range(256))

    async def scenario(h: Harness) -> None:
        await h.apply(
            plugin(
                "response-rewrite",
                500,
                status_code=503,
                body=base64.b64encode(binary).decode(),
                body_base64=True,
            )
        )
        response = await h.request("GET", "/chunked")
        assert response.status_code == 503
        assert response.content == binary
        assert h.statuses == [503]

    run(scenario)


def test_response_rewrite_and_bodiless_responses(run: Callable[[Scenario], None]) -> None:
    async def scenario(h: Harness) -> None:
        await h.apply(plugin("response-rewrite", 500, headers={"set": {"X-A": "1"}}))
        empty = await h.request("GET", "/empty")
        assert empty.status_code == 204 and empty.content == b""
        assert empty.headers["x-a"] == "1" and empty.headers["x-upstream"] == "yes"
        # a 204 from the upstream turned into a 200 with a body
        await h.apply(plugin("response-rewrite", 500, status_code=200, body=NEW_BODY))
        filled = await h.request("GET", "/empty")
        assert filled.status_code == 200 and filled.content == NEW_BODY.encode()
        # a body turned into a 204: nothing announced, nothing sent, connection still usable
        await h.apply(plugin("response-rewrite", 500, status_code=204, body=NEW_BODY))
        for path in ("/length", "/chunked"):
            emptied = await h.request("GET", path)
            assert emptied.status_code == 204 and emptied.content == b""
            assert "content-length" not in emptied.headers
        await h.apply()
        assert (await h.request("GET", "/length")).content == UPSTREAM_BODY

    run(scenario)


def test_response_rewrite_rewrites_answers_of_other_plugins(
    run: Callable[[Scenario], None],
) -> None:
    async def scenario(h: Harness) -> None:
        await h.apply(
            plugin("key-auth", 100),
            plugin(
                "response-rewrite",
                500,
                status_code=403,
                body='{"error":"denied"}',
                headers={"set": {"Content-Type": "application/json"}},
            ),
        )
        response = await h.request("GET", "/orders")
        assert response.status_code == 403
        assert response.json() == {"error": "denied"}
        assert h.upstream.seen == []
        assert h.statuses == [403]

    run(scenario)


def test_response_rewrite_refuses_headers_it_could_not_send() -> None:
    for headers in ({"set": {"Content-Length": "3"}}, {"add": ["Transfer-Encoding: gzip"]}):
        with pytest.raises(PluginCheckError, match="the gateway frames the body"):
            check_plugin("response-rewrite", {"headers": headers})
    # only Latin-1 without control characters can be written in a response head
    for headers in (
        {"set": {"X-A": "\u20ac"}},
        {"set": {"X-A": "a\x01"}},
        {"add": ["X-A: \u20ac"]},
    ):
        with pytest.raises(PluginCheckError, match="does not match the pattern"):
            check_plugin("response-rewrite", {"headers": headers})
    check_plugin("response-rewrite", {"headers": {"set": {"X-A": "caf\xe9\tok"}}})
