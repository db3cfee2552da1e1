"""proxy-cache: serve repeated requests from a cache (memory or disk) keyed by variables."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator

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


def key_part_error(part: str) -> str | None:
    """Why ``part`` cannot be in a cache key, or None. A part not starting with ``$`` is a
    literal and always fine."""
    if not part.startswith("$"):
        return None
    if part in KEY_VARIABLES or _DYNAMIC.match(part):
        return None
    return f"cache_key variable {part} unsupported"


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

    @field_validator("cache_key")
    @classmethod
    def _supported_variables(cls, parts: list[str]) -> list[str]:
        for part in parts:
            reason = key_part_error(part)
            if reason is not None:
                raise ValueError(reason)
        return parts


PLUGIN = PluginSpec(
    name="proxy-cache",
    category=Category.TRAFFIC,
    order=300,
    reorderable=True,
    config=ProxyCacheConfig,
    description="Caches upstream responses in memory or on disk; adds Cache-Status HIT/MISS.",
)
