"""Real backends on 127.0.0.1 for the HTTP engine's tests, and a gateway that forwards to them.

- ``echo_backend``: a threaded ``http.server`` (an independent HTTP/1.1 implementation) that
  echoes method, target, headers and body as JSON, plus a few routes that misbehave on purpose
  (slow, streamed, truncated, close-delimited, early answers, 1xx, hop-by-hop headers).
- ``raw_backend``: start an asyncio server with a per-connection coroutine (resets, silence,
  garbage, a WebSocket-ish echo).
- ``gateway``: serve() + forward() in front of a list of targets, recording each ProxyResult.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import hashlib
import json
import socket
import ssl
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

import pytest
import uvloop
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from portico.gateway.http import (
    Forwarding,
    Limits,
    OnResponse,
    ProxyResult,
    Request,
    Responder,
    Target,
    Timeouts,
    UpstreamPool,
    forward,
    serve,
    shutdown,
)
from tests.support.ports import free_port

_BLOCK = bytes(range(256)) * 256  # 64 KiB of known bytes


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> dict[str, Callable[[], asyncio.AbstractEventLoop]]:
    """Every test here runs on both loops: the default one and uvloop (production's)."""
    return {"asyncio": asyncio.new_event_loop, "uvloop": uvloop.new_event_loop}


class _Echo(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 30
    disable_nagle_algorithm = True  # headers and body leave in separate writes
    server: _EchoServer
    body_len = 0
    body_sha = ""

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _read_body(self, delay: float = 0.0) -> bytes:
        """The body, hashed as it arrives (``self.body_len``/``self.body_sha``); returned only
        when small, so that big uploads do not weigh on the memory tests."""
        digest = hashlib.sha256()
        kept: list[bytes] = []
        total = 0

        def take(data: bytes) -> None:
            nonlocal total
            digest.update(data)
            total += len(data)
            if total < 65536:
                kept.append(data)
            if delay:
                time.sleep(delay)  # (the behaviour: a backend that reads the body slowly)

        te = self.headers.get("Transfer-Encoding")
        if te is not None:
            assert te.lower() == "chunked", te
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                while size:
                    part = self.rfile.read(min(size, 65536))
                    take(part)
                    size -= len(part)
                self.rfile.readline()
        else:
            length = int(self.headers.get("Content-Length") or 0)
            while length:
                part = self.rfile.read(min(length, 65536))
                take(part)
                length -= len(part)
        self.body_len = total
        self.body_sha = digest.hexdigest()
        return b"".join(kept)

    def _query(self) -> dict[str, str]:
        return {k: v[0] for k, v in parse_qs(self.path.partition("?")[2]).items()}

    def _send(self, status: int, body: bytes, headers: list[tuple[str, str]] = ()) -> None:  # type: ignore[assignment]
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _dispatch(self) -> None:
        self.server.connections.add(self.client_address[1])
        route = self.path.partition("?")[0]
        query = self._query()
        handler = getattr(self, "r_" + route.strip("/").replace("-", "_"), None)
        if handler is None or not route.startswith("/_"):
            handler = self.r_echo
        handler(query)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_HEAD = _dispatch  # noqa: N815

    def r_echo(self, query: dict[str, str]) -> None:
        body = self._read_body(float(query.get("read_delay", 0)))
        payload = {
            "method": self.command,
            "target": self.path,
            "version": self.request_version,
            "headers": [[k.lower(), v] for k, v in self.headers.items()],
            "body_len": self.body_len,
            "body_sha256": self.body_sha,
            "body": body.decode("latin-1") if self.body_len < 65536 else None,
            "peer_port": self.client_address[1],
        }
        self._send(200, json.dumps(payload).encode(), [("Content-Type", "application/json")])

    def r__stream(self, query: dict[str, str]) -> None:
        self._read_body()
        chunks, size = int(query.get("chunks", 5)), int(query.get("size", 10))
        delay = float(query.get("delay", 0.01))
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        time.sleep(float(query.get("first_delay", 0)))  # (the behaviour: a stall after the head)
        for i in range(chunks):
            piece = bytes([48 + i % 10]) * size
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.flush()
            time.sleep(delay)  # (the behaviour: chunks that come apart)
        self.wfile.write(b"0\r\n\r\n")

    def r__big(self, query: dict[str, str]) -> None:
        self._read_body()
        size = int(query["size"])
        self.send_response(200)
        self.send_header("Content-Length", str(size))
        self.end_headers()
        sent = 0
        view = memoryview(_BLOCK)
        while sent < size:
            n = min(len(_BLOCK), size - sent)
            self.wfile.write(view[:n])
            sent += n
            self.server.progress = sent

    def r__status(self, query: dict[str, str]) -> None:
        self._read_body()
        self._send(int(query["code"]), b"status body")

    def r__slow(self, query: dict[str, str]) -> None:
        self._read_body()
        time.sleep(float(query["delay"]))  # (the behaviour: a backend that answers late)
        self._send(200, b"late")

    def r__truncate(self, query: dict[str, str]) -> None:
        self._read_body()
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")
        self.wfile.flush()
        self.close_connection = True

    def r__eof(self, query: dict[str, str]) -> None:
        self._read_body()
        self.wfile.write(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end")
        self.close_connection = True

    def r__early(self, query: dict[str, str]) -> None:
        self._send(413, b"too big for me", [("Connection", "close")])
        self.wfile.flush()
        # Closing with the unread upload in the socket sends a RST, which on Linux may discard
        # the answer before the gateway reads it: linger as real servers do, reading (and
        # dropping) what comes until the gateway, which has the answer, hangs up. (A fixed
        # pause here was a guess at how long the gateway takes to read it.)
        self.connection.settimeout(10)
        with contextlib.suppress(OSError):
            while self.rfile.read1(65536):
                pass
        self.close_connection = True

    def r__hints(self, query: dict[str, str]) -> None:
        self._read_body()
        self.wfile.write(b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n")
        self.wfile.flush()
        self._send(200, b"after hints")

    def r__hop(self, query: dict[str, str]) -> None:
        self._read_body()
        self._send(
            200,
            b"hop",
            [
                ("Connection", "X-Private, keep-alive"),
                ("X-Private", "secret"),
                ("Keep-Alive", "timeout=5"),
                ("Proxy-Connection", "keep-alive"),
                ("Trailer", "X-Checksum"),
                ("Upgrade", "h2c"),
                ("Proxy-Authenticate", "Basic"),
                ("Set-Cookie", "a=1"),
                ("Set-Cookie", "b=2"),
                ("X-Kept", "yes"),
            ],
        )


class _EchoServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    connections: set[int]
    progress: int

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # clients that hang up on purpose (timeouts, resets) are part of the tests


@dataclass
class EchoBackend:
    port: int
    server: _EchoServer

    @property
    def target(self) -> Target:
        return Target("127.0.0.1", self.port)

    @property
    def connections(self) -> set[int]:
        return self.server.connections


@pytest.fixture(scope="session")
def echo_backend() -> Iterator[EchoBackend]:
    server = _EchoServer(("127.0.0.1", 0), _Echo)
    server.connections = set()
    server.progress = 0
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield EchoBackend(server.server_address[1], server)
    server.shutdown()
    server.server_close()


@pytest.fixture
def echo(echo_backend: EchoBackend) -> EchoBackend:
    echo_backend.server.connections = set()
    echo_backend.server.progress = 0
    return echo_backend


ConnHandler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


RawBackend = Callable[..., Awaitable[int]]


@pytest.fixture
async def raw_backend() -> AsyncIterator[RawBackend]:
    servers: list[asyncio.Server] = []
    writers: list[asyncio.StreamWriter] = []

    async def start(on_connection: ConnHandler, tls: ssl.SSLContext | None = None) -> int:
        async def wrapped(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writers.append(writer)
            with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
                await on_connection(reader, writer)

        server = await asyncio.start_server(wrapped, "127.0.0.1", 0, ssl=tls)
        servers.append(server)
        port: int = server.sockets[0].getsockname()[1]
        return port

    yield start
    for server in servers:
        server.close()
    for writer in writers:
        writer.transport.abort()
    # until each aborted connection is closed (its connection_lost has run)
    await asyncio.wait_for(
        asyncio.gather(*(w.wait_closed() for w in writers), return_exceptions=True), 10
    )


async def read_head(reader: asyncio.StreamReader) -> bytes:
    return await reader.readuntil(b"\r\n\r\n")


def dead_port() -> int:
    """A port nothing listens on: ``free_port()``'s, which no other xdist worker hands out
    and which, unlike a port the kernel picks, no server of another test binds meanwhile."""
    return free_port()


@dataclass
class Gateway:
    port: int
    pool: UpstreamPool
    server: asyncio.Server
    results: list[ProxyResult] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


GatewayFactory = Callable[..., Awaitable[Gateway]]


@pytest.fixture
async def gateway() -> AsyncIterator[GatewayFactory]:
    made: list[Gateway] = []

    async def make(
        targets: list[Target],
        *,
        limits: Limits | None = None,
        timeouts: Timeouts | None = None,
        retries: int = 0,
        extra_headers: list[tuple[str, str]] | None = None,
        on_response: OnResponse | None = None,
        pool: UpstreamPool | None = None,
    ) -> Gateway:
        the_pool = pool or UpstreamPool()
        results: list[ProxyResult] = []

        async def handler(request: Request, responder: Responder) -> None:
            nodes = iter(targets)
            forwarding = Forwarding(
                request.path,
                request.header("host") or "",
                extra_headers or [],
                timeouts or Timeouts(connect=5, send=5, read=5),
                retries,
                on_response=on_response,
            )
            result = await forward(
                request, responder, forwarding, pool=the_pool, targets=lambda: next(nodes, None)
            )
            results.append(result)

        server = await serve(handler, "127.0.0.1", 0, limits=limits or Limits())
        gw = Gateway(server.sockets[0].getsockname()[1], the_pool, server, results)
        made.append(gw)
        return gw

    yield make
    for gw in made:
        await shutdown(gw.server, grace=0.5)
        await gw.pool.close()


async def raw_exchange(
    port: int, data: bytes | list[bytes], *, wait: float = 3.0, gap: float = 0.0
) -> RawResult:
    """Send raw bytes (pieces ``gap`` seconds apart), read until the server closes (or
    ``wait`` passes)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        for piece in [data] if isinstance(data, bytes) else data:
            if writer.is_closing() or reader.at_eof():
                break
            writer.write(piece)
            await writer.drain()
            if gap:
                await asyncio.sleep(gap)  # (the behaviour: a client that sends in pieces)
        return await read_all(reader, wait)
    finally:
        writer.transport.abort()


@dataclass
class RawResult:
    data: bytes
    closed: bool

    @property
    def status(self) -> int:
        return int(self.data.split(b" ", 2)[1])

    def responses(self) -> list[bytes]:
        return [b"HTTP/1.1" + part for part in self.data.split(b"HTTP/1.1")[1:]]


async def read_all(reader: asyncio.StreamReader, wait: float) -> RawResult:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait
    parts: list[bytes] = []
    while True:
        remaining = deadline - loop.time()
        if remaining <= 0:
            return RawResult(b"".join(parts), closed=False)
        try:
            part = await asyncio.wait_for(reader.read(65536), remaining)
        except TimeoutError:
            return RawResult(b"".join(parts), closed=False)
        except ConnectionResetError:
            return RawResult(b"".join(parts), closed=True)
        if not part:
            return RawResult(b"".join(parts), closed=True)
        parts.append(part)


ServerFactory = Callable[..., Awaitable[int]]


@pytest.fixture
async def http_server() -> AsyncIterator[ServerFactory]:
    """Start ``serve(handler)`` on a free port; returns the port."""
    servers: list[asyncio.Server] = []

    async def start(
        handler: Callable[[Request, Responder], Awaitable[None]], limits: Limits | None = None
    ) -> int:
        server = await serve(handler, "127.0.0.1", 0, limits=limits or Limits())
        servers.append(server)
        port: int = server.sockets[0].getsockname()[1]
        return port

    yield start
    for server in servers:
        await shutdown(server, grace=0.5)


@pytest.fixture
def blackhole_port() -> Iterator[int]:
    """A port whose accept queue is full: connecting to it hangs (for connect timeouts)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port: int = listener.getsockname()[1]
    filler = socket.socket()
    filler.connect(("127.0.0.1", port))
    yield port
    filler.close()
    listener.close()


@dataclass
class TlsMaterial:
    server: ssl.SSLContext
    client: ssl.SSLContext


@pytest.fixture(scope="session")
def tls_material(tmp_path_factory: pytest.TempPathFactory) -> TlsMaterial:
    """A self-signed certificate for ``localhost``; the client context trusts only it."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    directory = tmp_path_factory.mktemp("tls")
    cert_file, key_file = directory / "cert.pem", directory / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(cert_file, key_file)
    client = ssl.create_default_context(cafile=str(cert_file))
    return TlsMaterial(server, client)
