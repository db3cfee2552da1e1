"""Outbound HTTP calls of plugins (loggers, JWKS, discovery) through the SSRF guard.

The request goes to the address the guard checked; the URL's host name still travels as the
``Host`` header and as the TLS server name, so virtual hosting and certificate checks work.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from portico.gateway.egress import EgressGuard


async def guarded_request(
    client: httpx.AsyncClient,
    guard: EgressGuard,
    method: str,
    url: str,
    **kwargs: Any,
) -> httpx.Response:
    """``client.request`` to ``url`` pinned to an address ``guard`` permits; raises
    :class:`portico.gateway.egress.EgressRefused` otherwise. Redirects are not followed (a
    redirect is a new, unchecked destination)."""
    destination = await guard.destination(url)
    parts = urlsplit(url)
    pinned = urlunsplit(
        (parts.scheme, destination.url_base.split("://", 1)[1], parts.path or "/", parts.query, "")
    )
    headers = dict(kwargs.pop("headers", None) or {})
    default_port = 443 if parts.scheme == "https" else 80
    headers.setdefault(
        "host",
        destination.hostname
        if destination.port == default_port
        else f"{destination.hostname}:{destination.port}",
    )
    extensions = {"sni_hostname": destination.hostname} if parts.scheme == "https" else {}
    return await client.request(
        method,
        pinned,
        headers=headers,
        extensions=extensions,
        follow_redirects=False,
        **kwargs,
    )
