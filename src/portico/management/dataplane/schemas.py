from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated

from pydantic import Field

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


#: discovered upstreams one heartbeat may report, and nodes per upstream (an upstream's bound)
MAX_REPORTED_UPSTREAMS = 5000
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
    discovery: dict[Annotated[uuid.UUID, Field(strict=False)], DiscoveryReport] = Field(
        default_factory=dict,
        max_length=MAX_REPORTED_UPSTREAMS,
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
