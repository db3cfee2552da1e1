"""limit-count's configuration (a pydantic model, kept out of the compiled ``runtime``: see
CONVENTIONS.md "Compiled modules"), the checks of its key rules and the Redis URL type, which
limit-req and product-quota share."""

from __future__ import annotations

import re
from typing import Annotated, Literal, Self
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field, model_validator

from portico.core.validation import invalid
from portico.gateway.plugins.base import PluginConfig
from portico.gateway.plugins.limit_count.runtime import VARIABLE_REF

KeyType = Literal["var", "var_combination", "constant"]
Policy = Literal["local", "redis"]

_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


def key_error(key_type: str, key: str) -> str | None:
    """Why ``key`` cannot be a limit key of ``key_type``, or None.

    A ``var`` key names one variable without ``$`` (as APISIX reads ``ctx.var[key]``); a
    ``var_combination`` must reference at least one ``$variable``, or every client would share
    one counter without the operator meaning it (that is what ``constant`` is for).
    """
    if key_type == "var" and not _VARIABLE.fullmatch(key):
        return (
            'key must be a variable name without "$" (e.g. remote_addr, http_x_api_key) '
            'when key_type is "var"'
        )
    if key_type == "var_combination" and not VARIABLE_REF.search(key):
        return (
            'key must combine variables such as "$remote_addr $consumer_name" '
            'when key_type is "var_combination"'
        )
    return None


def _redis_url(value: str) -> str:
    """``redis://[user:password@]host[:port][/db]`` or ``rediss://`` (TLS)."""
    message = "redis_url must be a redis:// or rediss:// URL: scheme://[:password@]host[:port][/db]"
    if len(value) > 2048:
        raise ValueError("redis_url must be at most 2048 characters long")
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        raise ValueError(message) from None
    if parts.scheme not in ("redis", "rediss") or not parts.hostname or port == 0:
        raise ValueError(message)
    if parts.fragment or not re.fullmatch(r"(/\d{0,5})?", parts.path):
        raise ValueError(message)
    return value


RedisUrl = Annotated[str, AfterValidator(_redis_url)]


class LimitCountConfig(PluginConfig):
    count: int = Field(gt=0, le=1_000_000_000, description="Requests admitted per window.")
    time_window: int = Field(
        gt=0, le=31_536_000, description="Length of the counting window, in seconds."
    )
    key_type: KeyType = Field(
        "var",
        description="How `key` is read: one variable (var), a string of $variables "
        "(var_combination), or a literal shared by every request (constant).",
    )
    key: str = Field(
        "remote_addr",
        min_length=1,
        max_length=256,
        description="What requests are counted by (falls back to remote_addr when empty).",
    )
    rejected_code: int = Field(503, ge=200, le=599, description="Status of refused requests.")
    rejected_msg: str | None = Field(
        None, min_length=1, max_length=1024, description="Body of refused requests."
    )
    policy: Policy = Field(
        "local", description="Where counters live: this process (local) or Redis (shared)."
    )
    redis_url: RedisUrl | None = Field(
        None,
        description="Redis holding shared counters (required when policy is redis); "
        "may carry a password.",
    )
    allow_degradation: bool = Field(
        False, description="Admit requests when Redis is unreachable instead of failing them."
    )
    show_limit_quota_header: bool = Field(
        True, description="Add X-RateLimit-Limit, -Remaining and -Reset response headers."
    )

    secret_fields = frozenset({"redis_url"})

    @model_validator(mode="after")
    def _coherent(self) -> Self:
        reason = key_error(self.key_type, self.key)
        if reason is not None:
            invalid(("key",), reason, self.key)
        if self.policy == "redis" and self.redis_url is None:
            invalid(("redis_url",), 'property "redis_url" is required when policy is "redis"')
        return self
