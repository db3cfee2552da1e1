"""ASGI middleware shared by the REST surfaces: request id, client address, body limit,
access log. Pure ASGI (no BaseHTTPMiddleware) so that bodies stream and nothing is buffered
twice."""

from __future__ import annotations

import ipaddress
import logging
import re
import time
import uuid
from collections.abc import Iterable

from fastapi import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from portico.core.errors import PayloadTooLarge
from portico.core.logging import request_id_var
from portico.core.problems import problem_response

access_log = logging.getLogger("portico.access")

_VALID_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_networks(cidrs: Iterable[str]) -> tuple[IPNetwork, ...]:
    return tuple(ipaddress.ip_network(c, strict=False) for c in cidrs)


def client_address(
    peer: str | None, forwarded_for: str | None, trusted: tuple[IPNetwork, ...]
) -> str | None:
    """The client's address: the socket peer, unless the peer is a trusted proxy, in which case
    ``X-Forwarded-For`` is walked right to left past trusted hops (as nginx's real_ip does)."""
    if peer is None or not trusted or not forwarded_for:
        return peer
    if not _in(peer, trusted):
        return peer
    hops = [h.strip() for h in forwarded_for.split(",") if h.strip()]
    for hop in reversed(hops):
        try:
            ipaddress.ip_address(hop)
        except ValueError:
            return peer
        if not _in(hop, trusted):
            return hop
    return hops[0] if hops else peer


def _in(address: str, networks: tuple[IPNetwork, ...]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in net for net in networks)


class RequestContextMiddleware:
    """Assigns ``request_id`` and ``client_ip`` to ``scope['state']``, echoes ``X-Request-Id``,
    refuses bodies over ``max_body_bytes`` with 413, and writes one access-log line per request
    (method, path without query string, status, duration: never headers or bodies)."""

    def __init__(
        self, app: ASGIApp, *, max_body_bytes: int, trusted_proxies: Iterable[str] = ()
    ) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.trusted = parse_networks(trusted_proxies)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        incoming = headers.get("x-request-id", "")
        request_id = incoming if _VALID_REQUEST_ID.match(incoming) else uuid.uuid4().hex
        client = scope.get("client")
        peer: str | None = client[0] if client else None
        state = scope.setdefault("state", {})
        state["request_id"] = request_id
        state["client_ip"] = client_address(peer, headers.get("x-forwarded-for"), self.trusted)
        token = request_id_var.set(request_id)
        started = time.perf_counter()
        status = 500

        declared = headers.get("content-length")
        too_large = (
            declared is not None and declared.isdigit() and int(declared) > self.max_body_bytes
        )
        if scope["method"] in _BODY_METHODS and too_large:
            await problem_response(PayloadTooLarge())(scope, receive, send)
            request_id_var.reset(token)
            return

        received = 0

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body_bytes:
                    # FastAPI turns errors raised while it reads a body into a 400, except
                    # its own HTTPException: raise that, rendered as the 413 problem.
                    raise HTTPException(413, PayloadTooLarge.default_detail)
            return message

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message.setdefault("headers", [])
                message["headers"] = [
                    *message["headers"],
                    (b"x-request-id", request_id.encode()),
                ]
            await send(message)

        try:
            await self.app(scope, limited_receive, send_with_id)
        finally:
            access_log.info(
                "%s %s %s",
                scope["method"],
                scope["path"],
                status,
                extra={
                    "method": scope["method"],
                    "path": scope["path"],
                    "status": status,
                    "duration_ms": round((time.perf_counter() - started) * 1000, 2),
                    "client_ip": state["client_ip"],
                },
            )
            request_id_var.reset(token)


def _headers(scope: Scope) -> dict[str, str]:
    """The request's fields, each one's lines joined in order with ", " (RFC 9110 §5.3).

    Keeping only one line of a repeated field is a hole: a proxy may add its own
    ``X-Forwarded-For`` line (HAProxy's ``option forwardfor``) after the client's, and the
    right-to-left walk of ``client_address`` must see the proxy's hop last, or the client
    picks its own address (and so its rate-limit budget and what the audit log records)."""
    raw: list[tuple[bytes, bytes]] = scope.get("headers", [])
    lines: dict[str, list[str]] = {}
    for key, value in raw:
        lines.setdefault(key.decode("latin-1").lower(), []).append(value.decode("latin-1"))
    return {name: ", ".join(values) for name, values in lines.items()}
