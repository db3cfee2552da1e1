"""secret domain: the organisation's secret store (names listed, values never returned)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response

from portico.core.db.session import SessionDep
from portico.core.errors import Conflict
from portico.core.openapi import problems
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.core.settings import Settings
from portico.management.access import OrgCaller, parse_id, require
from portico.management.pages import PageRead, page_of
from portico.management.secret import service as secret_service
from portico.management.secret.schemas import SecretCreate, SecretRead
from portico.management.secret.service import SecretNotFound

router = APIRouter(prefix="/api/orgs/{orgId}/secrets", tags=["secrets"])

LIST = ListSpec(
    sortable=frozenset({"name", "createdAt", "updatedAt"}),
    default_sort="name",
    filterable=frozenset({"name"}),
)
Reader = Annotated[OrgCaller, Depends(require("secret.read"))]
Manager = Annotated[OrgCaller, Depends(require("secret.manage"))]


def server_keys(request: Request) -> tuple[str, ...]:
    settings: Settings = request.app.state.settings
    return tuple(settings.signing_keys())


Keys = Annotated[tuple[str, ...], Depends(server_keys)]


@router.get("", response_model=PageRead[SecretRead])
async def list_secrets(
    caller: Reader, session: SessionDep, query: ListQuery = Depends(list_query(LIST))
) -> PageRead[SecretRead]:
    """Names only: a value is never returned."""
    page = await secret_service.list_(session=session, caller=caller, query=query)
    return page_of(page, SecretRead)


@router.post(
    "",
    response_model=SecretRead,
    status_code=201,
    responses=problems(Conflict, detail="A secret with this name already exists."),
)
async def create_secret(
    body: SecretCreate, caller: Manager, session: SessionDep, keys: Keys
) -> SecretRead:
    """Stored encrypted; plugins name it as ``$secret://<name>``, resolved at deploy."""
    secret = await secret_service.create(session=session, caller=caller, data=body, keys=keys)
    return SecretRead.model_validate(secret)


@router.delete("/{secretId}", status_code=204)
async def delete_secret(secretId: str, caller: Manager, session: SessionDep) -> Response:
    await secret_service.delete(
        session=session, caller=caller, secret_id=parse_id(secretId, SecretNotFound)
    )
    return Response(status_code=204)
