"""What a connector's provisioning methods take and give (``base.Connector.grant`` and the
others): plain values, so that the subscriptions module and every connector agree on them
without knowing each other's insides."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

#: the analytics windows a subscription's usage is read over, and their length in seconds
WINDOWS: Mapping[str, int] = {"1h": 3600, "24h": 86400, "7d": 7 * 86400}
Window = Literal["1h", "24h", "7d"]


@dataclass(frozen=True)
class Grantee:
    """Who the access is for: the portal account (the remote developer) and its app."""

    email: str
    first_name: str
    last_name: str
    #: the portal app's name: the remote app is named the same
    app_name: str
    #: the portal app's key-auth key, in clear (the remote side stores it hashed)
    app_key: str
    #: remote app ids already made for this portal app on this connection, by environment
    known_apps: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Target:
    """What the access is to: a remote API (through the product the connector implies for
    it) or a remote product."""

    kind: Literal["api", "product"]
    remote_id: str
    #: the catalogue node's title, for what the connector names after it
    title: str = ""
    #: an API's implied product quota (``{limit, interval, interval_unit}``); None: unlimited
    quota: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Granted:
    """What the remote side holds once access is given (remote ids, as text)."""

    environment_id: str
    developer_id: str
    app_id: str
    product_id: str


@dataclass(frozen=True)
class Usage:
    """A subscription's traffic over a window, as the admin and portal APIs show it."""

    window: str
    requests: int
    errors: int
    #: p50, p95, p99 of the gateway's response time (None without traffic)
    latency_ms: Mapping[str, float | None]
    #: the product's quota limit per window (None: unlimited or none) and what the app
    #: used of its current window
    quota_limit: int | None
    quota_used: int | None
