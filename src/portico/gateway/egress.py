"""The SSRF guard for the runtime: re-exported from the kernel (:mod:`portico.core.egress`),
where the code lives because the marketplace's connectors use it too."""

from portico.core.egress import (
    Address,
    Destination,
    EgressGuard,
    EgressRefused,
    Network,
)

__all__ = ["Address", "Destination", "EgressGuard", "EgressRefused", "Network"]
