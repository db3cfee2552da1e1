"""How the management port serves the developer portal's built files (portico/portal/pages.py
through portico/web_pages.py, as the console's: tests/console/test_serving.py): under
/portal/, with a policy that lets the API reference's search run in a worker and still no
eval nor inline script, and its own clear 503 problem when nothing is built."""

from __future__ import annotations

from pathlib import Path

import httpx
from fastapi import FastAPI

from portico.console import mount_console
from portico.core.problems import install_problem_handlers
from portico.portal.pages import PORTAL
from portico.web_pages import mount_pages


def _client(console: Path, portal: Path) -> httpx.AsyncClient:
    app = FastAPI()
    install_problem_handlers(app)
    mount_console(app, console)
    mount_pages(app, PORTAL, portal)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://portico")


async def test_the_portal_beside_the_console_each_with_its_policy(tmp_path: Path) -> None:
    for name in ("console", "portal"):
        (tmp_path / name / "assets").mkdir(parents=True)
        (tmp_path / name / "index.html").write_text(f"<title>{name}</title>")
        (tmp_path / name / "assets" / f"{name}-1a2b.js").write_text(f"// {name}")
    async with _client(tmp_path / "console", tmp_path / "portal") as client:
        root = await client.get("/portal")
        assert root.status_code == 308 and root.headers["location"] == "/portal/"
        page = await client.get("/portal/apps/0b9e/subscriptions")
        assert page.status_code == 200 and page.text == "<title>portal</title>"
        policy = page.headers["content-security-policy"]
        assert "script-src 'self';" in policy  # neither eval nor inline script
        assert "worker-src 'self' blob:" in policy
        assert "frame-ancestors 'none'" in policy
        asset = await client.get("/portal/assets/portal-1a2b.js")
        assert asset.text == "// portal" and "immutable" in asset.headers["cache-control"]
        assert (await client.get("/portal/assets/console-1a2b.js")).status_code == 404
        console = await client.get("/console/environments")
        assert console.text == "<title>console</title>"
        assert "worker-src" not in console.headers["content-security-policy"]


async def test_an_unbuilt_portal_is_a_clear_503(tmp_path: Path) -> None:
    async with _client(tmp_path / "console", tmp_path / "never-built") as client:
        page = await client.get("/portal/")
    assert page.status_code == 503
    problem = page.json()
    assert problem["type"].endswith("/portal-not-built")
    assert str(tmp_path / "never-built") in problem["detail"]
