"""The storefront's queries: the catalogue's pages (``catalogue/repository.py``: the same
three short, indexed queries, the same title search), narrowed by one more condition, what
the viewer may see, written in SQL so that no row is ever filtered in Python.

The condition is ``published AND (public OR internal [signed in] OR (organisation AND id IN
audience))``, where the audience subquery reads ``catalogue_node_audiences`` through its
``organisation_id`` index, for the viewer's few organisations only. "Published" is tested on
the moderation state, and every column the condition reads is in the index
``(bundle, moderation_state, title, id, visibility)``: the count of what a viewer may see
reads that index alone (never a row), and the default title order walks it, testing each
entry without reading its row. ``tests/portal/test_query_plans.py`` holds both stores to it.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from sqlalchemy import ColumnElement, and_, false, or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import defer

from portico.marketplace.catalogue.repository import CatalogueRepository
from portico.marketplace.node.models import (
    Bundle,
    CatalogueNode,
    ModerationState,
    NodeAudience,
    Visibility,
)

N = CatalogueNode
A = NodeAudience


@dataclass(frozen=True)
class Viewer:
    """Who is looking: anonymous (``signed_in`` false), or an account with the teams it is
    in, per organisation it is an active member of (``service.member_organisations``)."""

    signed_in: bool = False
    organisations: Mapping[uuid.UUID, frozenset[uuid.UUID]] = field(default_factory=dict)


ANONYMOUS = Viewer()


def visible_to(viewer: Viewer) -> ColumnElement[bool]:
    """The nodes ``viewer`` may see (published, and its visibility lets the viewer in)."""
    shown: list[ColumnElement[bool]] = [N.visibility == Visibility.PUBLIC]
    if viewer.signed_in:
        shown.append(N.visibility == Visibility.INTERNAL)
    if viewer.organisations:
        audiences = [
            and_(
                A.organisation_id == organisation_id,
                # a row naming a team restricts the node to that team's members
                or_(A.team_id.is_(None), A.team_id.in_(sorted(teams)) if teams else false()),
            )
            for organisation_id, teams in sorted(viewer.organisations.items())
        ]
        members_of = select(A.node_id).where(or_(*audiences))
        shown.append(and_(N.visibility == Visibility.ORGANISATION, N.id.in_(members_of)))
    return and_(N.moderation_state == ModerationState.PUBLISHED, or_(*shown))


class StorefrontRepository(CatalogueRepository):
    """The catalogue's pages and nodes, as ``viewer`` may see them."""

    def __init__(self, session: AsyncSession, viewer: Viewer) -> None:
        super().__init__(session)
        self.viewer = viewer

    def _audience(self) -> list[ColumnElement[bool]]:
        # every page, count and search of the catalogue goes through here
        return [visible_to(self.viewer)]

    async def visible(self, bundle: Bundle, node_id: uuid.UUID) -> CatalogueNode | None:
        return await self.first(
            select(N).where(N.id == node_id, N.bundle == bundle, visible_to(self.viewer))
        )

    async def visible_apis(self, node_ids: Collection[uuid.UUID]) -> dict[uuid.UUID, CatalogueNode]:
        """Those of ``node_ids`` that are APIs the viewer may see, by id (without their
        OpenAPI documents)."""
        if not node_ids:
            return {}
        rows = await self.all(
            select(N)
            .where(N.id.in_(list(node_ids)), N.bundle == Bundle.APIS, visible_to(self.viewer))
            .options(defer(N.documentation, raiseload=True))
        )
        return {row.id: row for row in rows}
