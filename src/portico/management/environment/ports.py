"""What the environment's domains need from the packages above them (see ``core/ports.py``).

``publish``: store the environment's next config snapshot, in the transaction of the change
that calls for it (call it after the change is flushed). Building a snapshot reads every
domain (deployments, upstreams, global plugins, consumers, apps, products), and the changes
of most of those domains call for one: the builder, ``portico.management.deployment.snapshot``,
sits above them all and provides this port, so that none of them imports it.
"""

from __future__ import annotations

from collections.abc import Awaitable

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.ports import Port
from portico.management.environment.models import Environment, EnvironmentConfig

publish: Port[[AsyncSession, Environment, str], Awaitable[EnvironmentConfig]] = Port(
    "the publication of environment snapshots (portico.management.deployment.snapshot)"
)
