"""Who the client is when the gateway sits behind a load balancer.

``X-Forwarded-For`` is believed only from peers the operator listed
(``PORTICO_GATEWAY_TRUSTED_PROXIES``); the client is then the right-most address of the header
that is not itself a trusted proxy (nginx's ``real_ip_recursive on``). Anything to the left of
it was written by the client and could say anything, so ip-restriction, rate-limit keys and
logs never rely on it. From any other peer the header is ignored.
"""

from __future__ import annotations

import ipaddress

from portico.gateway.egress import Network
from portico.gateway.http.server import Request


class ClientAddress:
    __slots__ = ("_trusted",)

    def __init__(self, trusted: tuple[Network, ...]) -> None:
        self._trusted = trusted

    def _is_trusted(self, value: str) -> bool:
        try:
            address = ipaddress.ip_address(value)
        except ValueError:
            return False
        return any(address in network for network in self._trusted)

    def of(self, request: Request) -> str:
        peer = request.client_ip
        if not self._trusted or not self._is_trusted(peer):
            return peer
        forwarded = [
            value.strip()
            for name, header in request.headers
            if name == "x-forwarded-for"
            for value in header.split(",")
        ]
        for candidate in reversed(forwarded):
            if not self._is_trusted(candidate):
                try:
                    return str(ipaddress.ip_address(candidate))
                except ValueError:
                    return peer  # garbage where an address should be: trust the socket
        return forwarded[0] if forwarded else peer
