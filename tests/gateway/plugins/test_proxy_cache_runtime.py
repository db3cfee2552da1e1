"""proxy-cache at run time over real sockets: a Gateway and its HTTP engine on loopback, in
front of an origin of our own that counts its hits and answers what each test tells it to
(status, headers, body, chunked or with a content-length). Time is a controllable clock
handed to the plugin through the gateway's RuntimeServices."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import threading
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import uvloop

from portico.gateway.cache.store import CachedResponse, DiskStore, MemoryStore, digest
from portico.gateway.gateway import Gateway
from portico.gateway.http.server import serve
from portico.gateway.node_options import GatewayOptions
from portico.gateway.plugins import proxy_cache
from portico.gateway.snapshot import content_hash
from tests.gateway.test_pipeline import HOST, plugin, snapshot
from tests.support.waiting import eventually

STRATEGIES = [
    pytest.param({"cache_strategy": "memory", "cache_zone": "memory_cache"}, id="memory"),
    pytest.param({"cache_strategy": "disk"}, id="disk"),
]
# framing and per-answer headers: everything else must be the same on a hit
PER_ANSWER = {"x-request-id", "apisix-cache-status", "cache-status", "age"}
FRAMING = {"content-length", "transfer-encoding", "connection"}


# -- the origin ----------------------------------------------------------------------------


@dataclass
class Answer:
    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes | None = None  # None: "<METHOD> <target> #<hit number>"
    chunked: bool = False


class Origin(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _OriginHandler)
        self.answers: dict[str, Answer] = {}
        self.hits: Counter[str] = Counter()
        self.lock = threading.Lock()

    @property
    def port(self) -> int:
        return int(self.server_address[1])


class _OriginHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Origin

    def _answer(self) -> None:
        origin = self.server
        length = int(self.headers.get("content-length") or 0)
        if length:
            self.rfile.read(length)
        with origin.lock:
            origin.hits[self.path] += 1
            number = origin.hits[self.path]
        answer = origin.answers.get(urlsplit(self.path).path, Answer())
        body = answer.body
        if body is None:
            body = f"{self.command} {self.path} #{number}".encode()
        self.send_response(answer.status)
        for name, value in answer.headers:
            self.send_header(name, value)
        if answer.chunked and self.command != "HEAD":
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for start in range(0, len(body), 16384):
                piece = body[start : start + 16384]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.write(b"0\r\n\r\n")
            return
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_GET = do_POST = do_HEAD = do_PUT = _answer  # noqa: N815

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture
def origin() -> Iterator[Origin]:
    server = Origin()
    # (a short poll interval: shutdown() waits for the serving loop to look)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


# -- the gateway ---------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.value = 1_800_000_000.0

    def __call__(self) -> float:
        return self.value


@dataclass
class Stack:
    gw: Gateway
    client: httpx.AsyncClient
    origin: Origin
    clock: Clock
    version: int = 0

    async def configure(self, **config: Any) -> None:
        self.version += 1
        document = snapshot(self.origin.port, [plugin("proxy-cache", 300, **config)], self.version)
        await self.gw.apply(document)


@contextlib.asynccontextmanager
async def running(cache_dir: Path, origin: Origin, clock: Clock) -> AsyncIterator[Stack]:
    gw = Gateway(options=GatewayOptions(cache_dir=cache_dir), now=clock)
    server = await serve(gw.handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", headers={"Host": HOST}, timeout=10
    ) as client:
        try:
            yield Stack(gw, client, origin, clock)
        finally:
            server.close()
            await gw.close()


@pytest.fixture
async def stack(tmp_path: Path, origin: Origin) -> AsyncIterator[Stack]:
    async with running(tmp_path / "cache", origin, Clock()) as made:
        yield made


def status(response: httpx.Response) -> str | None:
    value: str | None = response.headers.get("apisix-cache-status")
    assert response.headers.get("cache-status") == value  # plugins.md's name, same value
    return value


def comparable(response: httpx.Response) -> list[tuple[str, str]]:
    skip = PER_ANSWER | FRAMING
    return [(k, v) for k, v in response.headers.multi_items() if k not in skip]


# -- hits and misses -----------------------------------------------------------------------


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("chunked", [False, True], ids=["length", "chunked"])
async def test_a_miss_then_hits_from_the_cache(
    stack: Stack, strategy: dict[str, Any], chunked: bool
) -> None:
    stack.origin.answers["/doc"] = Answer(
        headers=[("content-type", "text/plain"), ("x-origin", "a"), ("x-origin", "b")],
        chunked=chunked,
    )
    await stack.configure(**strategy)
    first = await stack.client.get("/doc?q=1")
    assert first.status_code == 200
    assert status(first) == "MISS"
    assert first.content == b"GET /doc?q=1 #1"
    second = await stack.client.get("/doc?q=1")
    assert status(second) == "HIT"
    assert second.content == first.content
    assert comparable(second) == comparable(first)
    assert second.headers["age"] == "0"
    assert second.headers["content-length"] == str(len(first.content))
    head = await stack.client.head("/doc?q=1")  # HEAD is served from the GET's entry
    assert status(head) == "HIT"
    assert head.content == b""
    assert head.headers["content-length"] == str(len(first.content))
    assert stack.origin.hits["/doc?q=1"] == 1


async def test_a_head_miss_is_relayed_but_not_stored(stack: Stack) -> None:
    await stack.configure(cache_strategy="memory", cache_zone="memory_cache")
    assert status(await stack.client.head("/h")) == "MISS"
    get = await stack.client.get("/h")
    assert status(get) == "MISS"  # the HEAD answer had no body to keep
    assert get.content == b"GET /h #2"
    assert status(await stack.client.get("/h")) == "HIT"


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_entries_expire_after_cache_ttl(stack: Stack, strategy: dict[str, Any]) -> None:
    await stack.configure(cache_ttl=60, **strategy)
    assert status(await stack.client.get("/t")) == "MISS"
    stack.clock.value += 59
    late = await stack.client.get("/t")
    assert status(late) == "HIT"
    assert late.headers["age"] == "59"
    stack.clock.value += 1
    expired = await stack.client.get("/t")
    assert status(expired) == "EXPIRED"
    assert expired.content == b"GET /t #2"
    again = await stack.client.get("/t")
    assert status(again) == "HIT"
    assert again.content == b"GET /t #2"
    assert stack.origin.hits["/t"] == 2


@pytest.mark.parametrize("code", [201, 302, 500, 503])
async def test_statuses_outside_cache_http_status_are_not_stored(stack: Stack, code: int) -> None:
    stack.origin.answers["/s"] = Answer(status=code)
    await stack.configure(cache_strategy="memory", cache_zone="memory_cache")
    for _ in range(2):
        response = await stack.client.get("/s")
        assert response.status_code == code
        assert status(response) == "MISS"
    assert stack.origin.hits["/s"] == 2


async def test_a_listed_error_status_is_stored(stack: Stack) -> None:
    stack.origin.answers["/gone"] = Answer(status=404)
    await stack.configure(cache_strategy="memory", cache_zone="memory_cache")
    await stack.client.get("/gone")
    hit = await stack.client.get("/gone")
    assert (hit.status_code, status(hit)) == (404, "HIT")
    assert stack.origin.hits["/gone"] == 1


async def test_methods_outside_cache_method_never_read_or_fill_the_cache(stack: Stack) -> None:
    await stack.configure(cache_strategy="memory", cache_zone="memory_cache")
    assert status(await stack.client.get("/m")) == "MISS"
    assert status(await stack.client.get("/m")) == "HIT"
    for _ in range(2):  # a POST never gets the GET's entry, and is never kept
        post = await stack.client.post("/m", content=b"x")
        assert status(post) == "MISS"
        assert post.content.startswith(b"POST /m #")
    put = await stack.client.put("/m", content=b"x")
    assert put.content.startswith(b"PUT /m #")
    assert stack.origin.hits["/m"] == 4


async def test_post_is_cached_when_listed(stack: Stack) -> None:
    await stack.configure(cache_strategy="memory", cache_zone="memory_cache", cache_method=["POST"])
    assert status(await stack.client.post("/p", content=b"a")) == "MISS"
    assert status(await stack.client.post("/p", content=b"a")) == "HIT"
    assert status(await stack.client.get("/p")) == "MISS"  # GET is not listed now
    assert stack.origin.hits["/p"] == 2


# -- what the origin forbids ---------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        [("cache-control", "no-store")],
        [("cache-control", "private, max-age=600")],
        [("cache-control", "public"), ("cache-control", "no-cache")],
        [("set-cookie", "session=abc; HttpOnly")],
        [("set-cookie", "a=1"), ("set-cookie", "b=2")],
        [("vary", "*")],
    ],
    ids=["no-store", "private", "no-cache", "set-cookie", "two-set-cookies", "vary-star"],
)
@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_responses_the_origin_forbids_are_never_stored(
    stack: Stack, strategy: dict[str, Any], headers: list[tuple[str, str]]
) -> None:
    stack.origin.answers["/f"] = Answer(headers=headers)
    await stack.configure(**strategy)
    for number in (1, 2):
        response = await stack.client.get("/f")
        assert status(response) == "MISS"
        assert response.content == f"GET /f #{number}".encode()
    assert stack.origin.hits["/f"] == 2


async def test_cache_control_sets_the_ttl_when_followed(stack: Stack) -> None:
    stack.origin.answers["/a"] = Answer(headers=[("cache-control", "max-age=10")])
    stack.origin.answers["/b"] = Answer(headers=[("cache-control", "max-age=10, s-maxage=100")])
    stack.origin.answers["/c"] = Answer()  # no freshness information: not kept
    await stack.configure(
        cache_strategy="memory", cache_zone="memory_cache", cache_control=True, cache_ttl=1000
    )
    for path in ("/a", "/b", "/c"):
        await stack.client.get(path)
    stack.clock.value += 50
    assert status(await stack.client.get("/a")) == "EXPIRED"
    assert status(await stack.client.get("/b")) == "HIT"
    assert status(await stack.client.get("/c")) == "MISS"
    # the client's own Cache-Control: too old for it, or no cache at all
    old = await stack.client.get("/b", headers={"cache-control": "max-age=20"})
    assert status(old) == "STALE"
    assert status(await stack.client.get("/b", headers={"cache-control": "no-cache"})) == "BYPASS"
    only = await stack.client.get("/nothing", headers={"cache-control": "only-if-cached"})
    assert only.status_code == 504
    assert stack.origin.hits["/nothing"] == 0


async def test_cache_control_ignored_unless_followed(stack: Stack) -> None:
    stack.origin.answers["/a"] = Answer(headers=[("cache-control", "max-age=10")])
    await stack.configure(cache_strategy="memory", cache_zone="memory_cache", cache_ttl=1000)
    await stack.client.get("/a")
    stack.clock.value += 50
    assert status(await stack.client.get("/a", headers={"cache-control": "no-cache"})) == "HIT"


async def test_hide_cache_headers(stack: Stack) -> None:
    stack.origin.answers["/x"] = Answer(
        headers=[("cache-control", "max-age=60"), ("expires", "Thu, 01 Jan 2037 00:00:00 GMT")]
    )
    await stack.configure(
        cache_strategy="memory", cache_zone="memory_cache", hide_cache_headers=True
    )
    for expected in ("MISS", "HIT"):
        response = await stack.client.get("/x")
        assert status(response) == expected
        assert "cache-control" not in response.headers
        assert "expires" not in response.headers


async def test_requests_with_authorization_are_kept_only_when_shareable(stack: Stack) -> None:
    stack.origin.answers["/public"] = Answer(headers=[("cache-control", "public")])
    await stack.configure(cache_strategy="memory", cache_zone="memory_cache")
    alice = {"authorization": "Bearer alice"}
    assert (await stack.client.get("/me", headers=alice)).content == b"GET /me #1"
    bob = await stack.client.get("/me", headers={"authorization": "Bearer bob"})
    assert (status(bob), bob.content) == ("MISS", b"GET /me #2")
    await stack.client.get("/public", headers=alice)
    assert status(await stack.client.get("/public", headers=alice)) == "HIT"


async def test_vary_keeps_variants_apart(stack: Stack) -> None:
    stack.origin.answers["/v"] = Answer(headers=[("vary", "Accept-Language")])
    await stack.configure(cache_strategy="disk")
    english = {"accept-language": "en"}
    await stack.client.get("/v", headers=english)
    assert status(await stack.client.get("/v", headers=english)) == "HIT"
    french = await stack.client.get("/v", headers={"accept-language": "fr"})
    assert (status(french), french.content) == ("MISS", b"GET /v #2")


async def test_cache_bypass_and_no_cache(stack: Stack) -> None:
    await stack.configure(
        cache_strategy="memory",
        cache_zone="memory_cache",
        cache_key=["$uri"],
        cache_bypass=["$arg_bypass"],
        no_cache=["$http_x_no_cache"],
    )
    assert status(await stack.client.get("/b", headers={"x-no-cache": "1"})) == "MISS"
    assert status(await stack.client.get("/b", headers={"x-no-cache": "0"})) == "MISS"
    assert status(await stack.client.get("/b?bypass=1")) == "BYPASS"
    hit = await stack.client.get("/b?bypass=0")
    # "0" is neither a bypass nor a no-cache: the answer to the second request was kept
    assert (status(hit), hit.content) == ("HIT", b"GET /b #2")
    assert stack.origin.hits["/b?bypass=1"] == 1


# -- limits ----------------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("chunked", [False, True], ids=["length", "chunked"])
async def test_a_body_over_the_limit_passes_intact_and_is_not_kept(
    stack: Stack, strategy: dict[str, Any], chunked: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(proxy_cache, "MAX_OBJECT_BYTES", 64 * 1024)
    big = os.urandom(64 * 1024 + 1)
    small = os.urandom(64 * 1024)
    stack.origin.answers["/big"] = Answer(body=big, chunked=chunked)
    stack.origin.answers["/small"] = Answer(body=small, chunked=chunked)
    await stack.configure(**strategy)
    for _ in range(2):
        response = await stack.client.get("/big")
        assert status(response) == "MISS"
        assert hashlib.sha256(response.content).digest() == hashlib.sha256(big).digest()
    assert stack.origin.hits["/big"] == 2
    await stack.client.get("/small")  # exactly at the limit: kept
    hit = await stack.client.get("/small")
    assert (status(hit), hit.content == small) == ("HIT", True)


async def test_the_memory_zone_drops_the_least_recently_used() -> None:
    def entry(size: int) -> CachedResponse:
        return CachedResponse(200, (), b"x" * size, 0.0, 1.0)

    store = MemoryStore(capacity=3 * entry(1000).size("k0"))
    for name in ("k0", "k1", "k2"):
        store.put(name, entry(1000))
    assert await store.get("k0") is not None  # k1 is now the least recently used
    store.put("k3", entry(1000))
    assert [await store.get(k) is not None for k in ("k0", "k1", "k2", "k3")] == [
        True,
        False,
        True,
        True,
    ]
    assert store.used <= store.capacity
    store.put("huge", entry(10_000))  # bigger than the zone: not kept, nothing dropped
    assert await store.get("huge") is None
    assert await store.get("k3") is not None


async def test_the_disk_zone_stays_within_its_budget(tmp_path: Path) -> None:
    def entry(body: bytes) -> CachedResponse:
        return CachedResponse(200, (("content-type", "text/plain"),), body, 0.0, 1.0)

    store = DiskStore(tmp_path, capacity=10_000)
    for number in range(8):
        store.put(f"k{number}", entry(bytes([number]) * 2000))
        assert await store.get(f"k{number}") is not None  # waits for its own write
    assert store.used <= 10_000
    await eventually(lambda: on_disk(tmp_path) <= 10_000)  # (files are removed in a thread)
    assert await store.get("k0") is None  # the oldest went first
    assert (await store.get("k7")) == entry(bytes([7]) * 2000)
    await store.aclose()
    # a new process finds the files, in age order, and keeps the same budget
    reopened = DiskStore(tmp_path, capacity=10_000)
    assert (await reopened.get("k7")) == entry(bytes([7]) * 2000)
    reopened.put("k8", entry(b"8" * 2000))
    await reopened.get("k8")
    assert await reopened.get("k8") is not None
    await eventually(lambda: reopened.used <= 10_000 and on_disk(tmp_path) <= 10_000)
    await reopened.aclose()


async def test_a_damaged_cache_file_is_a_miss(tmp_path: Path) -> None:
    store = DiskStore(tmp_path)
    store.put("k", CachedResponse(200, (), b"body", 0.0, 1.0))
    assert await store.get("k") is not None
    store.path("k").write_bytes(b"not a cache file")
    assert await store.get("k") is None
    assert store.path("k").name == digest("k")
    await store.aclose()


def on_disk(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


# -- lifetime: restarts, deploys, PURGE, keys ----------------------------------------------


async def test_the_disk_cache_survives_a_restart(tmp_path: Path, origin: Origin) -> None:
    clock = Clock()
    async with running(tmp_path / "cache", origin, clock) as first:
        await first.configure(cache_strategy="disk", cache_zone="zone_a")
        stored = await first.client.get("/r")
        assert status(stored) == "MISS"
    assert list((tmp_path / "cache" / "zone_a").rglob("*/*"))  # files under the zone
    async with running(tmp_path / "cache", origin, clock) as second:
        await second.configure(cache_strategy="disk", cache_zone="zone_a")
        hit = await second.client.get("/r")
        assert (status(hit), hit.content) == ("HIT", stored.content)
        assert comparable(hit) == comparable(stored)
    assert origin.hits["/r"] == 1


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_the_cache_survives_a_config_swap(stack: Stack, strategy: dict[str, Any]) -> None:
    await stack.configure(cache_ttl=300, **strategy)
    await stack.client.get("/d")
    await stack.configure(cache_ttl=600, **strategy)  # a new deploy, same zone
    assert stack.gw.versions() == {"env": 2}
    assert status(await stack.client.get("/d")) == "HIT"
    assert stack.origin.hits["/d"] == 1


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_purge_drops_one_entry(stack: Stack, strategy: dict[str, Any]) -> None:
    await stack.configure(**strategy)
    await stack.client.get("/p1")
    await stack.client.get("/p2")
    purged = await stack.client.request("PURGE", "/p1")
    assert (purged.status_code, purged.content) == (200, b"")
    assert (await stack.client.request("PURGE", "/p1")).status_code == 404
    assert (await stack.client.request("PURGE", "/never")).status_code == 404
    assert status(await stack.client.get("/p1")) == "MISS"
    assert status(await stack.client.get("/p2")) == "HIT"
    assert stack.origin.hits["/p1"] == 2
    assert "/never" not in stack.origin.hits


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_different_keys_do_not_collide(stack: Stack, strategy: dict[str, Any]) -> None:
    # concatenated, both would read "123"
    await stack.configure(cache_key=["$arg_a", "$arg_b"], **strategy)
    one = await stack.client.get("/k?a=1&b=23")
    two = await stack.client.get("/k?a=12&b=3")
    assert (status(one), status(two)) == ("MISS", "MISS")
    assert (await stack.client.get("/k?a=1&b=23")).content == one.content
    assert (await stack.client.get("/k?a=12&b=3")).content == two.content
    assert one.content != two.content


async def test_environments_do_not_share_entries(stack: Stack) -> None:
    await stack.configure(cache_strategy="disk", cache_key=["$uri"])
    await stack.client.get("/e")
    other = snapshot(stack.origin.port, [plugin("proxy-cache", 300, cache_key=["$uri"])])
    other.update(environment_id="env2", gateway_hosts=["other.example.com"])
    other["content_hash"] = content_hash({k: v for k, v in other.items() if k != "content_hash"})
    await stack.gw.apply(other)
    response = await stack.client.get("/e", headers={"Host": "other.example.com"})
    assert status(response) == "MISS"
    assert stack.origin.hits["/e"] == 2


def test_the_disk_cache_on_uvloop(tmp_path: Path, origin: Origin) -> None:
    """Production's loop: writes, big reads and purges leave the loop for threads and come
    back; hits right after the miss find the entry (a lookup waits for a write in flight)."""
    body = os.urandom(256 * 1024)  # over the inline-read size: read in a thread
    origin.answers["/u"] = Answer(body=body, chunked=True)

    async def scenario() -> None:
        async with running(tmp_path / "cache", origin, Clock()) as stack:
            await stack.configure(cache_strategy="disk")
            assert status(await stack.client.get("/u")) == "MISS"
            hits = await asyncio.gather(*(stack.client.get("/u") for _ in range(5)))
            assert [(status(h), h.content == body) for h in hits] == [("HIT", True)] * 5
            assert (await stack.client.request("PURGE", "/u")).status_code == 200
            assert status(await stack.client.get("/u")) == "MISS"
        async with running(tmp_path / "cache", origin, Clock()) as restarted:
            await restarted.configure(cache_strategy="disk")
            again = await restarted.client.get("/u")
            assert (status(again), again.content == body) == ("HIT", True)

    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(scenario())
    assert origin.hits["/u"] == 2
