"""Source types (permission ``administer gateway sync``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request

from portico.core.envelope import Collection, Envelope, collection
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.marketplace.access import SiteCaller, require
from portico.marketplace.source import service as source_service
from portico.marketplace.source.schemas import SourceRead

router = APIRouter(prefix="/sources", tags=["sources"])

LIST = ListSpec(
    sortable=frozenset({"id", "label"}),
    default_sort="id",
    filterable=frozenset(),
    filter_style="bracket",
    size_param="limit",
    default_size=50,
    max_size=500,
)
Syncer = Annotated[SiteCaller, Depends(require("administer gateway sync"))]


@router.get(
    "",
    response_model=Collection[SourceRead],
    openapi_extra={"parameters": LIST.openapi_parameters({})},
)
async def list_sources(
    request: Request, _caller: Syncer, query: ListQuery = Depends(list_query(LIST))
) -> Collection[SourceRead]:
    """Every source type, with its capability map, connection fields and feature flag."""
    page = source_service.list_(query=query)
    return collection(request, page, [SourceRead.of(c) for c in page.items])


@router.get("/{source}", response_model=Envelope[SourceRead])
async def get_source(source: str, _caller: Syncer) -> Envelope[SourceRead]:
    """One source type, with the descriptors of the fields a connection to it takes."""
    return Envelope[SourceRead](data=SourceRead.of(source_service.get(source)))
