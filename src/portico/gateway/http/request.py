"""The request as handlers see it, and the checks a request head must pass.

``RequestHead`` collects the target and headers from the parser and turns them into a
``Request`` — or refuses them with a ``HeadError`` carrying the status (400, 405, 413, 417, 431,
505). llhttp already refuses most smuggling shapes; the checks here are the ones it lets through
(see ``build``).
"""

from __future__ import annotations

from typing import Final

from .body import EMPTY_BODY, RequestBody
from .channel import Channel
from .names import HEADER_NAMES


class Request:
    """One request as handlers see it. (A plain class, not a dataclass: one is made per
    request; see CONVENTIONS.md "Compiled modules".)"""

    __slots__ = (
        "body",
        "client_ip",
        "client_port",
        "connection",
        "content_length",
        "headers",
        "host",
        "http_version",
        "keep_alive",
        "method",
        "path",
        "query",
        "request_id",
        "scheme",
        "target",
        "upgrade",
    )

    def __init__(
        self,
        method: str,
        target: str,
        path: str,
        query: str,
        headers: list[tuple[str, str]],
        client_ip: str,
        client_port: int,
        scheme: str,
        keep_alive: bool,
        upgrade: bool,
        content_length: int | None,
        body: RequestBody,
        http_version: str = "1.1",
        host: str = "",
        request_id: str = "",
        connection: str | None = None,
    ) -> None:
        self.method = method
        self.target = target  # as received (latin-1)
        self.path = path  # before "?", still percent-encoded
        self.query = query  # after "?", "" if none
        self.headers = headers  # in order, names lower-cased
        self.client_ip = client_ip
        self.client_port = client_port
        self.scheme = scheme
        self.keep_alive = keep_alive
        self.upgrade = upgrade  # Connection: upgrade + Upgrade
        self.content_length = content_length  # None when chunked or without body
        self.body = body
        self.http_version = http_version
        self.host = host  # the Host header as received ("" without one)
        self.request_id = request_id  # the X-Request-Id header as received ("" without one)
        self.connection = connection  # the Connection header(s), comma-joined

    def header(self, name: str) -> str | None:
        """First value of ``name`` (case-insensitive)."""
        name = name.lower()
        for key, value in self.headers:
            if key == name:
                return value
        return None


class HeadError(Exception):
    """The request head is refused with ``status``; the connection is closed after the answer."""

    def __init__(self, status: int, message: str | None = None) -> None:
        super().__init__(status, message)
        self.status = status
        self.message = message


_METHODS: Final = {
    m.encode(): m for m in ("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS")
}
_SPECIAL: Final = frozenset(
    {
        "content-length",
        "transfer-encoding",
        "host",
        "expect",
        "x-request-id",
        "connection",
        "upgrade",
    }
)


class RequestHead:
    """Accumulates one request head (one instance per connection, reused). ``on_url`` and
    ``on_header`` are handed to the parser directly.

    ``refused`` is the ``HeadError`` a parser callback raised, kept for the protocol: the
    parser's own error reaches it in its stead, and the ``__context__`` httptools gives that
    error is overwritten by Python with whatever exception the thread is handling when it
    is raised (a server run from an ``except`` block answered 400 for every 413 and 417)."""

    __slots__ = (
        "_connection",
        "_content_length",
        "_expect",
        "_host",
        "_host_count",
        "_max_headers",
        "_request_id",
        "_te",
        "headers",
        "open",
        "refused",
        "size",
        "upgrade_offered",
        "url",
    )

    def __init__(self, max_headers: int) -> None:
        self._max_headers = max_headers
        self.open = False  # between on_message_begin and on_headers_complete
        self.refused: HeadError | None = None
        self.reset()

    def refuse(self, error: HeadError) -> HeadError:
        """``error``, kept as ``refused``: raise what it returns from a parser callback."""
        self.refused = error
        return error

    def reset(self) -> None:
        self.url: bytes | None = None
        self.headers: list[tuple[str, str]] = []
        self.size = 0
        self._content_length: str | None = None
        self._te: str | None = None
        self._host_count = 0
        self._host = ""
        self._request_id = ""
        self._connection: str | None = None
        self._expect: str | None = None
        self.upgrade_offered = False  # an Upgrade header came (llhttp upgrades only then)

    @property
    def has_connection_header(self) -> bool:
        return self._connection is not None

    def on_url(self, url: bytes) -> None:
        self.url = url if self.url is None else self.url + url

    def on_header(self, name: bytes, value: bytes) -> None:
        if not self.open:
            return  # trailer fields of a chunked body are dropped, as nginx does
        key = HEADER_NAMES.get(name)
        if key is None:
            key = name.decode("latin-1").lower()
        text = value.decode("latin-1")
        headers = self.headers
        headers.append((key, text))
        self.size += len(name) + len(value) + 4
        if key in _SPECIAL:
            if key == "content-length":
                self._content_length = text
            elif key == "transfer-encoding":
                if self._te is not None:
                    raise self.refuse(HeadError(400))
                self._te = text
            elif key == "host":
                self._host_count += 1
                self._host = text
            elif key == "x-request-id":
                if not self._request_id:
                    self._request_id = text
            elif key == "connection":
                seen = self._connection
                self._connection = text if seen is None else f"{seen},{text}"
            elif key == "upgrade":
                self.upgrade_offered = True
            else:
                self._expect = text
        if len(headers) > self._max_headers:
            raise self.refuse(HeadError(431))

    def build(
        self,
        proto: Channel,
        raw_method: bytes,
        version: str,
        upgrade: bool,
        keep_alive: bool,
    ) -> tuple[Request, bool]:
        """The request (and whether it is HTTP/1.0), or ``HeadError``."""
        limits = proto.limits
        url = self.url or b""
        if self.size + len(url) > limits.max_header_bytes:
            raise HeadError(431)
        method = _METHODS.get(raw_method) or raw_method.decode("latin-1")
        http10 = False
        if version != "1.1":
            if version == "1.0":
                http10 = True
            elif version[0] >= "2":
                raise HeadError(505)
            else:
                raise HeadError(400)
        if method == "CONNECT":
            raise HeadError(405)
        if self._host_count != 1 and (self._host_count > 1 or not http10):
            raise HeadError(400)  # RFC 9112 §3.2: exactly one Host (HTTP/1.0 may omit it)
        headers = self.headers
        host = self._host
        target = url.decode("latin-1")
        q = target.find("?")
        path, query = (target, "") if q < 0 else (target[:q], target[q + 1 :])
        if path[:1] != "/":
            path, host = _other_form(path, method, headers, host)
        expect = self._expect
        if expect is not None:
            if http10:
                expect = None
            elif expect.lower() != "100-continue":
                raise HeadError(417)
        body = EMPTY_BODY
        content_length: int | None = None
        te = self._te
        if te is not None:
            # Anything but exactly "chunked" (xchunked, "chunked, identity", trailing
            # whitespace, HTTP/1.0) could be framed differently by an upstream: refuse.
            if http10 or self._content_length is not None or te.lower() != "chunked":
                raise HeadError(400)
            body = RequestBody(proto, chunked=True, expect_continue=expect is not None)
        elif self._content_length is not None:
            content_length = int(self._content_length)  # llhttp checked it is only digits
            if content_length > limits.max_body_bytes:
                raise HeadError(413)
            if content_length:
                body = RequestBody(proto, chunked=False, expect_continue=expect is not None)
        if upgrade and body is not EMPTY_BODY:
            raise HeadError(400, "request body on an upgrade request")
        request = Request(
            method,
            target,
            path,
            query,
            headers,
            proto.client_ip,
            proto.client_port,
            "http",
            keep_alive,
            upgrade,
            content_length,
            body,
            version,
            host,
            self._request_id,
            self._connection,
        )
        self.reset()
        return request, http10


def _other_form(
    path: str, method: str, headers: list[tuple[str, str]], host: str
) -> tuple[str, str]:
    """asterisk-form (``OPTIONS *``) or absolute-form (RFC 9112 §3.2.2: the authority replaces
    Host and the path is what follows it); anything else is a 400. Returns the path and the
    Host."""
    if path == "*" and method == "OPTIONS":
        return path, host
    lower = path[:8].lower()
    if not lower.startswith(("http://", "https://")):
        raise HeadError(400)
    rest = path[path.index("//") + 2 :]
    slash = rest.find("/")
    authority, path = (rest, "/") if slash < 0 else (rest[:slash], rest[slash:])
    if not authority:
        raise HeadError(400)
    for i, (key, _) in enumerate(headers):
        if key == "host":
            headers[i] = ("host", authority)
    return path, authority
