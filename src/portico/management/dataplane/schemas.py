from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any

from pydantic import AfterValidator, Field

from portico.core.schema import ReadSchema, WriteSchema


class DataplaneTokenCreate(WriteSchema):
    name: Annotated[str, Field(min_length=1, max_length=100, pattern=r"^\S(.*\S)?$")] = Field(
        description="What the token is for, e.g. the node or cluster using it."
    )


class DataplaneTokenRead(ReadSchema):
    id: uuid.UUID
    environment_id: uuid.UUID
    name: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


class DataplaneTokenIssued(DataplaneTokenRead):
    token: str = Field(description="Shown once: give it to `portico gateway --token`.")


class DataplaneTokenList(ReadSchema):
    items: list[DataplaneTokenRead]


#: upstreams a heartbeat may describe, and targets per upstream (gateway/upstream_health.py)
MAX_REPORTED_UPSTREAMS = 10_000
MAX_REPORTED_TARGETS = 1024
ReportText = Annotated[str, Field(max_length=200)]


def _at_most(limit: int, what: str) -> Callable[[list[Any]], list[Any]]:
    """A bound on a list checked here rather than stated as the schema's ``maxItems``: both
    bounds at once (every upstream with every target) would be a body far over the size
    limit, which a client reading the schema would be told it may send."""

    def check(items: list[Any]) -> list[Any]:
        if len(items) > limit:
            raise ValueError(f"must have at most {limit} {what}")
        return items

    return check


class TargetHealth(WriteSchema):
    """One target (an upstream node) as a gateway node's health checker sees it."""

    host: str = Field(min_length=1, max_length=255)
    port: int = Field(ge=1, le=65535)
    healthy: bool
    reason: ReportText = Field("", description="Why it is in this state (empty: never changed).")
    seconds_in_state: float | None = Field(
        None, ge=0, description="Since its last change of state (null: never changed)."
    )
    last_probe: ReportText | None = Field(
        None, description="The last active probe's outcome: a status, or a failure's kind."
    )
    probes: int = Field(0, ge=0, description="Active probes sent.")
    probe_failures: int = Field(0, ge=0, description="Probes that counted as failures.")
    reports: int = Field(0, ge=0, description="Proxied requests observed (passive checks).")


class UpstreamHealthReport(WriteSchema):
    """One upstream's health on the reporting node."""

    upstream_id: Annotated[uuid.UUID, Field(strict=False)]
    active: bool = Field(description="Whether active checks are configured.")
    passive: bool = Field(description="Whether passive checks are configured.")
    probing: bool = Field(description="Whether the node is probing its targets now.")
    targets: Annotated[
        list[TargetHealth], AfterValidator(_at_most(MAX_REPORTED_TARGETS, "targets"))
    ] = Field(description=f"The upstream's nodes, at most {MAX_REPORTED_TARGETS}.")


#: discovered upstreams one heartbeat may report, and nodes per upstream (an upstream's bound)
MAX_DISCOVERED_UPSTREAMS = 5000
MAX_REPORTED_NODES = 1000


class DiscoveredNodeReport(WriteSchema):
    host: str = Field(min_length=1, max_length=253, description="The node's IP address.")
    port: int = Field(ge=1, le=65535)
    weight: int = Field(ge=0, le=100_000_000)
    priority: int = Field(ge=-100_000_000, le=100_000_000)


class DiscoveryReport(WriteSchema):
    """What a gateway node's discovery found for one upstream."""

    type: str = Field(min_length=1, max_length=64, description="The upstream's discovery type.")
    service_name: str = Field(min_length=1, max_length=261)
    nodes: list[DiscoveredNodeReport] = Field(
        max_length=MAX_REPORTED_NODES, description="The last good answer (empty: none yet)."
    )
    resolved_at: float | None = Field(
        None, ge=0, allow_inf_nan=False, description="Epoch seconds of the last good answer."
    )
    error: str | None = Field(
        None, max_length=500, description="Why the last attempt gave no node; null after one did."
    )
    failures: int = Field(0, ge=0, description="Attempts in a row that gave no node.")


class HeartbeatRequest(WriteSchema):
    node_id: str = Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9._:-]+$")
    environment_id: Annotated[uuid.UUID, Field(strict=False)]
    config_version: int = Field(ge=0)
    upstream_health: (
        Annotated[
            list[UpstreamHealthReport],
            AfterValidator(_at_most(MAX_REPORTED_UPSTREAMS, "upstreams")),
        ]
        | None
    ) = Field(
        None,
        description="The health of each upstream the node runs in the environment (at most "
        f"{MAX_REPORTED_UPSTREAMS}), as its checkers see it now; absent from nodes that do "
        "not report it.",
    )
    discovery: dict[Annotated[uuid.UUID, Field(strict=False)], DiscoveryReport] = Field(
        default_factory=dict,
        max_length=MAX_DISCOVERED_UPSTREAMS,
        description="Upstream id → the nodes the node's discovery found for it, for each "
        "upstream with discovery in the config it runs.",
    )


class NodeRead(ReadSchema):
    node_id: str
    config_version: int
    expected_version: int
    in_sync: bool
    address: str | None
    first_seen_at: datetime
    last_seen_at: datetime


class NodeList(ReadSchema):
    items: list[NodeRead]
    expected_version: int


class TargetHealthRead(ReadSchema):
    host: str
    port: int
    healthy: bool
    reason: str
    seconds_in_state: float | None = Field(
        description="Since its last change of state when the node reported (null: never changed)."
    )
    last_probe: str | None
    probes: int
    probe_failures: int
    reports: int


class NodeUpstreamHealthRead(ReadSchema):
    """One data-plane node's view of the upstream, as of its last heartbeat."""

    node_id: str
    address: str | None
    config_version: int
    last_seen_at: datetime = Field(description="When the node's view below was reported.")
    reported: bool = Field(
        description="false: the node runs no config holding this upstream (not deployed "
        "there, or not loaded yet), or does not report health."
    )
    probing: bool = Field(description="Whether the node is probing the targets now.")
    targets: list[TargetHealthRead] = Field(
        description="The upstream's nodes as this data-plane node's health checker sees them."
    )


class UpstreamHealthRead(ReadSchema):
    upstream_id: uuid.UUID
    environment_id: uuid.UUID
    active: bool = Field(description="Whether the upstream has active checks configured.")
    passive: bool = Field(description="Whether the upstream has passive checks configured.")
    items: list[NodeUpstreamHealthRead] = Field(
        description="Every data-plane node of the environment, by node id."
    )


class DiscoveredNode(ReadSchema):
    host: str
    port: int
    weight: int
    priority: int = Field(
        description="The balancer prefers the highest (an SRV record's priority, negated)."
    )


class DiscoveredOnNode(ReadSchema):
    """One data-plane node's view of a discovered upstream, as its last heartbeat said."""

    node_id: str = Field(description="The gateway node (``GET .../envs/{envId}/nodes``).")
    config_version: int
    last_seen_at: datetime = Field(description="The node's last heartbeat.")
    resolved_at: datetime | None = Field(description="When its discovery last answered with nodes.")
    error: str | None = Field(description="Why its last attempt gave no node; null if it did.")
    failures: int = Field(description="Attempts in a row that gave no node.")
    nodes: list[DiscoveredNode] = Field(description="The nodes it sends traffic to.")


class UpstreamDiscovery(ReadSchema):
    type: str
    service_name: str


class DiscoveredNodes(ReadSchema):
    upstream_id: uuid.UUID
    discovery: UpstreamDiscovery | None = Field(
        description="The upstream's discovery; null for an upstream with listed nodes."
    )
    items: list[DiscoveredOnNode] = Field(
        description="Each data-plane node of the environment that reported the upstream."
    )
