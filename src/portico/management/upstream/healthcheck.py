"""Health-check configuration of an upstream (``specification.checks``), and host names.

Field names and types follow the seed's health-check table; defaults and bounds follow
APISIX's ``health_checker`` schema (``apisix/schema_def.lua``), except that every count and
duration here is an integer (the seed says so; APISIX takes a number for ``active.timeout``)
and that open-ended APISIX bounds are closed (``concurrency``, ``interval``, list sizes).

The host-name types live here because both this module and the specification use them.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Literal, Self

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from portico.core.validation import invalid

__all__ = [
    "ActiveHealthCheck",
    "ActiveHealthy",
    "ActiveUnhealthy",
    "HealthChecks",
    "HostAndPort",
    "Hostname",
    "PassiveHealthCheck",
    "PassiveHealthy",
    "PassiveUnhealthy",
    "Port",
    "StatusCodes",
]

# --- host names ---------------------------------------------------------------------------

_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
_DIGITS = re.compile(r"[0-9]+")
_PORT = re.compile(r"[1-9][0-9]{0,4}")
_HOST_MESSAGE = "must be a hostname or an IP address"
_HOST_PORT_MESSAGE = "must be a hostname or an IP address, optionally followed by :port"


def _ipv6(text: str) -> bool:
    if "%" in text:  # zone ids name an interface of one machine, not a backend
        return False
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def _host(text: str) -> str | None:
    """``text`` as stored (IPv6 without brackets), or None when it is no host."""
    if len(text) > 253:
        return None
    if text.startswith("[") and text.endswith("]"):
        return text[1:-1] if _ipv6(text[1:-1]) else None
    if ":" in text:
        return text if _ipv6(text) else None
    labels = text.split(".")
    if not all(_LABEL.fullmatch(label) for label in labels):
        return None
    if _DIGITS.fullmatch(labels[-1]):  # looks like IPv4 (RFC 1123 §2.1): must be one
        try:
            ipaddress.IPv4Address(text)
        except ValueError:
            return None
    return text


def _check_host(value: str) -> str:
    host = _host(value)
    if host is None:
        raise ValueError(_HOST_MESSAGE)
    return host


def _check_host_and_port(value: str) -> str:
    if value.startswith("[") and "]:" in value:
        host, _, port = value[1:].partition("]:")
        ok = _ipv6(host) and _PORT.fullmatch(port) is not None and int(port) <= 65535
    elif value.count(":") == 1:
        host, _, port = value.partition(":")
        ok = _host(host) is not None and _PORT.fullmatch(port) is not None and int(port) <= 65535
    else:
        return _check_host(value)
    if not ok:
        raise ValueError(_HOST_PORT_MESSAGE)
    return value


Hostname = Annotated[str, Field(min_length=1, max_length=253), AfterValidator(_check_host)]
"""A DNS name of RFC 1123 labels, an IPv4 literal or an IPv6 literal (brackets optional,
stored without)."""

HostAndPort = Annotated[
    str, Field(min_length=1, max_length=261), AfterValidator(_check_host_and_port)
]
"""A :data:`Hostname`, optionally followed by ``:port`` (IPv6 then in brackets)."""

Port = Annotated[int, Field(ge=1, le=65535)]

# --- health checks ------------------------------------------------------------------------


def _unique(values: list[int]) -> list[int]:
    if len(set(values)) != len(values):
        raise ValueError("must have only unique items")
    return values


StatusCode = Annotated[int, Field(ge=200, le=599)]
StatusCodes = Annotated[
    list[StatusCode],
    Field(min_length=1, max_length=64, json_schema_extra={"uniqueItems": True}),
    AfterValidator(_unique),
]
ProbeType = Literal["http", "https", "tcp"]
ActiveCount = Annotated[int, Field(ge=1, le=254)]
PassiveCount = Annotated[int, Field(ge=0, le=254)]
Interval = Annotated[int, Field(ge=1, le=86400)]


class ActiveHealthy(BaseModel):
    """When an active probe counts a node healthy again."""

    model_config = ConfigDict(extra="forbid", strict=True)

    interval: Interval = Field(1, description="Seconds between probes of a healthy node.")
    successes: ActiveCount = Field(
        2, description="Consecutive successful probes that mark a node healthy."
    )
    http_statuses: StatusCodes = Field(
        [200, 302],
        description="Probe response statuses that count as a success (http/https probes).",
    )


class ActiveUnhealthy(BaseModel):
    """When active probes count a node unhealthy."""

    model_config = ConfigDict(extra="forbid", strict=True)

    interval: Interval = Field(1, description="Seconds between probes of an unhealthy node.")
    http_failures: ActiveCount = Field(
        5, description="Consecutive failed http/https probes that mark a node unhealthy."
    )
    tcp_failures: ActiveCount = Field(
        2, description="Consecutive failed TCP connects that mark a node unhealthy."
    )
    timeouts: ActiveCount = Field(
        3, description="Consecutive probe timeouts that mark a node unhealthy."
    )
    http_statuses: StatusCodes = Field(
        [429, 404, 500, 501, 502, 503, 504, 505],
        description="Probe response statuses that count as a failure (http/https probes).",
    )


class ActiveHealthCheck(BaseModel):
    """Probes the gateway sends to every node on a timer, from its own network egress."""

    model_config = ConfigDict(extra="forbid", strict=True)

    type: ProbeType = Field("http", description="Probe kind: http, https or tcp.")
    http_path: str = Field(
        "/",
        max_length=2048,
        pattern=r"^/[^\s\x00-\x1f\x7f-\x9f]*$",
        description="Path the http/https probe requests; starts with '/'.",
    )
    host: Hostname | None = Field(
        None, description="Host header of the probe; the node's host when absent."
    )
    port: Port | None = Field(None, description="Port probed; the node's port when absent.")
    timeout: int = Field(1, ge=1, le=300, description="Seconds before a probe times out.")
    concurrency: int = Field(
        10, ge=1, le=1000, description="How many nodes are probed at the same time."
    )
    healthy: ActiveHealthy = Field(
        ActiveHealthy(), description="Thresholds that mark a node healthy."
    )
    unhealthy: ActiveUnhealthy = Field(
        ActiveUnhealthy(), description="Thresholds that mark a node unhealthy."
    )


class PassiveHealthy(BaseModel):
    """Which live responses count as healthy."""

    model_config = ConfigDict(extra="forbid", strict=True)

    successes: PassiveCount = Field(
        5, description="Consecutive healthy responses that mark a node healthy; 0 disables."
    )
    http_statuses: StatusCodes = Field(
        # 200-208, 226, 300-308: APISIX's default
        [*range(200, 209), 226, *range(300, 309)],
        description="Live response statuses that count as healthy.",
    )


class PassiveUnhealthy(BaseModel):
    """Which live responses count against a node."""

    model_config = ConfigDict(extra="forbid", strict=True)

    http_failures: PassiveCount = Field(
        5, description="Consecutive failing http responses that mark a node unhealthy; 0 disables."
    )
    tcp_failures: PassiveCount = Field(
        2, description="Consecutive TCP failures that mark a node unhealthy; 0 disables."
    )
    timeouts: PassiveCount = Field(
        7, description="Consecutive timeouts that mark a node unhealthy; 0 disables."
    )
    http_statuses: StatusCodes = Field(
        [429, 500, 503],
        description="Live response statuses that count as a failure.",
    )


class PassiveHealthCheck(BaseModel):
    """Judges nodes by the live traffic proxied to them."""

    model_config = ConfigDict(extra="forbid", strict=True)

    type: ProbeType = Field("http", description="Traffic kind observed: http, https or tcp.")
    healthy: PassiveHealthy = Field(
        PassiveHealthy(), description="What counts as a healthy response."
    )
    unhealthy: PassiveUnhealthy = Field(
        PassiveUnhealthy(), description="What counts as a failing response."
    )


class HealthChecks(BaseModel):
    """``specification.checks``: active probes, passive observation, or both."""

    model_config = ConfigDict(extra="forbid", strict=True)

    active: ActiveHealthCheck | None = Field(
        None, description="Active probing; the way an unhealthy node is seen to recover."
    )
    passive: PassiveHealthCheck | None = Field(
        None, description="Passive checks on live traffic; alone, nodes are re-admitted by time."
    )

    @model_validator(mode="after")
    def _one_of_them(self) -> Self:
        if self.active is None and self.passive is None:
            invalid((), "either active or passive is required")
        return self
