"""The SSRF guard for every outbound connection whose address a user supplied (http-logger
endpoints, JWKS and OIDC discovery URLs, policy agents, Redis of rate limiters...).

A user who may configure a plugin must not be able to make the gateway call into the network
it runs in: loopback, private ranges, link-local (cloud metadata at 169.254.169.254),
carrier-grade NAT, multicast and reserved addresses are refused unless the operator allowed
them (``PORTICO_GATEWAY_EGRESS_ALLOW``, CIDRs). The name is resolved once and the connection
goes to the address that was checked, so a DNS answer that changes between the check and the
connect (rebinding) cannot slip through.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class EgressRefused(Exception):
    """The destination may not be reached from the gateway; the message says why."""


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

    @classmethod
    def allowing(cls, cidrs: Iterable[str]) -> EgressGuard:
        return cls(tuple(ipaddress.ip_network(c, strict=False) for c in cidrs))

    def permits(self, address: Address) -> bool:
        if any(address in network for network in self.allowed):
            return True
        return not _is_internal(address)

    async def resolve(self, host: str, port: int) -> str:
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
            if not self.permits(address):
                # one internal answer refuses the name: the resolver's order is not ours to trust
                raise EgressRefused(f"{host} resolves to {address}, an internal address")
        if not candidates:
            raise EgressRefused(f"cannot resolve {host}")
        return str(candidates[0])

    async def destination(self, url: str) -> Destination:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise EgressRefused("only absolute http(s) URLs are reachable")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        address = await self.resolve(parts.hostname, port)
        return Destination(parts.scheme, parts.hostname, address, port)
