"""How a gateway process is set up: what the operator decides, not what a snapshot says."""

from __future__ import annotations

import ipaddress
import socket
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from portico.gateway.discovery.base import DiscoveryContext
from portico.gateway.discovery.watch import Bounds, Discovery
from portico.gateway.egress import EgressGuard, Network


@dataclass(frozen=True)
class GatewayOptions:
    #: identifies this node in heartbeats and telemetry
    node_id: str = field(default_factory=socket.gethostname)
    #: server secrets that open encrypted consumer secrets (jwt-auth); empty: none can be read
    secret_keys: tuple[str, ...] = ()
    #: CIDRs plugins may reach although internal (the SSRF guard refuses them otherwise)
    egress_allow: tuple[str, ...] = ()
    #: peers whose X-Forwarded-For is believed (a load balancer in front of the gateway)
    trusted_proxies: tuple[str, ...] = ()
    #: where proxy-cache's disk strategy keeps its files
    cache_dir: Path = field(default_factory=lambda: Path(tempfile.gettempdir()) / "portico-cache")
    #: Redis where product-quota counts, shared by every node of an environment (so that N
    #: nodes together admit exactly a product's limit); empty: each node counts alone
    quota_redis_url: str = ""
    #: DNS servers (``host:port``) that resolve upstreams with discovery; empty: the system's
    resolvers: tuple[str, ...] = ()
    #: a discovered answer is used for its TTL held within these bounds (seconds)
    discovery_min_ttl: float = 1.0
    discovery_max_ttl: float = 300.0

    def egress(self) -> EgressGuard:
        return EgressGuard.allowing(self.egress_allow)

    def discovery(self) -> Discovery:
        return Discovery(
            DiscoveryContext(resolvers=self.resolvers),
            Bounds(self.discovery_min_ttl, self.discovery_max_ttl),
        )

    def trusted_networks(self) -> tuple[Network, ...]:
        return tuple(ipaddress.ip_network(c, strict=False) for c in self.trusted_proxies)
