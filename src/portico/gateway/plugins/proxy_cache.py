"""proxy-cache: serve repeated requests from a cache (memory or disk) keyed by variables.

At run time (APISIX's semantics): a request whose method is in ``cache_method`` is looked up
under its key; a fresh entry answers it (``Apisix-Cache-Status: HIT`` and ``Cache-Status:
HIT``, plus ``Age``) without reaching the upstream. Otherwise the status is MISS (nothing
stored, or another ``Vary`` variant), EXPIRED (past its TTL), STALE (refused by the client's
Cache-Control under ``cache_control``) or BYPASS (``cache_bypass``), and the upstream's answer
is stored if its status is in ``cache_http_status`` and nothing forbids it: ``no_cache``,
Cache-Control ``private``/``no-store``/``no-cache``, ``Set-Cookie``, ``Vary: *``, a body over
``MAX_OBJECT_BYTES`` (it is then sent untouched and not kept), an ``Authorization`` request
unless the response is ``public`` (or ``s-maxage``, ``must-revalidate``; RFC 9111 §3.5) or the
key already tells callers apart. HEAD answers are not stored (no body) but HEAD is served from
a stored GET. ``PURGE`` on a URL drops its entry: 200, or 404 when there was none.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Annotated, Literal

from pydantic import Field, ValidationInfo, field_validator

from portico.gateway.cache.policy import (
    HIDDEN,
    Tee,
    directives,
    refused_by_request,
    response_ttl,
    stored_headers,
    truthy,
    vary_names,
)
from portico.gateway.cache.store import CacheStore, DiskStore, MemoryStore
from portico.gateway.context import BasePluginRuntime, Reply, RequestContext, ResponseHeaders
from portico.gateway.plugin_services import RuntimeServices
from portico.gateway.plugins.base import Category, PluginConfig, PluginSpec

CacheMethod = Literal["GET", "HEAD", "POST"]

#: request variables a cache key may use; ``$arg_<name>``, ``$http_<name>`` and
#: ``$cookie_<name>`` stand for one argument, header or cookie. ``$request_method`` is not
#: among them (seed: "cache_key does not accept the request-method variable").
KEY_VARIABLES = frozenset(
    {
        "$uri",
        "$host",
        "$request_uri",
        "$scheme",
        "$server_port",
        "$args",
        "$query_string",
        "$remote_addr",
        "$consumer_name",
        "$route_id",
        "$service_id",
    }
)
_DYNAMIC = re.compile(r"^\$(arg|http|cookie)_[A-Za-z0-9_-]{1,128}$")
_ZONE = r"^[A-Za-z0-9_-]{1,64}$"


def key_part_error(part: str, field: str = "cache_key") -> str | None:
    """Why ``part`` cannot be in a cache key (or a bypass / no-cache value), or None. A part
    not starting with ``$`` is a literal and always fine."""
    if not part.startswith("$"):
        return None
    if part in KEY_VARIABLES or _DYNAMIC.match(part):
        return None
    return f"{field} variable {part} unsupported"


def _check_parts(field: str, parts: list[str] | None) -> None:
    for part in parts or ():
        reason = key_part_error(part, field)
        if reason is not None:
            raise ValueError(reason)


Part = Annotated[str, Field(min_length=1, max_length=256)]


class ProxyCacheConfig(PluginConfig):
    cache_strategy: Literal["memory", "disk"] = Field(
        "disk", description="Where cached responses live: this process's memory, or disk."
    )
    cache_zone: str = Field(
        "disk_cache_one", pattern=_ZONE, description="Named cache area (separate budgets)."
    )
    cache_key: list[str] = Field(
        default_factory=lambda: ["$host", "$request_uri"],
        min_length=1,
        max_length=16,
        description="Parts joined into the key: variables ($uri, $host, $request_uri, "
        "$arg_<name>, $http_<name>, $cookie_<name>, ...) or literal strings.",
    )
    cache_ttl: int = Field(300, ge=1, le=31_536_000, description="Seconds a response is kept.")
    cache_method: list[CacheMethod] = Field(
        default_factory=lambda: list[CacheMethod](["GET", "HEAD"]),
        min_length=1,
        description="Methods cached.",
    )
    cache_http_status: list[int] = Field(
        default_factory=lambda: [200, 301, 404],
        min_length=1,
        description="Upstream statuses whose responses are cached.",
    )
    cache_bypass: list[Part] | None = Field(
        None,
        min_length=1,
        max_length=16,
        description="Parts (variables or literals) joined into a value; when it is neither "
        'empty nor "0" the cache is not read (Apisix-Cache-Status: BYPASS).',
    )
    no_cache: list[Part] | None = Field(
        None,
        min_length=1,
        max_length=16,
        description='Parts joined into a value; when it is neither empty nor "0" the '
        "response is not stored.",
    )
    cache_control: bool = Field(
        False,
        description="Follow Cache-Control: the response's s-maxage/max-age/Expires set how "
        "long it is kept (instead of cache_ttl); the request's no-cache/no-store bypass the "
        "cache, its max-age/min-fresh refuse older entries, only-if-cached answers 504 on "
        "a miss.",
    )
    hide_cache_headers: bool = Field(
        False, description="Remove Cache-Control and Expires from the responses sent."
    )

    @field_validator("cache_key")
    @classmethod
    def _supported_variables(cls, parts: list[str]) -> list[str]:
        _check_parts("cache_key", parts)
        return parts

    @field_validator("cache_bypass", "no_cache")
    @classmethod
    def _supported_values(cls, parts: list[str] | None, info: ValidationInfo) -> list[str] | None:
        _check_parts(str(info.field_name), parts)
        return parts


PLUGIN = PluginSpec(
    name="proxy-cache",
    category=Category.TRAFFIC,
    order=300,
    reorderable=True,
    config=ProxyCacheConfig,
    description="Caches upstream responses in memory or on disk; adds Cache-Status HIT/MISS.",
)


#: the largest response body kept; bigger ones are relayed untouched and not stored
MAX_OBJECT_BYTES = 8 * 1024 * 1024
_STATE = "proxy-cache"  # ctx.vars: the key under which this request's answer may be stored
#: key parts that already separate callers, so Authorization requests may share an entry
_PER_CALLER = frozenset({"$consumer_name", "$http_authorization"})
Compiled = tuple[tuple[bool, str], ...]  # (is a variable, its name without "$" or the literal)


def _compile(parts: list[str]) -> Compiled:
    return tuple(
        (part.startswith("$"), part[1:] if part.startswith("$") else part) for part in parts
    )


def _join(parts: Compiled, ctx: RequestContext) -> str:
    """APISIX's complex value: parts concatenated, a missing variable as ""."""
    return "".join((ctx.var(name) or "") if variable else name for variable, name in parts)


def _mark(ctx: RequestContext, status: str) -> None:
    ctx.response_headers["apisix-cache-status"] = status
    ctx.response_headers["cache-status"] = status


class ProxyCacheRuntime(BasePluginRuntime):
    def __init__(self, config: ProxyCacheConfig, services: RuntimeServices) -> None:
        self.config = config
        self.methods = frozenset(config.cache_method)
        self.statuses = frozenset(config.cache_http_status)
        self.key_parts = _compile(config.cache_key)
        self.bypass = _compile(config.cache_bypass) if config.cache_bypass else None
        self.no_cache = _compile(config.no_cache) if config.no_cache else None
        self.per_caller = not _PER_CALLER.isdisjoint(config.cache_key)
        # entries of different environments never meet, even in one zone
        self.scope = services.env_id + "\n"
        self.now = services.now
        self.max_object = MAX_OBJECT_BYTES
        zone = config.cache_zone
        self.store: CacheStore
        if config.cache_strategy == "memory":
            self.store = services.shared("proxy-cache-memory", zone, MemoryStore)
        else:
            root = services.cache_dir / zone
            self.store = services.shared("proxy-cache-disk", str(root), lambda: DiskStore(root))

    def key(self, ctx: RequestContext) -> str:
        """The parts length-prefixed, so that no two different part lists give one key."""
        out = [self.scope]
        for variable, name in self.key_parts:
            value = (ctx.var(name) or "") if variable else name
            out.append(f"{len(value)}:{value}")
        return "".join(out)

    async def access(self, ctx: RequestContext) -> Reply | None:
        method = ctx.request.method
        if method == "PURGE":
            return Reply(200 if await self.store.purge(self.key(ctx)) else 404)
        if method not in self.methods:
            _mark(ctx, "MISS")
            return None
        if self.bypass is not None and truthy(_join(self.bypass, ctx)):
            _mark(ctx, "BYPASS")
            return None
        cc = directives([ctx.header("cache-control") or ""]) if self.config.cache_control else {}
        if "no-store" in cc or "no-cache" in cc:
            _mark(ctx, "BYPASS")
            return None
        key = self.key(ctx)
        entry = await self.store.get(key)
        if entry is None or (entry.vary and any((ctx.header(n) or "") != v for n, v in entry.vary)):
            _mark(ctx, "MISS")
            if "only-if-cached" in cc:
                return Reply(504)  # (never stored: it is not the upstream's answer)
            ctx.vars[_STATE] = key
            return None
        now = self.now()
        age = max(0.0, now - entry.stored_at)
        if now >= entry.expires_at or (cc and refused_by_request(cc, age, entry.expires_at - now)):
            _mark(ctx, "EXPIRED" if now >= entry.expires_at else "STALE")
            ctx.vars[_STATE] = key
            return None
        headers = list(entry.headers)
        if self.config.hide_cache_headers:
            headers = [(k, v) for k, v in headers if k not in HIDDEN]
        headers += [("age", str(int(age))), ("apisix-cache-status", "HIT"), ("cache-status", "HIT")]
        return Reply(entry.status, entry.body, headers)

    def header_filter(self, ctx: RequestContext, status: int, headers: ResponseHeaders) -> None:
        key = ctx.vars.get(_STATE)
        if key is None:
            return
        storable = self._storable(ctx, status, headers)
        if self.config.hide_cache_headers:
            for name in HIDDEN:
                headers.pop(name)
        if storable is None:
            return
        # what other plugins added to the answer is theirs to add again on a hit
        added = {name.lower() for name in ctx.response_headers}
        kept = stored_headers(headers.items(), added)
        # first in line: it sees the upstream's body before any other plugin changes it
        ctx.body_filters.insert(
            0, Tee(self.store, self.now, self.max_object, key, status, kept, *storable)
        )

    def _storable(
        self, ctx: RequestContext, status: int, headers: ResponseHeaders
    ) -> tuple[float, tuple[tuple[str, str], ...]] | None:
        """(seconds to keep, the request's values of the Vary headers), or None: not kept."""
        if status not in self.statuses or ctx.request.method == "HEAD":
            return None
        if self.no_cache is not None and truthy(_join(self.no_cache, ctx)):
            return None
        if "set-cookie" in headers:
            return None
        cc = directives(headers.get_all("cache-control"))
        if "private" in cc or "no-store" in cc or "no-cache" in cc:
            return None
        if (
            not self.per_caller
            and ctx.header("authorization") is not None
            and not ("public" in cc or "s-maxage" in cc or "must-revalidate" in cc)
        ):
            return None
        names = vary_names(headers.get_all("vary"))
        if names is None:
            return None
        length = headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > self.max_object:
            return None
        if self.config.cache_control:
            ttl = response_ttl(cc, headers.get("expires"), self.now())
        else:
            ttl = float(self.config.cache_ttl)
        if ttl <= 0:
            return None
        return ttl, tuple((name, ctx.header(name) or "") for name in names)


PLUGIN = dataclasses.replace(PLUGIN, runtime=ProxyCacheRuntime)
