from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response

from portico.core.db.session import SessionDep
from portico.core.errors import Conflict
from portico.core.openapi import problems
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.core.settings import Settings
from portico.management.access import OrgCaller, parse_id, require
from portico.management.consumer import service as consumer_service
from portico.management.consumer.credentials import SecretBox, secret_box
from portico.management.consumer.schemas import (
    ConsumerCreate,
    ConsumerRead,
    ConsumerUpdate,
    ConsumerWritten,
)
from portico.management.consumer.service import ConsumerNotFound, Written
from portico.management.pages import PageRead, page_of

router = APIRouter(prefix="/api/orgs/{orgId}/consumers", tags=["consumers"])

LIST = ListSpec(
    sortable=frozenset({"username", "createdAt", "updatedAt"}),
    default_sort="username",
    filterable=frozenset({"username"}),
)
Reader = Annotated[OrgCaller, Depends(require("consumer.read"))]
Manager = Annotated[OrgCaller, Depends(require("consumer.manage"))]


def credential_box(request: Request) -> SecretBox:
    """Encrypts credential secrets under keys derived from the server secrets."""
    settings: Settings = request.app.state.settings
    return secret_box(tuple(settings.signing_keys()))


Box = Annotated[SecretBox, Depends(credential_box)]


def _written(written: Written) -> ConsumerWritten:
    return ConsumerWritten(
        **ConsumerRead.model_validate(written.consumer).model_dump(),
        generated_credentials=written.generated,
    )


@router.get("", response_model=PageRead[ConsumerRead])
async def list_consumers(
    caller: Reader, session: SessionDep, query: ListQuery = Depends(list_query(LIST))
) -> PageRead[ConsumerRead]:
    page = await consumer_service.list_(session=session, caller=caller, query=query)
    return page_of(page, ConsumerRead)


@router.post(
    "",
    response_model=ConsumerWritten,
    status_code=201,
    responses=problems(
        Conflict,
        detail="A consumer with this username, or holding these credentials, already exists.",
    ),
)
async def create_consumer(
    body: ConsumerCreate, caller: Manager, session: SessionDep, box: Box
) -> ConsumerWritten:
    """Credentials generated for it (key-auth {}) are in this response only."""
    written = await consumer_service.create(session=session, caller=caller, data=body, box=box)
    return _written(written)


@router.get("/{consumerId}", response_model=ConsumerRead)
async def get_consumer(consumerId: str, caller: Reader, session: SessionDep) -> ConsumerRead:
    consumer = await consumer_service.get(
        session=session, caller=caller, consumer_id=parse_id(consumerId, ConsumerNotFound)
    )
    return ConsumerRead.model_validate(consumer)


@router.patch(
    "/{consumerId}",
    response_model=ConsumerWritten,
    responses=problems(
        Conflict,
        detail="The consumer belongs to an app (change it there), or the username or "
        "credentials are taken.",
    ),
)
async def update_consumer(
    consumerId: str, body: ConsumerUpdate, caller: Manager, session: SessionDep, box: Box
) -> ConsumerWritten:
    """``plugins`` replaces them all; credentials generated (key-auth {}) are in this
    response only."""
    written = await consumer_service.update(
        session=session,
        caller=caller,
        consumer_id=parse_id(consumerId, ConsumerNotFound),
        data=body,
        box=box,
    )
    return _written(written)


@router.delete(
    "/{consumerId}",
    status_code=204,
    responses=problems(
        Conflict, detail="The consumer belongs to an app: delete it through the app."
    ),
)
async def delete_consumer(consumerId: str, caller: Manager, session: SessionDep) -> Response:
    await consumer_service.delete(
        session=session, caller=caller, consumer_id=parse_id(consumerId, ConsumerNotFound)
    )
    return Response(status_code=204)
