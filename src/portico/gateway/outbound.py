"""Outbound HTTP calls of plugins (loggers, JWKS, discovery) through the SSRF guard:
re-exported from the kernel (:mod:`portico.core.egress`)."""

from portico.core.egress import guarded_request

__all__ = ["guarded_request"]
