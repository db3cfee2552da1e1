"""The web console's pages under /console/ on the management port.

The console is a single-page application built by Vite (``web/console``; ``make run`` builds
it): its hashed assets are served as files, cached for good (a new build has new names), and
every other path under /console/ answers its ``index.html``, so that a deep link or a reload
reaches the client-side router. The pages call only the public HTTP API.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse, RedirectResponse, Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles
from starlette.types import Message, Receive, Scope, Send

from portico.core.errors import ServiceUnavailable

PREFIX = "/console"
#: what the console's pages may load, and who may frame them: this origin only. Inline
#: scripts stay refused; 'unsafe-eval' because the plugin forms' JSON Schema validator (Ajv)
#: compiles each schema, which arrives at run time, into a function; inline styles because
#: the component library sets style attributes.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self' 'unsafe-eval'; "
        "style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
        "frame-ancestors 'none'; base-uri 'self'; form-action 'self'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}
IMMUTABLE = (b"cache-control", b"public, max-age=31536000, immutable")


class ConsoleNotBuilt(ServiceUnavailable):
    kind = "console-not-built"
    title = "The web console is not built"
    description = (
        "The console's pages are built from `web/console` with Vite: `make run` builds them "
        "when they are missing or stale (`make web` alone), or `PORTICO_CONSOLE_DIR` names a "
        "built copy."
    )


class _ImmutableFiles:
    """Hashed assets: a new build has new names, so an answer never changes."""

    def __init__(self, directory: Path) -> None:
        self._files = StaticFiles(directory=directory)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 200:
                message["headers"] = [*message["headers"], IMMUTABLE]
            await send(message)

        await self._files(scope, receive, sending)


def mount_console(app: FastAPI, directory: Path) -> None:
    """/console/assets/* from ``directory``'s assets, any other /console/ path its index."""
    index = directory / "index.html"
    if (directory / "assets").is_dir():
        app.router.routes.append(
            Mount(f"{PREFIX}/assets", app=_ImmutableFiles(directory / "assets"))
        )

    @app.get(PREFIX, include_in_schema=False)
    async def console_root() -> Response:
        return RedirectResponse(f"{PREFIX}/", status_code=308)

    @app.get(PREFIX + "/{path:path}", include_in_schema=False)
    async def console_page(path: str) -> Response:  # the path is for the client's router
        if not index.is_file():
            raise ConsoleNotBuilt(f"No built console at {directory}.")
        headers = {**SECURITY_HEADERS, "Cache-Control": "no-cache"}
        return FileResponse(index, headers=headers, media_type="text/html")
