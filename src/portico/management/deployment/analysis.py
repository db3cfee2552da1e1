"""What a deploy would collide with, and what it would do that its author may not intend.

Conflicts (409) are routes of *another* API in the environment that match the same method,
URI and host: the gateway could not tell the two apart. Warnings (dry-run) are legal but
suspicious: an authentication plugin that runs after a rate limiter (anonymous traffic
fills the bucket, the seed's "Risk"), a route that can never match because an identical
route of the same revision wins, an upstream without nodes to send traffic to.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from portico.gateway.plugins.base import Category
from portico.gateway.plugins.registry import PLUGINS
from portico.gateway.snapshot import SnapshotRoute, SnapshotUpstream

_PARAM = re.compile(r"/:[^/]+")
_RATE_LIMITERS = frozenset({"limit-req", "limit-count", "ai-rate-limiting", "product-quota"})


def uri_shape(uri: str) -> str:
    """``/pets/:id`` and ``/pets/:petId`` match the same requests."""
    return _PARAM.sub("/:", uri)


@dataclass(frozen=True)
class Conflict:
    route: SnapshotRoute
    other: SnapshotRoute
    method: str
    host: str

    def describe(self, environment: str) -> str:
        host = f" on host {self.host}" if self.host != "*" else ""
        return (
            f"route {self.method} {self.route.uri}{host} of API '{self.route.api_name}' "
            f"conflicts with API '{self.other.api_name}' (route '{self.other.name}', "
            f"{self.method} {self.other.uri}) in environment '{environment}'"
        )


def find_conflicts(
    candidate: Sequence[SnapshotRoute], others: Sequence[SnapshotRoute]
) -> list[Conflict]:
    """Routes of ``candidate`` matching the same method, URI and host as one of ``others``
    (routes of other APIs). A route without methods (or hosts) matches every method (host).
    Linear in the number of routes: the others are indexed by URI shape."""
    by_uri: dict[str, list[SnapshotRoute]] = defaultdict(list)
    for other in others:
        by_uri[uri_shape(other.uri)].append(other)
    found: list[Conflict] = []
    for route in candidate:
        for other in by_uri.get(uri_shape(route.uri), []):
            method = _overlap(route.methods, other.methods)
            host = _overlap(route.hosts, other.hosts)
            if method is not None and host is not None:
                found.append(Conflict(route, other, method, host))
    return found


def _overlap(a: Sequence[str], b: Sequence[str]) -> str | None:
    """What two method (or host) lists have in common; an empty list means "any"."""
    if not a:
        return b[0] if b else "*"
    if not b:
        return a[0]
    common = [x for x in a if x in set(b)]
    return common[0] if common else None


def warnings(
    routes: Sequence[SnapshotRoute], upstreams: Mapping[str, SnapshotUpstream]
) -> list[str]:
    out: list[str] = []
    out += _auth_after_rate_limit(routes)
    out += _quota_without_auth(routes)
    out += _shadowed(routes)
    out += _upstreams_without_nodes(routes, upstreams)
    return out


def _auth_after_rate_limit(routes: Sequence[SnapshotRoute]) -> list[str]:
    out: list[str] = []
    for route in routes:
        limiters = [p for p in route.plugins if p.name in _RATE_LIMITERS]
        for auth in (
            p for p in route.plugins if PLUGINS[p.name].category is Category.AUTHENTICATION
        ):
            late = [p for p in limiters if p.order < auth.order]
            if late:
                out.append(
                    f"route '{route.name}': {auth.name} (order {auth.order}) runs after "
                    f"{late[0].name} (order {late[0].order}); anonymous traffic will fill the "
                    "rate-limit bucket"
                )
    return out


def _quota_without_auth(routes: Sequence[SnapshotRoute]) -> list[str]:
    """product-quota meters apps, which only an authentication plugin ahead of it names."""
    out: list[str] = []
    for route in routes:
        quota = next((p for p in route.plugins if p.name == "product-quota"), None)
        if quota is None:
            continue
        if not any(
            PLUGINS[p.name].category is Category.AUTHENTICATION and p.order < quota.order
            for p in route.plugins
        ):
            out.append(
                f"route '{route.name}': product-quota has no authentication plugin before it; "
                "every request will be refused with 401"
            )
    return out


def _shadowed(routes: Sequence[SnapshotRoute]) -> list[str]:
    """A route whose URI and hosts equal those of a route that wins over it (higher priority,
    or the same priority and listed earlier), and whose methods that route covers, never
    matches. Routes are grouped by URI and hosts first, so this stays linear in practice."""
    groups: dict[tuple[str, frozenset[str]], list[tuple[int, SnapshotRoute]]] = defaultdict(list)
    for index, route in enumerate(routes):
        groups[(uri_shape(route.uri), frozenset(route.hosts))].append((index, route))
    out: list[str] = []
    for group in groups.values():
        ranked = sorted(group, key=lambda item: (-item[1].priority, item[0]))
        for position, (_, route) in enumerate(ranked):
            for _, winner in ranked[:position]:
                if not winner.methods or set(route.methods or ["*"]) <= set(winner.methods):
                    out.append(
                        f"route '{route.name}' ({route.uri}) is shadowed by route "
                        f"'{winner.name}': it can never match"
                    )
                    break
    return out


def _upstreams_without_nodes(
    routes: Sequence[SnapshotRoute], upstreams: Mapping[str, SnapshotUpstream]
) -> list[str]:
    out: list[str] = []
    for upstream_id in sorted({r.upstream_id for r in routes}):
        upstream = upstreams.get(upstream_id)
        if upstream is None:
            continue
        nodes: list[dict[str, Any]] = upstream.specification.get("nodes") or []
        discovery = upstream.specification.get("discovery")
        if not nodes and discovery:
            out.append(
                f"upstream '{upstream.name}' lists no nodes; they come from "
                f"{discovery.get('type')} discovery at run time"
            )
        elif not nodes:
            out.append(f"upstream '{upstream.name}' has no nodes: requests to it will fail")
        elif all(node.get("weight", 1) == 0 for node in nodes):
            out.append(
                f"upstream '{upstream.name}' has only nodes of weight 0: it receives no traffic"
            )
    return out
