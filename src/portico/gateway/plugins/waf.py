"""waf: ask a WAF service at ``host:port`` for a verdict on each request (block → 403)."""

from __future__ import annotations

import ipaddress
import re

from pydantic import Field, field_validator

from portico.gateway.plugins.base import Category, PluginConfig, PluginSpec

_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)")


def host_error(host: str) -> str | None:
    """Why ``host`` is neither an IP address nor an RFC 1123 hostname, or None."""
    try:
        ipaddress.ip_address(host)
        return None
    except ValueError:
        pass
    labels = host.removesuffix(".").split(".")
    # an all-digit last label is a mistyped address (1.2.3.999), not a name
    names_ok = len(host) <= 253 and all(_LABEL.fullmatch(label) for label in labels)
    if names_ok and not labels[-1].isdigit():
        return None
    return f'host "{host}" is not a hostname or an IP address'


class WafConfig(PluginConfig):
    host: str = Field(
        min_length=1, max_length=253, description="Hostname or IP address of the WAF service."
    )
    port: int = Field(ge=1, le=65535, description="Port of the WAF service.")
    timeout: int = Field(
        1000, ge=1, le=60_000, description="Milliseconds to wait for the WAF's verdict."
    )
    fail_open: bool = Field(
        False,
        description="When the WAF is unreachable or late: pass the request (true) or refuse "
        "it (false, the safe default).",
    )

    @field_validator("host")
    @classmethod
    def _host(cls, host: str) -> str:
        reason = host_error(host)
        if reason is not None:
            raise ValueError(reason)
        return host


PLUGIN = PluginSpec(
    name="waf",
    category=Category.SECURITY,
    order=50,
    reorderable=False,
    config=WafConfig,
    description="Forwards request metadata to a WAF service at `host:port`; its verdict "
    "blocks (403) or passes the request.",
)
