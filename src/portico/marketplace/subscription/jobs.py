"""The subscription job kinds, registered when this module loads (by the service that
queues them, and by the worker that runs them):

* ``subscription-sync`` ``{subscription_id}``: give or take back a subscription's access
  on its gateway connection (``provisioning.sync_subscription``);
* ``developer-app-remote-sync`` ``{remote_id}``: set a remote app's rotated key, or delete
  the remote app of a deleted portal app (``provisioning.sync_remote_app``).

A failure of the remote side does not fail the job: it is recorded on the row and retried
when due (``work.py``); the job's result says what happened.
"""

from __future__ import annotations

import uuid
from typing import Any

from portico.core.job_worker import JobContext, JobError, register
from portico.core.settings import Settings
from portico.marketplace.subscription import provisioning
from portico.marketplace.subscription.work import SYNC_REMOTE_APP, SYNC_SUBSCRIPTION


def _id(ctx: JobContext, name: str) -> uuid.UUID:
    if set(ctx.params) != {name}:
        raise JobError(f"params: {name} only")
    try:
        return uuid.UUID(str(ctx.params[name]))
    except ValueError:
        raise JobError(f"params: {name} must be an id") from None


def _settings(ctx: JobContext) -> Settings:
    if ctx.settings is None:
        raise JobError("this worker has no settings: it cannot reach gateway connections")
    return ctx.settings


async def sync_subscription(ctx: JobContext) -> dict[str, Any]:
    subscription_id = _id(ctx, "subscription_id")
    return await provisioning.sync_subscription(
        ctx.database, ctx.clock, _settings(ctx), subscription_id
    )


async def sync_remote_app(ctx: JobContext) -> dict[str, Any]:
    remote_id = _id(ctx, "remote_id")
    return await provisioning.sync_remote_app(ctx.database, ctx.clock, _settings(ctx), remote_id)


register(SYNC_SUBSCRIPTION, sync_subscription)
register(SYNC_REMOTE_APP, sync_remote_app)
