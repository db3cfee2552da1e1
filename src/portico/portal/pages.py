"""The developer portal's pages under /portal/ on the management port (``web/portal``, served
as ``web_pages.py`` serves every front end), over the portal API at ``/api/portal/v1``."""

from __future__ import annotations

from portico.web_pages import NotBuilt, WebPages


class PortalNotBuilt(NotBuilt, front_end="developer portal", app="portal"):
    """/portal/ asked for while web/portal is not built (``portal-not-built``)."""


PORTAL = WebPages(
    prefix="/portal",
    not_built=PortalNotBuilt,
    # The API reference (Redoc) builds its search index in a Web Worker it makes from a
    # blob: URL of its own code: without this the worker is refused and its search finds
    # nothing. Scripts stay 'self' only: no eval and no inline script (the portal needs
    # neither, unlike the console's plugin forms).
    extra_policy="; worker-src 'self' blob:",
)
