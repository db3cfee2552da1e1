from __future__ import annotations

import re
import uuid
from datetime import datetime
from typing import Annotated

from pydantic import AfterValidator, Field

from portico.core.schema import ReadSchema, WriteSchema

MAX_GATEWAY_HOSTS = 50
_LABEL = r"(?!-)[a-z0-9-]{1,63}(?<!-)"
_GATEWAY_HOST = re.compile(rf"^(\*\.)?{_LABEL}(\.{_LABEL})*$")


def _gateway_host(value: str) -> str:
    """A hostname, lower-cased, optionally with a leading ``*.`` wildcard label (matching
    any one or more labels in front of the rest, as nginx's ``server_name *.example.com``)."""
    host = value.strip().lower().rstrip(".")
    if len(host) > 253 or not _GATEWAY_HOST.match(host):
        raise ValueError(f"{value!r} is not a hostname (a leading '*.' wildcard is allowed)")
    return host


GatewayHostName = Annotated[str, AfterValidator(_gateway_host)]
Name = Annotated[str, Field(min_length=1, max_length=100, pattern=r"^\S(.*\S)?$")]
Description = Annotated[str, Field(max_length=1000)]


def _unique_hosts(hosts: list[str]) -> list[str]:
    if len(set(hosts)) != len(hosts):
        raise ValueError("gateway hosts must be unique")
    return hosts


GatewayHosts = Annotated[
    list[GatewayHostName],
    Field(max_length=MAX_GATEWAY_HOSTS),
    AfterValidator(_unique_hosts),
]


class EnvironmentCreate(WriteSchema):
    name: Name = Field(description="Unique within the organisation, e.g. 'test' or 'prod'.")
    description: Description = ""
    gateway_hosts: GatewayHosts = Field(
        default_factory=list,
        description="Hostnames the gateway serves this environment on; '*.' wildcards allowed. "
        "A hostname belongs to at most one environment.",
    )


class EnvironmentUpdate(WriteSchema):
    name: Name | None = None
    description: Description | None = None
    gateway_hosts: GatewayHosts | None = None


class EnvironmentRead(ReadSchema):
    id: uuid.UUID
    org_id: uuid.UUID
    name: str
    description: str
    gateway_hosts: list[str]
    created_at: datetime
    updated_at: datetime


class DeployedApiRead(ReadSchema):
    api_id: uuid.UUID
    api_name: str
    revision_id: uuid.UUID
    revision_number: int
    deployed_at: datetime
    config_version: int = Field(description="The config version the deploy produced.")


class EnvironmentDetail(EnvironmentRead):
    config_version: int = Field(description="The environment's current config version.")
    deployments: list[DeployedApiRead] = Field(
        description="What is deployed here, read from the deployments themselves (never cached)."
    )
