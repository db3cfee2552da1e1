"""Where an API's health is asked: its health URL, read from its OpenAPI document.

1. ``x-health-url`` at the document's top level: an absolute http(s) URL, or a path
   (``/status``) taken relative to the first server;
2. otherwise the first server's URL (its ``{variables}`` filled with their defaults) with
   ``PORTICO_MARKETPLACE_HEALTH_PATH`` appended (``/health`` by default).

An API whose document has neither (no document, or only relative servers) has no health
URL: its checks are ``unknown``, saying why. Whatever the URL, it is called through the SSRF
guard (``probe.py``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

EXTENSION = "x-health-url"
_VARIABLE = re.compile(r"\{([^{}]+)\}")


def health_url(document: Mapping[str, Any] | None, default_path: str) -> tuple[str | None, str]:
    """(the URL, how it was found) or (None, why there is none)."""
    if document is None:
        return None, "the API has no OpenAPI document to find its health URL in"
    declared = document.get(EXTENSION)
    if isinstance(declared, str) and _absolute(declared):
        return declared, f"{EXTENSION} of the document"
    server = _first_server(document)
    if isinstance(declared, str) and declared.startswith("/"):
        if server is None:
            return None, f"{EXTENSION} is a path, and the document has no absolute server"
        return server.rstrip("/") + declared, f"{EXTENSION} under the first server"
    if server is None:
        return None, (
            f"the document names no health URL ({EXTENSION}) and no absolute http(s) server"
        )
    return server.rstrip("/") + default_path, "the first server and the health path"


def _first_server(document: Mapping[str, Any]) -> str | None:
    servers = document.get("servers")
    if not isinstance(servers, list) or not servers or not isinstance(servers[0], Mapping):
        return None
    url = servers[0].get("url")
    if not isinstance(url, str):
        return None
    variables = servers[0].get("variables")
    defaults = variables if isinstance(variables, Mapping) else {}

    def fill(match: re.Match[str]) -> str:
        value = defaults.get(match.group(1))
        default = value.get("default") if isinstance(value, Mapping) else None
        return default if isinstance(default, str) else match.group(0)

    filled = _VARIABLE.sub(fill, url)
    return filled if _absolute(filled) and "{" not in filled else None


def _absolute(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)
