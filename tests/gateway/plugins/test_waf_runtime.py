"""waf at run time, against Portico's real WAF engine: ``portico waf-engine`` (ModSecurity v3
through libmodsecurity3, with the OWASP Core Rule Set of Debian's ``modsecurity-crs``),
started once for the module. Attacks get 403 from the gateway, clean traffic reaches the
backend, and a stopped engine gives 503 (fail closed) or passes (fail open)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.gateway.plugins.conftest import Served
from tests.gateway.test_pipeline import plugin, snapshot
from tests.support.wafengine import WafEngine

LOOPBACK = ("127.0.0.0/8",)


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WafEngine]:
    with WafEngine(tmp_path_factory.mktemp("waf")) as running:
        yield running


def waf(port: int, **config: Any) -> dict[str, Any]:
    return plugin("waf", 50, host="127.0.0.1", port=port, **config)


async def gateway_with(served: Any, backend: int, config: dict[str, Any]) -> Served:
    gw, client, clock = await served(egress_allow=LOOPBACK)
    await gw.apply(snapshot(backend, [config]))
    return gw, client, clock


@pytest.mark.parametrize(
    ("what", "path", "headers"),
    [
        ("SQL injection", "/items?id=1' OR '1'='1", {}),
        ("XSS", "/search?q=<script>alert(1)</script>", {}),
        ("path traversal", "/download?file=..%2f..%2f..%2fetc%2fpasswd", {}),
        ("scanner (sqlmap)", "/", {"user-agent": "sqlmap/1.7.2#stable (https://sqlmap.org)"}),
        ("scanner (nikto)", "/", {"user-agent": "Mozilla/5.00 (Nikto/2.1.6) (Test:000001)"}),
    ],
)
async def test_attacks_are_refused_with_403(
    served: Any, backend: int, engine: WafEngine, what: str, path: str, headers: dict[str, str]
) -> None:
    _, client, _ = await gateway_with(served, backend, waf(engine.port))
    response = await client.get(path, headers=headers)
    assert response.status_code == 403, what
    assert response.json() == {"message": "Forbidden"}
    assert "path" not in response.text  # the backend's echo: never reached


async def test_an_attack_in_a_json_body_is_refused(
    served: Any, backend: int, engine: WafEngine
) -> None:
    _, client, _ = await gateway_with(served, backend, waf(engine.port))
    response = await client.post("/items", json={"name": "<script>alert(1)</script>"})
    assert response.status_code == 403


async def test_clean_traffic_reaches_the_backend_with_its_body(
    served: Any, backend: int, engine: WafEngine
) -> None:
    _, client, _ = await gateway_with(served, backend, waf(engine.port))
    got = await client.get("/items?id=42&sort=name", headers={"accept": "application/json"})
    assert got.status_code == 200
    assert got.json()["path"] == "/items?id=42&sort=name"
    posted = await client.post("/items", json={"name": "widget", "qty": 3})
    assert posted.status_code == 200
    assert posted.json()["body"] == '{"name":"widget","qty":3}'
    for _ in range(3):  # kept-alive connections to the engine are reused
        assert (await client.get("/items/7")).status_code == 200


async def test_a_stopped_engine_fails_closed_or_open_as_configured(
    served: Any, backend: int, tmp_path: Path
) -> None:
    with WafEngine(tmp_path / "waf") as doomed:
        port = doomed.port
        _, closed, _ = await gateway_with(served, backend, waf(port, fail_open=False))
        _, opened, _ = await gateway_with(served, backend, waf(port, fail_open=True))
        assert (await closed.get("/items")).status_code == 200  # connections now pooled
    refused = await closed.get("/items")
    assert refused.status_code == 503
    assert refused.json() == {"message": "WAF engine unavailable"}
    passed = await opened.get("/items?id=1")
    assert passed.status_code == 200
    assert passed.json()["path"] == "/items?id=1"


async def test_the_engine_is_behind_the_ssrf_guard(
    served: Any, backend: int, engine: WafEngine
) -> None:
    gw, client, _ = await served()  # loopback not allowed
    await gw.apply(snapshot(backend, [waf(engine.port)]))
    assert (await client.get("/items")).status_code == 503


async def test_an_engine_that_does_not_answer_in_time_fails_closed_or_open(
    served: Any, backend: int
) -> None:
    """A listener that accepts and never answers stands for an engine stuck on a request
    (the sleep is the plugin's ``timeout`` running out, the behaviour under test)."""
    with socket.create_server(("127.0.0.1", 0)) as mute:
        port = mute.getsockname()[1]
        _, closed, _ = await gateway_with(served, backend, waf(port, timeout=200))
        _, opened, _ = await gateway_with(served, backend, waf(port, timeout=200, fail_open=True))
        assert (await closed.get("/items")).status_code == 503
        passed = await opened.get("/items")
        assert passed.status_code == 200
        assert passed.json()["path"] == "/items"


async def test_a_body_larger_than_the_engine_inspects_is_refused_unless_passed(
    served: Any, backend: int, engine: WafEngine
) -> None:
    """An attack padded past the inspected size must not slip by: by default such a body is
    refused (413) before the engine is asked; ``oversized_body: pass`` forwards it, the
    engine judging the head alone. Chunked bodies are measured as they are read."""
    padded = {"pad": "x" * 2048, "name": "<script>alert(1)</script>"}
    _, client, _ = await gateway_with(served, backend, waf(engine.port, max_body_size=1024))
    assert (await client.post("/items", json=padded)).status_code == 413

    async def chunked() -> Any:
        yield b'{"pad": "' + b"x" * 2048 + b'"}'

    assert (await client.post("/items", content=chunked())).status_code == 413
    small = await client.post("/items", json={"name": "widget"})
    assert small.status_code == 200  # within the size: inspected and passed

    _, passing, _ = await gateway_with(
        served, backend, waf(engine.port, max_body_size=1024, oversized_body="pass")
    )
    forwarded = await passing.post("/items", json={"pad": "x" * 2048})
    assert forwarded.status_code == 200
    assert len(forwarded.json()["body"]) > 2048  # the whole body reached the backend
