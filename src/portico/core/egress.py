"""The SSRF guard for every outbound connection whose address a user supplied: the
gateway's (http-logger endpoints, JWKS and OIDC discovery URLs, policy agents, Redis of rate
limiters...) and the marketplace's (gateway connections, OpenAPI document URLs).

A user who may configure a plugin or a connection must not be able to make Portico call into
the network it runs in: loopback, private ranges, link-local (cloud metadata at
169.254.169.254), carrier-grade NAT, multicast and reserved addresses are refused unless the
operator allowed them (``PORTICO_GATEWAY_EGRESS_ALLOW``, ``PORTICO_MARKETPLACE_EGRESS_ALLOW``,
CIDRs). The name is resolved once and the connection goes to the address that was checked, so
a DNS answer that changes between the check and the connect (rebinding) cannot slip through.

Kernel code: the gateway (``gateway/egress.py``, ``gateway/outbound.py`` re-export it) and the
marketplace both use it, and neither may import the other.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class EgressRefused(Exception):
    """The destination may not be reached; the message says why."""


def _is_internal(address: Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return (
        address.is_loopback
        or address.is_private
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
        or address in ipaddress.ip_network("100.64.0.0/10")
    )


@dataclass(frozen=True)
class Destination:
    """Where to connect: the checked address, and the name to present (Host, TLS SNI)."""

    scheme: str
    hostname: str
    address: str
    port: int

    @property
    def url_base(self) -> str:
        host = f"[{self.address}]" if ":" in self.address else self.address
        return f"{self.scheme}://{host}:{self.port}"


@dataclass(frozen=True)
class EgressGuard:
    allowed: tuple[Network, ...] = field(default_factory=tuple)
    #: ``(scheme, host, port)`` reachable whatever their addresses: what the operator
    #: configured (the installation's own control plane), not what a user typed
    trusted_origins: frozenset[tuple[str, str, int]] = field(default_factory=frozenset)

    @classmethod
    def allowing(cls, cidrs: Iterable[str], *, trusted_urls: Iterable[str] = ()) -> EgressGuard:
        return cls(
            tuple(ipaddress.ip_network(c, strict=False) for c in cidrs),
            frozenset(o for o in map(_origin, trusted_urls) if o is not None),
        )

    def permits(self, address: Address) -> bool:
        if any(address in network for network in self.allowed):
            return True
        return not _is_internal(address)

    async def resolve(self, host: str, port: int, *, trusted: bool = False) -> str:
        """An address of ``host`` the gateway may connect to, or :class:`EgressRefused`."""
        try:
            literal = ipaddress.ip_address(host.strip("[]"))
        except ValueError:
            literal = None
        if literal is not None:
            candidates: list[Address] = [literal]
        else:
            loop = asyncio.get_running_loop()
            try:
                infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            except OSError as error:
                raise EgressRefused(f"cannot resolve {host}: {error}") from None
            candidates = [ipaddress.ip_address(info[4][0]) for info in infos]
        for address in candidates:
            if not trusted and not self.permits(address):
                # one internal answer refuses the name: the resolver's order is not ours to trust
                raise EgressRefused(f"{host} resolves to {address}, an internal address")
        if not candidates:
            raise EgressRefused(f"cannot resolve {host}")
        return str(candidates[0])

    async def destination(self, url: str) -> Destination:
        try:
            parts = urlsplit(url)
            hostname = parts.hostname
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError as error:  # a malformed bracketed address, a port out of range
            raise EgressRefused(f"not a valid URL: {error}") from None
        if parts.scheme not in ("http", "https") or not hostname:
            raise EgressRefused("only absolute http(s) URLs are reachable")
        trusted = (parts.scheme, hostname, port) in self.trusted_origins
        address = await self.resolve(hostname, port, trusted=trusted)
        return Destination(parts.scheme, hostname, address, port)


def _origin(url: str) -> tuple[str, str, int] | None:
    try:
        parts = urlsplit(url)
        hostname, port = parts.hostname, parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not hostname:
        return None
    return parts.scheme, hostname, port or (443 if parts.scheme == "https" else 80)


async def guarded_request(
    client: httpx.AsyncClient,
    guard: EgressGuard,
    method: str,
    url: str,
    *,
    stream: bool = False,
    **kwargs: Any,
) -> httpx.Response:
    """``client.request`` to ``url`` pinned to an address ``guard`` permits; raises
    :class:`EgressRefused` otherwise. The request goes to the address the guard checked; the
    URL's host name still travels as the ``Host`` header and as the TLS server name, so
    virtual hosting and certificate checks work. Redirects are not followed (a redirect is a
    new, unchecked destination): :func:`guarded_get` follows them, checking each. With
    ``stream`` the body is left unread (read it with :func:`read_bounded`)."""
    destination = await guard.destination(url)
    parts = urlsplit(url)
    pinned = urlunsplit(
        (parts.scheme, destination.url_base.split("://", 1)[1], parts.path or "/", parts.query, "")
    )
    headers = dict(kwargs.pop("headers", None) or {})
    default_port = 443 if parts.scheme == "https" else 80
    headers.setdefault(
        "host",
        destination.hostname
        if destination.port == default_port
        else f"{destination.hostname}:{destination.port}",
    )
    extensions = {"sni_hostname": destination.hostname} if parts.scheme == "https" else {}
    request = client.build_request(method, pinned, headers=headers, extensions=extensions, **kwargs)
    return await client.send(request, stream=stream, follow_redirects=False)


#: how many redirects :func:`guarded_get` follows before giving up
MAX_REDIRECTS = 5


async def guarded_get(
    client: httpx.AsyncClient,
    guard: EgressGuard,
    url: str,
    *,
    headers: dict[str, str] | None = None,
    max_redirects: int = MAX_REDIRECTS,
) -> httpx.Response:
    """A GET through :func:`guarded_request` that follows redirects itself, each new
    location checked by ``guard`` like the first URL (so a public URL cannot redirect into
    the internal network). Credentials in ``headers`` go only to the first URL's origin.

    The answer's body is not read: the caller reads it with :func:`read_bounded` (or closes
    the response), so that a destination cannot make Portico hold a body of any size."""
    first = _origin(url)
    for _ in range(max_redirects + 1):
        sent = headers if _origin(url) == first else None
        response = await guarded_request(client, guard, "GET", url, headers=sent, stream=True)
        if not response.is_redirect:
            return response
        location = response.headers.get("location", "")
        await response.aclose()
        if not location:
            return response
        url = urljoin(url, location)
    raise EgressRefused(f"more than {max_redirects} redirects")


class BodyTooLarge(Exception):
    """An answer's body is longer than the reader accepts."""


async def read_bounded(response: httpx.Response, limit: int) -> bytes:
    """The body of a streamed ``response``, or :class:`BodyTooLarge` as soon as more than
    ``limit`` bytes arrived (the rest is never read: the connection is closed)."""
    chunks, size = [], 0
    try:
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > limit:
                raise BodyTooLarge(f"more than {limit} bytes")
            chunks.append(chunk)
    finally:
        await response.aclose()
    return b"".join(chunks)
