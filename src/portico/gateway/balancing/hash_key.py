"""The key a ``chash`` upstream hashes a request on, read from ``hashOn`` and ``key``.

APISIX semantics:

- ``vars``: ``key`` names one variable — ``remote_addr`` (the client address), ``arg_<name>``
  (a query argument), ``http_<name>`` (a request header; ``_`` stands for ``-``),
  ``cookie_<name>`` (a cookie), ``consumer_name``, or any other variable the proxy puts in
  :attr:`PickContext.vars` (``uri``, ``host``, ``request_uri``, ``server_name``...). A leading
  ``$`` is accepted.
- ``header``: ``key`` is a header name (any case).
- ``cookie``: ``key`` is a cookie name.
- ``consumer``: the authenticated consumer's name (``key`` is not used).
- ``vars_combinations``: ``key`` is a template of ``$var`` / ``${var}`` references and literal
  text (``$remote_addr$uri``, ``${host}-${arg_id}``); a missing variable is an empty string.

When there is no key material — the variable, header, cookie or consumer is absent or empty,
or a combination resolves to nothing — the key falls back to the client address, as APISIX
does (it logs the fallback; we count it in :attr:`HashKey.fallbacks`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from portico.gateway.balancing.nodes import PickContext

__all__ = ["HashKey", "cookie_value", "resolve_var"]

_REFERENCE = re.compile(r"\$(?:\{([A-Za-z0-9_]+)\}|([A-Za-z0-9_]+))")


def cookie_value(headers: Mapping[str, str], name: str) -> str | None:
    """The value of cookie ``name`` in the ``cookie`` header, or None."""
    header = headers.get("cookie")
    if not header:
        return None
    for pair in header.split(";"):
        cookie_name, sep, value = pair.partition("=")
        if sep and cookie_name.strip() == name:
            return value.strip().strip('"')
    return None


def resolve_var(name: str, ctx: PickContext) -> str | None:
    """The value of the APISIX-style variable ``name`` for this request, or None."""
    if name == "remote_addr":
        return ctx.client_ip or ctx.vars.get(name)
    if name == "consumer_name":
        return ctx.consumer
    if name.startswith("arg_"):
        return ctx.args.get(name[4:])
    if name.startswith("http_"):
        return ctx.headers.get(name[5:].replace("_", "-").lower())
    if name.startswith("cookie_"):
        return cookie_value(ctx.headers, name[7:])
    return ctx.vars.get(name)


class HashKey:
    """Reads the hash key of a request for one upstream's ``hashOn`` and ``key``."""

    __slots__ = ("_read", "fallbacks", "hash_on", "key")

    def __init__(self, hash_on: str, key: str | None) -> None:
        self.hash_on = hash_on
        self.key = key
        self.fallbacks = 0
        self._read = self._reader(hash_on, key or "")

    def __call__(self, ctx: PickContext) -> str:
        value = self._read(ctx)
        if value:
            return value
        self.fallbacks += 1
        return ctx.client_ip

    @staticmethod
    def _reader(hash_on: str, key: str) -> Callable[[PickContext], str | None]:
        if hash_on == "header":
            header = key.lower()
            return lambda ctx: ctx.headers.get(header)
        if hash_on == "cookie":
            return lambda ctx: cookie_value(ctx.headers, key)
        if hash_on == "consumer":
            return lambda ctx: ctx.consumer
        if hash_on == "vars_combinations":

            def combine(ctx: PickContext) -> str:
                return _REFERENCE.sub(
                    lambda m: resolve_var(m.group(1) or m.group(2), ctx) or "", key
                )

            return combine
        name = key.removeprefix("$")  # vars
        return lambda ctx: resolve_var(name, ctx)
