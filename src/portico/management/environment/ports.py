"""What the environment's domains need from the packages above them (see ``core/ports.py``).

``publish``: store the environment's next config snapshot, in the transaction of the change
that calls for it (call it after the change is flushed). Building a snapshot reads every
domain (deployments, upstreams, global plugins, consumers, apps, products), and the changes
of most of those domains call for one: the builder, ``portico.management.deployment.snapshot``,
sits above them all and provides this port, so that none of them imports it.

``deployed_apis`` and ``has_upstreams``: what an environment's detail shows and what its
deletion must check, known where APIs and revisions (``revision.repository``) and upstreams
(``upstream.repository``) are, above the environment.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable
from datetime import datetime
from typing import NamedTuple

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.ports import Port
from portico.management.environment.models import Environment, EnvironmentConfig


class DeployedApi(NamedTuple):
    """One API live in an environment, with the revision deployed there."""

    api_id: uuid.UUID
    api_name: str
    revision_id: uuid.UUID
    revision_number: int
    deployed_at: datetime
    config_version: int


publish: Port[[AsyncSession, Environment, str], Awaitable[EnvironmentConfig]] = Port(
    "the publication of environment snapshots (portico.management.deployment.snapshot)"
)
#: the APIs deployed in the environment, by API name
deployed_apis: Port[[AsyncSession, uuid.UUID], Awaitable[list[DeployedApi]]] = Port(
    "the APIs deployed in an environment (portico.management.revision.repository)"
)
#: whether the environment has upstreams
has_upstreams: Port[[AsyncSession, uuid.UUID], Awaitable[bool]] = Port(
    "the upstreams of an environment (portico.management.upstream.repository)"
)
