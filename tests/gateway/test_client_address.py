"""Who the client is behind a load balancer: X-Forwarded-For is believed only from trusted
peers, right to left, so a client cannot name itself."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from portico.gateway.gateway import Gateway
from portico.gateway.http.body import EMPTY_BODY
from portico.gateway.http.server import Request
from portico.gateway.node_options import GatewayOptions
from portico.gateway.routing.client_address import ClientAddress
from tests.gateway import test_pipeline
from tests.gateway.test_pipeline import HOST, plugin, running, snapshot

backend = test_pipeline.backend  # the fixture


def request(peer: str, *forwarded: str) -> Request:
    headers = [("host", HOST)] + [("x-forwarded-for", value) for value in forwarded]
    return Request("GET", "/", "/", "", headers, peer, 1234, "http", True, False, None, EMPTY_BODY)


@pytest.mark.parametrize(
    ("peer", "forwarded", "client"),
    [
        ("203.0.113.9", ("1.2.3.4",), "203.0.113.9"),  # untrusted peer: header ignored
        ("10.0.0.2", ("1.2.3.4",), "1.2.3.4"),
        ("10.0.0.2", ("6.6.6.6, 1.2.3.4",), "1.2.3.4"),  # the client's own claim is left
        ("10.0.0.2", ("6.6.6.6, 1.2.3.4, 10.0.0.7",), "1.2.3.4"),  # proxies skipped
        ("10.0.0.2", ("6.6.6.6", "1.2.3.4"), "1.2.3.4"),  # repeated header = one list
        ("10.0.0.2", ("garbage",), "10.0.0.2"),
        ("10.0.0.2", (), "10.0.0.2"),
        ("10.0.0.2", ("2001:db8::1",), "2001:db8::1"),
    ],
)
def test_the_client_is_the_rightmost_untrusted_address(
    peer: str, forwarded: tuple[str, ...], client: str
) -> None:
    addresses = ClientAddress(GatewayOptions(trusted_proxies=("10.0.0.0/8",)).trusted_networks())
    assert addresses.of(request(peer, *forwarded)) == client


def test_without_trusted_proxies_the_socket_decides() -> None:
    assert ClientAddress(()).of(request("127.0.0.1", "1.2.3.4")) == "127.0.0.1"


@pytest.fixture
async def behind_a_balancer() -> AsyncIterator[tuple[Gateway, httpx.AsyncClient]]:
    gw = Gateway(options=GatewayOptions(trusted_proxies=("127.0.0.0/8",)))
    async with running(gw) as client:
        yield gw, client


async def test_ip_restriction_sees_the_forwarded_client(
    behind_a_balancer: tuple[Gateway, httpx.AsyncClient], backend: int
) -> None:
    gw, client = behind_a_balancer
    await gw.apply(snapshot(backend, [plugin("ip-restriction", 10, whitelist=["198.51.100.0/24"])]))
    allowed = await client.get("/x", headers={"x-forwarded-for": "198.51.100.7"})
    assert allowed.status_code == 200
    # the upstream sees the chain with the balancer appended
    assert allowed.json()["headers"]["x-forwarded-for"] == "198.51.100.7, 127.0.0.1"
    spoofed = await client.get("/x", headers={"x-forwarded-for": "198.51.100.7, 203.0.113.1"})
    assert spoofed.status_code == 403
