"""Developers: people outside the organisation who own apps. Create, read, change, delete;
every change audited. Gateways know a developer through their apps (email, status), so a
change of those publishes the environments the developer's apps are in."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.errors import Conflict, NotFound, PermissionDenied
from portico.core.pagination import ListQuery, Page
from portico.management.access import OrgCaller
from portico.management.developer import ports
from portico.management.developer.models import Developer
from portico.management.developer.ports import OwnedApp
from portico.management.developer.repository import DeveloperRepository
from portico.management.developer.schemas import DeveloperCreate, DeveloperRead, DeveloperUpdate
from portico.management.environment.ports import publish
from portico.management.environment.repository import EnvironmentRepository

#: the permission a cascading delete needs besides ``developer.manage``
FORCE_DELETE = "force-delete"


class DeveloperNotFound(NotFound):
    default_detail = "developer not found"


@dataclass(frozen=True)
class DeveloperView:
    """A developer as read: the row and how many apps they own."""

    id: uuid.UUID
    org_id: uuid.UUID
    first_name: str
    last_name: str
    email: str
    status: str
    app_count: int
    created_at: datetime
    updated_at: datetime


def view_of(developer: Developer, app_count: int) -> DeveloperView:
    return DeveloperView(
        id=developer.id,
        org_id=developer.org_id,
        first_name=developer.first_name,
        last_name=developer.last_name,
        email=developer.email,
        status=developer.status,
        app_count=app_count,
        created_at=developer.created_at,
        updated_at=developer.updated_at,
    )


def snapshot(view: DeveloperView) -> dict[str, Any]:
    return DeveloperRead.model_validate(view).model_dump(mode="json")


def app_snapshot(app: OwnedApp) -> dict[str, Any]:
    return {
        "id": str(app.id),
        "name": app.name,
        "environmentId": str(app.environment_id),
        "developerId": str(app.developer_id),
    }


async def _get(
    repository: DeveloperRepository, caller: OrgCaller, developer_id: uuid.UUID
) -> Developer:
    developer = await repository.get_in_org(caller.org_id, developer_id)
    if developer is None:
        raise DeveloperNotFound()
    return developer


async def _view(repository: DeveloperRepository, developer: Developer) -> DeveloperView:
    counts = await ports.app_counts(repository.session, [developer.id])
    return view_of(developer, counts[developer.id])


async def get(
    *, session: AsyncSession, caller: OrgCaller, developer_id: uuid.UUID
) -> DeveloperView:
    repository = DeveloperRepository(session)
    return await _view(repository, await _get(repository, caller, developer_id))


async def list_(
    *, session: AsyncSession, caller: OrgCaller, query: ListQuery
) -> Page[DeveloperView]:
    repository = DeveloperRepository(session)
    page = await repository.page_in_org(caller.org_id, query)
    counts = await ports.app_counts(session, (d.id for d in page.items))
    items = [view_of(d, counts[d.id]) for d in page.items]
    return Page(items=items, page=page.page, size=page.size, total=page.total)


async def create(
    *, session: AsyncSession, caller: OrgCaller, data: DeveloperCreate
) -> DeveloperView:
    repository = DeveloperRepository(session)
    await _check_email_free(repository, caller, data.email, None)
    developer = Developer(
        id=uuid.uuid4(),
        org_id=caller.org_id,
        first_name=data.first_name,
        last_name=data.last_name,
        email=data.email,
        status=data.status,
    )
    await repository.add(developer)
    view = view_of(developer, 0)
    await caller.audit(session, "developer.create", developer.id, after=snapshot(view))
    return view


async def update(
    *, session: AsyncSession, caller: OrgCaller, developer_id: uuid.UUID, data: DeveloperUpdate
) -> DeveloperView:
    repository = DeveloperRepository(session)
    developer = await _get(repository, caller, developer_id)
    before = await _view(repository, developer)
    if data.email is not None:
        await _check_email_free(repository, caller, data.email, developer.id)
        developer.email = data.email
    if data.first_name is not None:
        developer.first_name = data.first_name
    if data.last_name is not None:
        developer.last_name = data.last_name
    if data.status is not None:
        developer.status = data.status
    await session.flush()
    await session.refresh(developer)
    after = view_of(developer, before.app_count)
    # the gateways hold the email and the status of an app's developer
    if before.app_count and (after.email, after.status) != (before.email, before.status):
        await _publish(
            repository,
            await ports.app_environment_ids(session, developer.id),
            f"developer {developer.email} changed",
        )
    await caller.audit(
        session, "developer.update", developer.id, before=snapshot(before), after=snapshot(after)
    )
    return after


async def delete(
    *, session: AsyncSession, caller: OrgCaller, developer_id: uuid.UUID, cascade: bool
) -> None:
    """Refused while the developer owns apps, unless ``cascade`` (which needs
    ``force-delete`` too): then their apps and the consumers those own go with them, in this
    one transaction, and the environments the apps were in are published."""
    if cascade and FORCE_DELETE not in caller.permissions:
        raise PermissionDenied(FORCE_DELETE)
    repository = DeveloperRepository(session)
    developer = await _get(repository, caller, developer_id)
    before = await _view(repository, developer)
    if before.app_count and not cascade:
        raise Conflict(
            f"developer has {_apps(before.app_count)}; delete or reassign them first, "
            "or delete with ?cascade=true"
        )
    apps_owned = await ports.delete_apps(session, developer.id) if before.app_count else []
    app_befores = [(app.id, app_snapshot(app)) for app in apps_owned]
    env_ids = {app.environment_id for app in apps_owned}
    await repository.delete(developer)
    await _publish(
        repository,
        env_ids,
        f"developer {before.email} deleted with their apps",
    )
    for app_id, app_before in app_befores:
        await caller.audit(session, "app.delete", app_id, before=app_before)
    await caller.audit(
        session,
        "developer.delete",
        developer_id,
        before=snapshot(before),
        summary=f"cascade: deleted {_apps(len(apps_owned))}" if apps_owned else "",
    )


def _apps(count: int) -> str:
    return "1 app" if count == 1 else f"{count} apps"


async def _check_email_free(
    repository: DeveloperRepository, caller: OrgCaller, email: str, except_id: uuid.UUID | None
) -> None:
    if await repository.name_taken(caller.org_id, email, except_id=except_id):
        raise Conflict(f"a developer with email '{email}' already exists")


async def _publish(
    repository: DeveloperRepository, env_ids: Iterable[uuid.UUID], reason: str
) -> None:
    # in id order, so that two transactions lock the same environments in the same order
    for env in await EnvironmentRepository(repository.session).by_ids(set(env_ids)):
        await publish(repository.session, env, reason)
