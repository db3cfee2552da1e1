"""Reading governance: the latest run of every published API, one API's latest run with its
findings, and an API's recent runs. Runs are written by the ``governance-lint`` job
(``jobs.py``), queued on publication and on new imported revisions (``triggers.py``)."""

from __future__ import annotations

import uuid

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.errors import NotFound
from portico.core.filter_values import FilterValues
from portico.core.pagination import ListQuery, Page
from portico.marketplace.governance.models import GovernanceRun
from portico.marketplace.governance.repository import (
    BANDS,
    UNLINTED,
    GovernanceRepository,
    OverviewFilters,
)
from portico.marketplace.node.models import Bundle, CatalogueNode
from portico.marketplace.node.repository import NodeRepository

BAND_FILTER = (*BANDS, UNLINTED)


class ApiNotFound(NotFound):
    default_detail = "no API node has this id"


async def overview(
    *, session: AsyncSession, query: ListQuery
) -> Page[tuple[CatalogueNode, GovernanceRun | None]]:
    values = FilterValues(query.filters)
    filters = OverviewFilters(
        band=values.one_of("band", BAND_FILTER),
        valid=values.boolean("valid"),
        organisation_id=values.identifier("organisation"),
    )
    values.check()
    return await GovernanceRepository(session).overview(filters, query)


async def api(*, session: AsyncSession, node_id: uuid.UUID) -> CatalogueNode:
    """The API node (governance applies to APIs: products and pages have no document)."""
    node = await NodeRepository(session).in_bundle(Bundle.APIS, node_id)
    if node is None:
        raise ApiNotFound(f"no API node has the id {node_id}")
    return node


async def latest(
    *, session: AsyncSession, node_id: uuid.UUID
) -> tuple[CatalogueNode, GovernanceRun | None]:
    node = await api(session=session, node_id=node_id)
    return node, await GovernanceRepository(session).latest(node.id)


async def history(
    *, session: AsyncSession, node_id: uuid.UUID, query: ListQuery
) -> Page[GovernanceRun]:
    node = await api(session=session, node_id=node_id)
    repository = GovernanceRepository(session)
    return await repository.page(repository.of_node(node.id), query)
