"""The ``specification`` object of an upstream: where an environment sends traffic.

Field names follow the management contract (camelCase at this level; the health-check
table's snake_case inside ``checks``). Defaults are APISIX's, so that a validated
specification is complete: ``UpstreamSpecification.model_dump(mode="json")`` is what is
stored and what the API returns. Rules spanning several fields are checked after the fields
themselves and reported at the field a client has to change.
"""

from __future__ import annotations

from typing import Annotated, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

from portico.core.validation import invalid
from portico.gateway.discovery.catalogue import SOURCES, UnknownDiscoveryType, check_discovery
from portico.management.upstream.healthcheck import HealthChecks, HostAndPort, Hostname, Port

__all__ = [
    "UpstreamDiscovery",
    "UpstreamKeepalivePool",
    "UpstreamNode",
    "UpstreamSpecification",
    "UpstreamTimeout",
]

MAX_NODES = 1000

Seconds = Annotated[float, Field(gt=0, le=3600, allow_inf_nan=False)]


class UpstreamNode(BaseModel):
    """One backend the gateway balances over."""

    model_config = ConfigDict(extra="forbid", strict=True)

    host: Hostname = Field(
        description="Hostname or IP address of the backend (IPv6 without brackets)."
    )
    port: Port = Field(description="Port of the backend.")
    weight: int = Field(
        1, ge=0, le=65535, description="Share of traffic relative to the other nodes; 0 idles."
    )
    priority: int = Field(
        0,
        ge=-65535,
        le=65535,
        description="Nodes of a lower priority get traffic only when all higher ones fail.",
    )


_DISCOVERY_TYPES: list[JsonValue] = [*sorted(SOURCES)]


class UpstreamDiscovery(BaseModel):
    """Nodes found at run time instead of listed, by a discovery source of the gateway
    (``gateway/discovery/sources/``: each checks its own ``serviceName``)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    type: str = Field(
        max_length=64,
        description="The discovery source: "
        + "; ".join(f"'{kind}' ({spec.description})" for kind, spec in SOURCES.items()),
        json_schema_extra={"enum": _DISCOVERY_TYPES},
    )
    serviceName: str = Field(  # noqa: N815 - the contract's field name
        min_length=1,
        max_length=261,
        description="What the source resolves: for 'dns', 'name:port' (A/AAAA records) or "
        "an SRV name such as '_http._tcp.orders.internal'.",
    )

    @model_validator(mode="after")
    def _source_reads_it(self) -> Self:
        try:
            self.serviceName = check_discovery(self.type, self.serviceName)
        except UnknownDiscoveryType as unknown:
            invalid(("type",), str(unknown), self.type)
        except ValueError as error:
            invalid(("serviceName",), str(error), self.serviceName)
        return self


class UpstreamTimeout(BaseModel):
    """Timeouts towards a node, in seconds."""

    model_config = ConfigDict(extra="forbid", strict=True)

    connect: Seconds = Field(60.0, description="Seconds to establish a connection.")
    send: Seconds = Field(60.0, description="Seconds between two writes to the node.")
    read: Seconds = Field(60.0, description="Seconds between two reads from the node.")


class UpstreamKeepalivePool(BaseModel):
    """Idle connections kept open towards the nodes."""

    model_config = ConfigDict(extra="forbid", strict=True)

    size: int = Field(320, ge=1, le=10000, description="Idle connections kept per worker.")
    idle_timeout: float = Field(
        60.0, ge=0, le=86400, allow_inf_nan=False, description="Seconds an idle connection is kept."
    )
    requests: int = Field(
        1000, ge=1, le=1_000_000, description="Requests served on a connection before closing."
    )


class UpstreamSpecification(BaseModel):
    """Where and how the gateway forwards requests for an upstream."""

    model_config = ConfigDict(extra="forbid", strict=True)

    scheme: Literal["http", "https", "grpc", "grpcs"] = Field(
        "http", description="Protocol spoken to the nodes."
    )
    nodes: Annotated[list[UpstreamNode], Field(min_length=1, max_length=MAX_NODES)] | None = Field(
        None, description="Backends; exactly one of nodes and discovery is given."
    )
    discovery: UpstreamDiscovery | None = Field(
        None, description="Find the backends at run time; exclusive with nodes."
    )
    type: Literal["roundrobin", "chash", "least_conn", "ewma"] = Field(
        "roundrobin", description="Load-balancing algorithm."
    )
    hashOn: Literal["vars", "header", "cookie", "consumer", "vars_combinations"] = Field(  # noqa: N815
        "vars", description="What the chash key is taken from (type chash)."
    )
    key: Annotated[str, Field(min_length=1, max_length=256)] | None = Field(
        None,
        description="Hash key for type chash (a variable, header or cookie name); "
        "required then unless hashOn is consumer, refused for other types.",
    )
    timeout: UpstreamTimeout = Field(
        UpstreamTimeout(), description="Connect, send and read timeouts."
    )
    retries: Annotated[int, Field(ge=0, le=100)] | None = Field(
        None, description="Retries on another node; null means as many as there are nodes."
    )
    retryTimeout: float = Field(  # noqa: N815
        0.0,
        ge=0,
        le=86400,
        allow_inf_nan=False,
        description="Seconds allowed for retries; 0 = unlimited.",
    )
    passHost: Literal["pass", "node", "rewrite"] = Field(  # noqa: N815
        "pass",
        description="Host header sent to the node: the client's (pass), the node's (node) "
        "or upstreamHost (rewrite).",
    )
    upstreamHost: HostAndPort | None = Field(  # noqa: N815
        None, description="Host header when passHost is rewrite; refused otherwise."
    )
    keepalivePool: UpstreamKeepalivePool = Field(  # noqa: N815
        UpstreamKeepalivePool(), description="Connection reuse towards nodes."
    )
    checks: HealthChecks | None = Field(
        None, description="Health checks; absent means every node is always eligible."
    )

    @model_validator(mode="after")
    def _cross_field_rules(self) -> Self:
        if self.nodes is None and self.discovery is None:
            invalid(("nodes",), "either nodes or discovery is required")
        if self.nodes is not None and self.discovery is not None:
            invalid(
                ("discovery",),
                "nodes and discovery are mutually exclusive",
                self.discovery.model_dump(mode="json"),
            )
        if self.type == "chash":
            if self.key is None and self.hashOn != "consumer":
                invalid(("key",), "must be set when type is 'chash' (unless hashOn is 'consumer')")
        elif self.key is not None:
            invalid(("key",), "is only allowed when type is 'chash'", self.key)
        if self.passHost == "rewrite":
            if self.upstreamHost is None:
                invalid(("upstreamHost",), "must be set when passHost is 'rewrite'")
        elif self.upstreamHost is not None:
            invalid(
                ("upstreamHost",), "is only allowed when passHost is 'rewrite'", self.upstreamHost
            )
        return self
