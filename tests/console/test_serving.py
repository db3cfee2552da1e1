"""How the management port serves the console's built files (portico/console.py): hashed
assets cached for good, every other /console/ path the index (a deep link reaches the
client's router) with its security headers, and a clear 503 problem when nothing is built."""

from __future__ import annotations

from pathlib import Path

import httpx
from fastapi import FastAPI

from portico.console import mount_console
from portico.core.problems import install_problem_handlers

INDEX = b"<!doctype html><title>Portico console</title>"
ASSET = b"console.log('built');"


def _client(directory: Path) -> httpx.AsyncClient:
    app = FastAPI()
    install_problem_handlers(app)
    mount_console(app, directory)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://console")


def _built(root: Path) -> Path:
    (root / "assets").mkdir(parents=True)
    (root / "index.html").write_bytes(INDEX)
    (root / "assets" / "index-3f2a.js").write_bytes(ASSET)
    return root


async def test_assets_are_files_cached_for_good(tmp_path: Path) -> None:
    async with _client(_built(tmp_path / "dist")) as client:
        asset = await client.get("/console/assets/index-3f2a.js")
        assert asset.status_code == 200 and asset.content == ASSET
        assert asset.headers["cache-control"] == "public, max-age=31536000, immutable"
        missing = await client.get("/console/assets/gone-0000.js")
        assert missing.status_code == 404
        assert "immutable" not in missing.headers.get("cache-control", "")
        outside = await client.get("/console/assets/..%2F..%2Fsecret")
        assert outside.status_code == 404


async def test_every_page_is_the_index_with_its_headers(tmp_path: Path) -> None:
    async with _client(_built(tmp_path / "dist")) as client:
        root = await client.get("/console")
        assert root.status_code == 308 and root.headers["location"] == "/console/"
        for path in ("/console/", "/console/environments/3c1e/nodes", "/console/apis"):
            page = await client.get(path)
            assert page.status_code == 200 and page.content == INDEX, path
            assert page.headers["content-type"].startswith("text/html")
            assert page.headers["cache-control"] == "no-cache"
            policy = page.headers["content-security-policy"]
            assert "frame-ancestors 'none'" in policy
            assert "script-src 'self' 'unsafe-eval';" in policy  # no inline script
            assert page.headers["x-content-type-options"] == "nosniff"


async def test_an_unbuilt_console_is_a_clear_503(tmp_path: Path) -> None:
    async with _client(tmp_path / "never-built") as client:
        page = await client.get("/console/")
    assert page.status_code == 503
    assert page.headers["content-type"] == "application/problem+json"
    problem = page.json()
    assert problem["type"].endswith("/console-not-built")
    assert str(tmp_path / "never-built") in problem["detail"]
