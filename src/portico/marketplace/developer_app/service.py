"""Developer apps, for the developer portal API (which the portal's endpoints call; this
module has no HTTP endpoints of its own).

Every function takes the session of the request, which owns the transaction (they flush,
never commit), and ``actor``, who acts as the audit log records it (the portal account and
its request id and address; ``actor_of(owner)`` when there is no request). An app belongs
to one portal account (``owner``): an app of another account is not found (404), never
forbidden. The clear key is returned by ``create`` and ``rotate_key`` only; it is stored
sealed with ``keys.box_for(settings.signing_keys())``.

* ``create(session, owner, data, box, actor, now) -> (app, key)``
* ``list_for_owner(session, owner_id, query) -> Page[app]`` (sort ``name``, ``created_at``,
  ``updated_at``)
* ``get_for_owner(session, owner_id, app_id) -> app``
* ``update(session, owner, app_id, data, actor, now) -> app``
* ``delete(session, owner, app_id, actor, now)``: the app's subscriptions are cancelled and
  its remote apps removed, durably (``hooks.py``, registered by the subscriptions module)
* ``rotate_key(session, owner, app_id, box, actor, now) -> (app, key)``: the remote apps
  get the new key, durably; the old key stops working on the portal at once
* ``open_key(box, app) -> key``: for the subscriptions module, which gives it to gateways
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core import audit
from portico.core.account import User
from portico.core.audit import Actor
from portico.core.errors import Conflict, NotFound
from portico.core.pagination import ListQuery, Page
from portico.core.sealing import SecretBox
from portico.marketplace import SURFACE
from portico.marketplace.developer_app import hooks, keys
from portico.marketplace.developer_app.models import DeveloperApp
from portico.marketplace.developer_app.repository import DeveloperAppRepository
from portico.marketplace.developer_app.schemas import (
    DeveloperAppCreate,
    DeveloperAppRead,
    DeveloperAppUpdate,
)

#: the marketplace module whose audit entries these are
MODULE = "subscriptions"
ENTITY = "developer_app"


class DeveloperAppNotFound(NotFound):
    default_detail = "app not found"


class DeveloperAppNameTaken(Conflict):
    default_detail = "you already have an app of this name"


def actor_of(owner: User) -> Actor:
    return Actor(id=owner.id, email=owner.email)


def open_key(box: SecretBox, app: DeveloperApp) -> str:
    """The app's key in clear (``ValueError`` when the server's keys no longer open it)."""
    return box.decrypt(app.sealed_key)


async def create(
    *,
    session: AsyncSession,
    owner: User,
    data: DeveloperAppCreate,
    box: SecretBox,
    actor: Actor,
    now: datetime,
) -> tuple[DeveloperApp, str]:
    repository = DeveloperAppRepository(session)
    await _refuse_taken(repository, owner.id, data.name)
    key = keys.new_key()
    app = DeveloperApp(
        id=uuid.uuid4(),
        owner_id=owner.id,
        name=data.name,
        description=data.description,
        sealed_key=box.encrypt(key),
        key_hint=keys.hint(key),
        key_issued_at=now,
        created_at=now,
        updated_at=now,
    )
    await repository.add(app)
    await _audit(session, actor, "create", app, f"created app {app.name}", after=_snapshot(app))
    return app, key


async def list_for_owner(
    *, session: AsyncSession, owner_id: uuid.UUID, query: ListQuery
) -> Page[DeveloperApp]:
    repository = DeveloperAppRepository(session)
    return await repository.page(repository.of_owner(owner_id), query)


async def get_for_owner(
    *, session: AsyncSession, owner_id: uuid.UUID, app_id: uuid.UUID
) -> DeveloperApp:
    app = await DeveloperAppRepository(session).owned(owner_id, app_id)
    if app is None:
        raise DeveloperAppNotFound()
    return app


async def update(
    *,
    session: AsyncSession,
    owner: User,
    app_id: uuid.UUID,
    data: DeveloperAppUpdate,
    actor: Actor,
    now: datetime,
) -> DeveloperApp:
    """Rename or describe the app. A rename is the portal's: the remote apps already made
    keep the name they were given (the gateways find the app by its key, not its name)."""
    repository = DeveloperAppRepository(session)
    app = await _owned(repository, owner.id, app_id)
    before = _snapshot(app)
    if data.name is not None and data.name != app.name:
        await _refuse_taken(repository, owner.id, data.name, besides=app.id)
        app.name = data.name
    if data.description is not None:
        app.description = data.description
    after = _snapshot(app)
    if after != before:
        app.updated_at = now
        await session.flush()
        after = _snapshot(app)
        await _audit(session, actor, "update", app, f"updated app {app.name}", before, after)
    return app


async def delete(
    *, session: AsyncSession, owner: User, app_id: uuid.UUID, actor: Actor, now: datetime
) -> None:
    repository = DeveloperAppRepository(session)
    app = await _owned(repository, owner.id, app_id)
    before = _snapshot(app)
    await hooks.before_delete(session, app, now)
    await repository.delete(app)
    await _audit(session, actor, "delete", app, f"deleted app {before['name']}", before=before)


async def rotate_key(
    *,
    session: AsyncSession,
    owner: User,
    app_id: uuid.UUID,
    box: SecretBox,
    actor: Actor,
    now: datetime,
) -> tuple[DeveloperApp, str]:
    repository = DeveloperAppRepository(session)
    app = await _owned(repository, owner.id, app_id)
    before = _snapshot(app)
    key = keys.new_key()
    app.sealed_key = box.encrypt(key)
    app.key_hint = keys.hint(key)
    app.key_issued_at = now
    app.updated_at = now
    await session.flush()
    await hooks.after_rotate(session, app, now)
    summary = f"rotated the key of app {app.name}"
    await _audit(session, actor, "rotate_key", app, summary, before, _snapshot(app))
    return app, key


async def _owned(
    repository: DeveloperAppRepository, owner_id: uuid.UUID, app_id: uuid.UUID
) -> DeveloperApp:
    app = await repository.owned_for_update(owner_id, app_id)
    if app is None:
        raise DeveloperAppNotFound()
    return app


async def _refuse_taken(
    repository: DeveloperAppRepository,
    owner_id: uuid.UUID,
    name: str,
    *,
    besides: uuid.UUID | None = None,
) -> None:
    if await repository.name_taken(owner_id, name, besides=besides):
        raise DeveloperAppNameTaken(f"you already have an app named '{name}'")


def _snapshot(app: DeveloperApp) -> dict[str, Any]:
    """The read shape: the key hint, never the key."""
    return DeveloperAppRead.of(app).model_dump(mode="json")


async def _audit(
    session: AsyncSession,
    actor: Actor,
    verb: str,
    app: DeveloperApp,
    summary: str,
    before: Any = None,
    after: Any = None,
) -> None:
    await audit.record(
        session,
        actor,
        action=f"{ENTITY}.{verb}",
        entity_type=ENTITY,
        entity_id=app.id,
        before=before,
        after=after,
        summary=summary,
        surface=SURFACE,
        module=MODULE,
    )
