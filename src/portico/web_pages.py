"""A web front end's pages under its prefix on the management port (``/console/``,
``/portal/``).

Each front end is a single-page application built by Vite (``web/<app>``; ``make run`` builds
it): its hashed assets are served as files, cached for good (a new build has new names), and
every other path under its prefix answers its ``index.html``, so that a deep link or a reload
reaches the client-side router. The pages call only the public HTTP APIs. What differs from
one front end to the next is declared in a :class:`WebPages`: its prefix, what its pages may
load (the Content-Security-Policy) and the problem answered while it is not built.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.responses import FileResponse, RedirectResponse, Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles
from starlette.types import Message, Receive, Scope, Send

from portico.core.errors import ServiceUnavailable

IMMUTABLE = (b"cache-control", b"public, max-age=31536000, immutable")
#: what every front end's pages may load, and who may frame them: this origin only, no
#: inline script; inline styles because the component library sets style attributes. A
#: front end adds what its own libraries need (``WebPages.script_src``, ``extra_policy``).
BASE_POLICY = (
    "default-src 'self'; script-src {script_src}; "
    "style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "frame-ancestors 'none'; base-uri 'self'; form-action 'self'{extra_policy}"
)


class NotBuilt(ServiceUnavailable):
    """A front end's page asked for while its build is missing; each front end has its own
    kind (``<app>-not-built``), declared with what it is and where it is built from::

        class ConsoleNotBuilt(NotBuilt, front_end="web console", app="console"): ...
    """

    def __init_subclass__(cls, *, front_end: str, app: str, **others: Any) -> None:
        super().__init_subclass__(**others)
        cls.kind = f"{app}-not-built"
        cls.title = f"The {front_end} is not built"
        cls.description = (
            f"The {front_end}'s pages are built from `web/{app}` with Vite: `make run` builds "
            "them when they are missing or stale (`make web` alone), or "
            f"`PORTICO_{app.upper()}_DIR` names a built copy."
        )


@dataclass(frozen=True)
class WebPages:
    """One front end: served under ``prefix`` (``/console``) from its build directory."""

    prefix: str
    #: raised (503) for a page while ``index.html`` is missing: the front end is not built
    not_built: type[NotBuilt]
    #: the ``script-src`` sources, each with the reason in the declaring module
    script_src: str = "'self'"
    #: further directives, each with the reason in the declaring module ("; worker-src ...")
    extra_policy: str = ""

    @property
    def security_headers(self) -> dict[str, str]:
        policy = BASE_POLICY.format(script_src=self.script_src, extra_policy=self.extra_policy)
        return {
            "Content-Security-Policy": policy,
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "same-origin",
        }


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


def mount_pages(app: FastAPI, pages: WebPages, directory: Path) -> None:
    """``<prefix>/assets/*`` from ``directory``'s assets, any other ``<prefix>/`` path its
    index (with the front end's security headers)."""
    prefix = pages.prefix
    index = directory / "index.html"
    if (directory / "assets").is_dir():
        app.router.routes.append(
            Mount(f"{prefix}/assets", app=_ImmutableFiles(directory / "assets"))
        )
    headers = {**pages.security_headers, "Cache-Control": "no-cache"}

    async def root() -> Response:
        return RedirectResponse(f"{prefix}/", status_code=308)

    async def page(path: str) -> Response:  # the path is for the client's router
        if not index.is_file():
            raise pages.not_built(f"No built {prefix.strip('/')} at {directory}.")
        return FileResponse(index, headers=headers, media_type="text/html")

    name = prefix.strip("/")
    app.add_api_route(prefix, root, methods=["GET"], name=f"{name}-root", include_in_schema=False)
    app.add_api_route(
        prefix + "/{path:path}", page, methods=["GET"], name=f"{name}-page", include_in_schema=False
    )
