"""``core.egress.guarded_get``: redirects followed one by one, each location checked by the
guard, credentials sent to the first URL's origin only. Real servers on loopback."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from portico.core.egress import (
    BodyTooLarge,
    EgressGuard,
    EgressRefused,
    guarded_get,
    read_bounded,
)
from tests.support.live_server import serving


async def _echo(request: Request) -> Response:
    return JSONResponse({"authorization": request.headers.get("authorization")})


async def _redirect(request: Request) -> Response:
    return RedirectResponse(request.query_params["to"], status_code=302)


APP = Starlette(routes=[Route("/echo", _echo), Route("/redirect", _redirect)])


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[str, str]]:
    with serving(APP, "egress-a") as a, serving(APP, "egress-b", host="127.0.0.2") as b:
        yield a, b


async def test_credentials_go_to_the_first_origin_only(servers: tuple[str, str]) -> None:
    a, b = servers
    guard = EgressGuard.allowing(["127.0.0.0/8"])
    headers = {"Authorization": "Bearer psa_secret"}
    async with httpx.AsyncClient(timeout=10) as client:
        same = await guarded_get(client, guard, f"{a}/redirect?to=/echo", headers=headers)
        assert json.loads(await read_bounded(same, 1024)) == {"authorization": "Bearer psa_secret"}
        other = await guarded_get(client, guard, f"{a}/redirect?to={b}/echo", headers=headers)
        assert json.loads(await read_bounded(other, 1024)) == {"authorization": None}


async def test_a_body_is_read_up_to_its_bound_only(servers: tuple[str, str]) -> None:
    a, _ = servers
    guard = EgressGuard.allowing(["127.0.0.0/8"])
    async with httpx.AsyncClient(timeout=10) as client:
        echoed = await guarded_get(client, guard, f"{a}/echo")
        assert not echoed.is_closed  # streamed: nothing read yet
        body = await read_bounded(echoed, 1024)
        assert json.loads(body) == {"authorization": None} and echoed.is_closed
        too_long = await guarded_get(client, guard, f"{a}/echo")
        with pytest.raises(BodyTooLarge, match="more than 5 bytes"):
            await read_bounded(too_long, 5)
        assert too_long.is_closed


async def test_each_location_is_checked(servers: tuple[str, str]) -> None:
    a, b = servers
    only_b = EgressGuard.allowing(["127.0.0.2/32"])
    async with httpx.AsyncClient(timeout=10) as client:
        with pytest.raises(EgressRefused, match=r"127\.0\.0\.1, an internal address"):
            await guarded_get(client, only_b, f"{b}/redirect?to={a}/echo")
        loop = f"{b}/redirect?to=/redirect%3Fto%3D/echo"
        assert (await guarded_get(client, only_b, loop)).status_code == 200
        with pytest.raises(EgressRefused, match="more than 0 redirects"):
            await guarded_get(client, only_b, f"{b}/redirect?to=/echo", max_redirects=0)


async def test_a_trusted_origin_passes_whatever_its_address(servers: tuple[str, str]) -> None:
    a, _ = servers
    trusting = EgressGuard.allowing([], trusted_urls=[a])
    async with httpx.AsyncClient(timeout=10) as client:
        assert (await guarded_get(client, trusting, f"{a}/echo")).status_code == 200
        with pytest.raises(EgressRefused, match="an internal address"):
            await guarded_get(client, trusting, a.replace("127.0.0.1", "127.0.0.2") + "/echo")
