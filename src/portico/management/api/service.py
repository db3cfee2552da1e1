"""APIs (the seed's services): create, read, change, delete; every change audited.

An API's list entry and detail carry its revision count and, per environment, the revision
live there — read from the deployments in the same query as the API, never cached, so the
API and environment views cannot disagree (the seed's "Service detail shows no environments
after deploy" is a defect here, not a cache delay).
"""

from __future__ import annotations

import uuid
from typing import Any, NamedTuple

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.errors import Conflict, NotFound, ValidationFailed
from portico.core.pagination import ListQuery, Page
from portico.management.access import OrgCaller
from portico.management.api import ports
from portico.management.api.models import Api
from portico.management.api.ports import DeploymentRow
from portico.management.api.repository import ApiRepository
from portico.management.api.schemas import (
    DESC_MAX_LENGTH,
    DESC_TOO_LONG,
    ApiCreate,
    ApiRead,
    ApiUpdate,
)


class ApiNotFound(NotFound):
    default_detail = "API not found"


class SpecDocumentNotFound(NotFound):
    default_detail = "no OpenAPI document was imported for this API"


class ApiView(NamedTuple):
    """An API with what its read shape adds: ``ApiRead.of(*view)``."""

    api: Api
    revision_count: int
    deployments: list[DeploymentRow]


def snapshot(view: ApiView) -> dict[str, Any]:
    return ApiRead.of(*view).model_dump(mode="json")


async def get(*, session: AsyncSession, caller: OrgCaller, api_id: uuid.UUID) -> Api:
    api = await ApiRepository(session).get_in_org(caller.org_id, api_id)
    if api is None:
        raise ApiNotFound()
    return api


async def view(*, session: AsyncSession, caller: OrgCaller, api_id: uuid.UUID) -> ApiView:
    return await _view(session, await get(session=session, caller=caller, api_id=api_id))


async def list_(*, session: AsyncSession, caller: OrgCaller, query: ListQuery) -> Page[ApiView]:
    repository = ApiRepository(session)
    page = await repository.page_in_org(caller.org_id, query)
    ids = [api.id for api in page.items]
    counts = await ports.revision_counts(session, ids)
    deployments = await ports.deployments(session, ids)
    return Page(
        items=[ApiView(api, counts[api.id], deployments[api.id]) for api in page.items],
        page=page.page,
        size=page.size,
        total=page.total,
    )


async def spec_document(
    *, session: AsyncSession, caller: OrgCaller, api_id: uuid.UUID
) -> dict[str, Any]:
    api = await get(session=session, caller=caller, api_id=api_id)
    if api.spec_document is None:
        raise SpecDocumentNotFound()
    document: dict[str, Any] = api.spec_document
    return document


async def create(*, session: AsyncSession, caller: OrgCaller, data: ApiCreate) -> ApiView:
    _check_desc(data.desc)
    repository = ApiRepository(session)
    await _check_unique(repository, caller.org_id, data.name, None)
    api = Api(id=uuid.uuid4(), org_id=caller.org_id, name=data.name, description=data.desc)
    await repository.add(api)
    await session.refresh(api)
    created = ApiView(api, 0, [])
    await caller.audit(session, "api.create", api.id, after=snapshot(created))
    return created


async def update(
    *, session: AsyncSession, caller: OrgCaller, api_id: uuid.UUID, data: ApiUpdate
) -> ApiView:
    if data.desc is not None:
        _check_desc(data.desc)
    api = await get(session=session, caller=caller, api_id=api_id)
    before = snapshot(await _view(session, api))
    await _check_unique(ApiRepository(session), caller.org_id, data.name, api.id)
    if data.name is not None:
        api.name = data.name
    if data.desc is not None:
        api.description = data.desc
    await session.flush()
    await session.refresh(api)
    updated = await _view(session, api)
    await caller.audit(session, "api.update", api.id, before=before, after=snapshot(updated))
    return updated


async def delete(*, session: AsyncSession, caller: OrgCaller, api_id: uuid.UUID) -> None:
    """Delete an API that is live nowhere, with all its revisions and their bindings (the
    store cascades them)."""
    repository = ApiRepository(session)
    api = await get(session=session, caller=caller, api_id=api_id)
    if await repository.is_deployed(api.id):
        raise Conflict("API is deployed; undeploy it first")
    current = await _view(session, api)
    await repository.delete(api)
    await caller.audit(
        session,
        "api.delete",
        api_id,
        before=snapshot(current),
        summary=f"deleted with {current.revision_count} revision(s)",
    )


async def _view(session: AsyncSession, api: Api) -> ApiView:
    counts = await ports.revision_counts(session, [api.id])
    deployments = await ports.deployments(session, [api.id])
    return ApiView(api, counts[api.id], deployments[api.id])


def _check_desc(desc: str) -> None:
    if len(desc) > DESC_MAX_LENGTH:
        raise ValidationFailed.at("/desc", DESC_TOO_LONG)


async def _check_unique(
    repository: ApiRepository, org_id: uuid.UUID, name: str | None, api_id: uuid.UUID | None
) -> None:
    if name is not None and await repository.name_taken(org_id, name, except_id=api_id):
        raise Conflict(f"an API named '{name}' already exists")
