"""Gateway connections (permission ``administer gateway sync``): created and replaced only
once their connector's check passed; ``.../test`` runs a check and saves nothing."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response

from portico.core.db.session import SessionDep
from portico.core.envelope import Collection, Envelope, collection
from portico.core.openapi import problems
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.core.sealing import SecretBox
from portico.core.settings import Settings
from portico.marketplace.access import SiteCaller, parse_uuid, require
from portico.marketplace.connection import service as connection_service
from portico.marketplace.connection.egress import outbound_for
from portico.marketplace.connection.models import ConnectionStatus
from portico.marketplace.connection.schemas import (
    CheckResult,
    ConnectionCheck,
    GatewayConnectionRead,
    GatewayConnectionWrite,
)
from portico.marketplace.connection.service import (
    ConnectionCheckFailed,
    ConnectionNameTaken,
    ConnectionNotFound,
)
from portico.marketplace.connectors.base import Outbound

router = APIRouter(prefix="/gateways/connections", tags=["gateway connections"])

LIST = ListSpec(
    sortable=frozenset({"name", "source", "status", "created_at", "last_checked"}),
    default_sort="name",
    filterable=frozenset({"source", "status", "name"}),
    filter_style="bracket",
    size_param="limit",
    default_size=50,
    max_size=500,
)
FILTER_PARAMETERS: dict[str, dict[str, Any]] = {
    "source": {"description": "Connections of this source type, e.g. portico."},
    "status": {
        "description": "Connections whose last check ended so.",
        "schema": {"type": "string", "enum": [s.value for s in ConnectionStatus]},
    },
    "name": {"description": "The connection of this name."},
}
REFUSED = {
    **problems(
        ConnectionCheckFailed,
        detail="The body is not valid (`errors` names each field at fault), or the "
        "connector's check failed (`connection-check-failed`: unreachable, refused by the "
        "SSRF guard, credentials refused); nothing was saved.",
    ),
    **problems(ConnectionNameTaken, detail="Another connection has this name."),
}
Syncer = Annotated[SiteCaller, Depends(require("administer gateway sync"))]


def outbound(request: Request) -> Outbound:
    """Connector calls of this request, under the installation's egress policy."""
    return outbound_for(request.app.state.settings)


def box(request: Request) -> SecretBox:
    settings: Settings = request.app.state.settings
    return connection_service.secrets_box(settings.signing_keys())


OutboundDep = Annotated[Outbound, Depends(outbound)]
BoxDep = Annotated[SecretBox, Depends(box)]


@router.get(
    "",
    response_model=Collection[GatewayConnectionRead],
    openapi_extra={"parameters": LIST.openapi_parameters(FILTER_PARAMETERS)},
)
async def list_connections(
    request: Request,
    _caller: Syncer,
    session: SessionDep,
    query: ListQuery = Depends(list_query(LIST)),
) -> Collection[GatewayConnectionRead]:
    """By name. Filters: ``filter[source]``, ``filter[status]``, ``filter[name]``."""
    page = await connection_service.list_(session=session, query=query)
    return collection(request, page, [GatewayConnectionRead.of(c) for c in page.items])


@router.post(
    "",
    response_model=Envelope[GatewayConnectionRead],
    status_code=201,
    responses=REFUSED,
)
async def create_connection(
    body: GatewayConnectionWrite,
    request: Request,
    response: Response,
    caller: Syncer,
    session: SessionDep,
    outbound: OutboundDep,
    box: BoxDep,
) -> Envelope[GatewayConnectionRead]:
    """Check the configuration with the source type's connector, then save it. Secret fields
    are stored encrypted and never returned."""
    connection = await connection_service.create(
        session=session,
        caller=caller,
        data=body,
        outbound=outbound,
        box=box,
        now=request.app.state.clock.now(),
    )
    response.headers["Location"] = (
        f"{request.scope.get('root_path', '')}/gateways/connections/{connection.id}"
    )
    return Envelope[GatewayConnectionRead](data=GatewayConnectionRead.of(connection))


@router.post("/test", response_model=Envelope[CheckResult])
async def check_connection(
    body: ConnectionCheck, request: Request, _caller: Syncer, outbound: OutboundDep
) -> Envelope[CheckResult]:
    """Run the connector's check on a configuration without saving anything: 200 whether
    the check passed or not (``ok``, and ``detail`` and ``field`` when not)."""
    result = await connection_service.test(
        data=body, outbound=outbound, now=request.app.state.clock.now()
    )
    return Envelope[CheckResult](data=result)


@router.get("/{gateway_connection}", response_model=Envelope[GatewayConnectionRead])
async def get_connection(
    gateway_connection: str, _caller: Syncer, session: SessionDep
) -> Envelope[GatewayConnectionRead]:
    """One connection; its ``config`` without the secret fields."""
    found = await connection_service.get(
        session=session, connection_id=parse_uuid(gateway_connection, ConnectionNotFound)
    )
    return Envelope[GatewayConnectionRead](data=GatewayConnectionRead.of(found))


@router.put(
    "/{gateway_connection}", response_model=Envelope[GatewayConnectionRead], responses=REFUSED
)
async def replace_connection(
    gateway_connection: str,
    body: GatewayConnectionWrite,
    request: Request,
    caller: Syncer,
    session: SessionDep,
    outbound: OutboundDep,
    box: BoxDep,
) -> Envelope[GatewayConnectionRead]:
    """Replace name and configuration after the check passed. Full credentials are needed
    (secret fields included): there is no partial update. The source cannot change."""
    connection = await connection_service.replace(
        session=session,
        caller=caller,
        connection_id=parse_uuid(gateway_connection, ConnectionNotFound),
        data=body,
        outbound=outbound,
        box=box,
        now=request.app.state.clock.now(),
    )
    return Envelope[GatewayConnectionRead](data=GatewayConnectionRead.of(connection))


@router.delete("/{gateway_connection}", status_code=204, response_class=Response)
async def delete_connection(
    gateway_connection: str, caller: Syncer, session: SessionDep
) -> Response:
    await connection_service.delete(
        session=session,
        caller=caller,
        connection_id=parse_uuid(gateway_connection, ConnectionNotFound),
    )
    return Response(status_code=204)


@router.post("/{gateway_connection}/test", response_model=Envelope[CheckResult])
async def check_stored_connection(
    gateway_connection: str,
    request: Request,
    _caller: Syncer,
    session: SessionDep,
    outbound: OutboundDep,
    box: BoxDep,
) -> Envelope[CheckResult]:
    """Check a saved connection again with its stored credentials; persists nothing."""
    result = await connection_service.test_stored(
        session=session,
        connection_id=parse_uuid(gateway_connection, ConnectionNotFound),
        outbound=outbound,
        box=box,
        now=request.app.state.clock.now(),
    )
    return Envelope[CheckResult](data=result)
