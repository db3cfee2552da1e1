"""The egress policy of connector calls: user-supplied URLs go through the SSRF guard,
internal addresses reachable only when ``PORTICO_MARKETPLACE_EGRESS_ALLOW`` lists them or
when they are this installation's own control plane. One place, used by the request
handlers and by the jobs worker (which has the settings but no request)."""

from __future__ import annotations

from portico.core.egress import EgressGuard
from portico.core.settings import Settings, split_host_port
from portico.marketplace.connectors.base import Outbound


def outbound_for(settings: Settings) -> Outbound:
    guard = EgressGuard.allowing(settings.marketplace_egress_allow, trusted_urls=own_urls(settings))
    return Outbound(guard, timeout=settings.marketplace_connector_timeout_seconds)


def own_urls(settings: Settings) -> list[str]:
    """Where this installation's management service answers (its public URL, its listening
    address): reachable by default whatever the egress allow-list says."""
    host, port = split_host_port(settings.listen)
    # a control plane listening on every interface is reached on loopback (a comparison)
    everywhere = host in ("0.0.0.0", "::")  # noqa: S104
    hosts = ["127.0.0.1", "localhost"] if everywhere else [host]
    urls = [f"http://[{h}]:{port}" if ":" in h else f"http://{h}:{port}" for h in hosts]
    return [settings.public_url, *urls] if settings.public_url else urls
