"""Revisions of an API: create, read, edit specs, clone, bind upstreams, delete; all audited.

A revision is ACTIVE exactly while a deployment points at it (nothing stored says so, so
nothing can go stale). ACTIVE revisions keep their specs: edits and deletion are refused
(409). Their upstream binding in an environment where they are live cannot change either,
but they can be bound for other environments — that is how a live revision is prepared for
its next environment.

Specs are validated (``revision.specs``) before anything is read or written, so a bad body
is a 400 whatever the ids, and a failed request stores nothing.
"""

from __future__ import annotations

import uuid
from typing import Any, NamedTuple

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.clock import utcnow
from portico.core.errors import Conflict, NotFound, ValidationFailed
from portico.core.pagination import ListQuery, Page
from portico.management.access import OrgCaller
from portico.management.api import service as api_service
from portico.management.api.repository import ApiRepository
from portico.management.revision import specs
from portico.management.revision.models import Revision, UpstreamBinding
from portico.management.revision.repository import RevisionRepository
from portico.management.revision.schemas import (
    BindingsChange,
    EnvironmentUpstream,
    RevisionCreate,
    RevisionRead,
)

EDIT_ACTIVE = "Only INACTIVE revisions can be updated"
DELETE_ACTIVE = "Only INACTIVE revisions can be deleted"


class RevisionNotFound(NotFound):
    default_detail = "revision not found"


class RevisionView(NamedTuple):
    """A revision and the environments it is live in: ``RevisionRead.of(*view)``."""

    revision: Revision
    deployed_to: list[uuid.UUID]


def snapshot(view: RevisionView) -> dict[str, Any]:
    return RevisionRead.of(*view).model_dump(mode="json")


async def get(
    *,
    session: AsyncSession,
    caller: OrgCaller,
    api_id: uuid.UUID,
    revision_id: uuid.UUID,
    for_update: bool = False,
) -> Revision:
    """The revision of this API in the caller's org (``for_update`` locks its row)."""
    api = await api_service.get(session=session, caller=caller, api_id=api_id)
    revision = await RevisionRepository(session).get_of_api(
        caller.org_id, api.id, revision_id, for_update=for_update
    )
    if revision is None:
        raise RevisionNotFound()
    return revision


async def view(
    *, session: AsyncSession, caller: OrgCaller, api_id: uuid.UUID, revision_id: uuid.UUID
) -> RevisionView:
    revision = await get(session=session, caller=caller, api_id=api_id, revision_id=revision_id)
    return await _view(session, revision)


async def list_(
    *, session: AsyncSession, caller: OrgCaller, api_id: uuid.UUID, query: ListQuery
) -> Page[RevisionView]:
    status = query.filters.get("status")
    if status not in (None, "ACTIVE", "INACTIVE"):
        raise ValidationFailed(
            [{"parameter": "status", "detail": "status: must be one of 'ACTIVE' or 'INACTIVE'"}]
        )
    api = await api_service.get(session=session, caller=caller, api_id=api_id)
    repository = RevisionRepository(session)
    statement = repository.of_api(caller.org_id, api.id)
    if status is not None:
        statement = repository.with_status(statement, status == "ACTIVE")
    page = await repository.page(statement, query)
    deployed = await repository.deployed_to_many(r.id for r in page.items)
    return Page(
        items=[RevisionView(r, deployed[r.id]) for r in page.items],
        page=page.page,
        size=page.size,
        total=page.total,
    )


async def create(
    *, session: AsyncSession, caller: OrgCaller, api_id: uuid.UUID, data: RevisionCreate
) -> RevisionView:
    """A new INACTIVE revision with the API's next number."""
    service_spec = specs.parse_service_spec(data.service_spec)
    route_spec = specs.parse_route_spec(data.route_spec)
    api = await api_service.get(session=session, caller=caller, api_id=api_id)
    bindings = await _checked_bindings(session, caller, data.environment_upstreams)
    revision = await _new_revision(session, caller, api.id, service_spec, route_spec, bindings)
    created = RevisionView(revision, [])
    await caller.audit(session, "revision.create", revision.id, after=snapshot(created))
    return created


async def replace_service_spec(
    *,
    session: AsyncSession,
    caller: OrgCaller,
    api_id: uuid.UUID,
    revision_id: uuid.UUID,
    service_spec: dict[str, Any],
) -> RevisionView:
    parsed = specs.parse_service_spec(service_spec)
    return await _edit(session, caller, api_id, revision_id, "service_spec", parsed)


async def replace_route_spec(
    *,
    session: AsyncSession,
    caller: OrgCaller,
    api_id: uuid.UUID,
    revision_id: uuid.UUID,
    route_spec: list[Any],
) -> RevisionView:
    parsed = specs.parse_route_spec(route_spec)
    return await _edit(session, caller, api_id, revision_id, "route_spec", parsed)


async def clone(
    *, session: AsyncSession, caller: OrgCaller, api_id: uuid.UUID, revision_id: uuid.UUID
) -> RevisionView:
    """A new INACTIVE revision with the source's specs and bindings (ACTIVE or not)."""
    source = await get(session=session, caller=caller, api_id=api_id, revision_id=revision_id)
    revision = await _new_revision(
        session,
        caller,
        source.api_id,
        source.service_spec,
        source.route_spec,
        {b.environment_id: b.upstream_id for b in source.bindings},
    )
    created = RevisionView(revision, [])
    await caller.audit(
        session,
        "revision.clone",
        revision.id,
        after=snapshot(created),
        summary=f"revision {revision.number} cloned from revision {source.number}",
    )
    return created


async def add_bindings(
    *,
    session: AsyncSession,
    caller: OrgCaller,
    api_id: uuid.UUID,
    revision_id: uuid.UUID,
    data: BindingsChange,
) -> RevisionView:
    """Bind the given environments (adding, or overriding an environment's binding); the
    bindings of other environments stay."""
    given = await _checked_bindings(session, caller, data.environment_upstreams)
    return await _rebind(session, caller, api_id, revision_id, given, replace=False)


async def replace_bindings(
    *,
    session: AsyncSession,
    caller: OrgCaller,
    api_id: uuid.UUID,
    revision_id: uuid.UUID,
    data: BindingsChange,
) -> RevisionView:
    """Make the given bindings the revision's only ones (``[]`` clears them, on purpose)."""
    given = await _checked_bindings(session, caller, data.environment_upstreams)
    return await _rebind(session, caller, api_id, revision_id, given, replace=True)


async def delete(
    *, session: AsyncSession, caller: OrgCaller, api_id: uuid.UUID, revision_id: uuid.UUID
) -> None:
    revision = await get(
        session=session, caller=caller, api_id=api_id, revision_id=revision_id, for_update=True
    )
    current = await _view(session, revision)
    if current.deployed_to:
        raise Conflict(DELETE_ACTIVE)
    await RevisionRepository(session).delete(revision)
    await caller.audit(session, "revision.delete", revision_id, before=snapshot(current))


# --- internals ----------------------------------------------------------------------------


async def _view(session: AsyncSession, revision: Revision) -> RevisionView:
    deployed = await RevisionRepository(session).deployed_to(revision.id)
    return RevisionView(revision, list(deployed))


async def _new_revision(
    session: AsyncSession,
    caller: OrgCaller,
    api_id: uuid.UUID,
    service_spec: dict[str, Any],
    route_spec: list[Any],
    bindings: dict[uuid.UUID, uuid.UUID],
) -> Revision:
    number = await ApiRepository(session).allocate_revision_number(api_id)
    revision = Revision(
        id=uuid.uuid4(),
        org_id=caller.org_id,
        api_id=api_id,
        number=number,
        service_spec=service_spec,
        route_spec=route_spec,
        created_by=caller.user_id,
        bindings=[
            UpstreamBinding(environment_id=env_id, upstream_id=upstream_id)
            for env_id, upstream_id in bindings.items()
        ],
    )
    await RevisionRepository(session).add(revision)
    await session.refresh(revision)  # the response shows what the store holds
    return revision


async def _edit(
    session: AsyncSession,
    caller: OrgCaller,
    api_id: uuid.UUID,
    revision_id: uuid.UUID,
    field: str,
    value: Any,
) -> RevisionView:
    revision = await get(
        session=session, caller=caller, api_id=api_id, revision_id=revision_id, for_update=True
    )
    current = await _view(session, revision)
    if current.deployed_to:
        raise Conflict(EDIT_ACTIVE)
    before = snapshot(current)
    setattr(revision, field, value)
    revision.updated_at = utcnow()
    await session.flush()
    await session.refresh(revision)
    await caller.audit(
        session,
        "revision.update",
        revision.id,
        before=before,
        after=snapshot(current),
        summary=f"{'serviceSpec' if field == 'service_spec' else 'routeSpec'} replaced",
    )
    return current


async def _rebind(
    session: AsyncSession,
    caller: OrgCaller,
    api_id: uuid.UUID,
    revision_id: uuid.UUID,
    given: dict[uuid.UUID, uuid.UUID],
    *,
    replace: bool,
) -> RevisionView:
    revision = await get(
        session=session, caller=caller, api_id=api_id, revision_id=revision_id, for_update=True
    )
    current = {b.environment_id: b.upstream_id for b in revision.bindings}
    wanted = given if replace else {**current, **given}
    live = await RevisionRepository(session).deployed_to(revision.id)
    for env_id, env_name in sorted(live.items(), key=lambda item: item[1]):
        if wanted.get(env_id) != current.get(env_id):
            raise Conflict(
                f"revision {revision.number} is deployed to environment '{env_name}'; "
                "its binding there cannot change"
            )
    before = snapshot(RevisionView(revision, list(live)))
    # changed in place (not a new list) so that an unchanged binding is not deleted and
    # inserted again under the same key in one flush
    for binding in list(revision.bindings):
        if binding.environment_id not in wanted:
            revision.bindings.remove(binding)
        else:
            binding.upstream_id = wanted[binding.environment_id]
    revision.bindings.extend(
        UpstreamBinding(environment_id=env_id, upstream_id=upstream_id)
        for env_id, upstream_id in wanted.items()
        if env_id not in current
    )
    revision.updated_at = utcnow()
    await session.flush()
    await session.refresh(revision)
    after = RevisionView(revision, list(live))
    await caller.audit(
        session,
        "revision.bindings",
        revision.id,
        before=before,
        after=snapshot(after),
        summary="bindings replaced" if replace else "bindings added",
    )
    return after


async def _checked_bindings(
    session: AsyncSession, caller: OrgCaller, items: list[EnvironmentUpstream]
) -> dict[uuid.UUID, uuid.UUID]:
    """``environmentUpstreams`` as environment → upstream, once every environment is one of
    the org's and every upstream one of that environment's; else a 400 at each bad item."""
    repository = RevisionRepository(session)
    environments = await repository.environments(caller.org_id, {i.environment_id for i in items})
    upstreams = await repository.upstream_environments(
        caller.org_id, {i.upstream_id for i in items}
    )
    errors: list[dict[str, str]] = []
    for index, item in enumerate(items):
        env_name = environments.get(item.environment_id)
        if env_name is None:
            field = "environmentId"
            message = f"no environment '{item.environment_id}' in this organisation"
        elif upstreams.get(item.upstream_id) != item.environment_id:
            field = "upstreamId"
            message = f"no upstream '{item.upstream_id}' in environment '{env_name}'"
        else:
            continue
        errors.append(
            {
                "pointer": f"/environmentUpstreams/{index}/{field}",
                "detail": f"$.environmentUpstreams[{index}].{field}: {message}",
            }
        )
    if errors:
        raise ValidationFailed(errors)
    return {item.environment_id: item.upstream_id for item in items}
