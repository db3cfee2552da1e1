"""Queries of publishing: nodes locked for a bulk change, who sees them (audiences), where
they are syndicated (explicitly, or through a product), and the portals and teams a body
names."""

from __future__ import annotations

import uuid
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from sqlalchemy import Select, delete, select

from portico.core.db.repository import Repository
from portico.marketplace.node.models import CatalogueNode, NodeAudience, ProductApi, Syndication
from portico.marketplace.organisation.models import Organisation, Team


@dataclass(frozen=True)
class Audience:
    """Who an organisation-visible node is shown to: an organisation, or one of its teams."""

    organisation_id: uuid.UUID
    team_id: uuid.UUID | None

    def sort_key(self) -> tuple[str, str]:
        return (str(self.organisation_id), str(self.team_id or ""))


class BulkNodeRepository(Repository[CatalogueNode]):
    model = CatalogueNode

    async def locked(self, node_ids: Collection[uuid.UUID]) -> dict[uuid.UUID, CatalogueNode]:
        """Those of ``node_ids`` that exist, locked until the transaction ends (PostgreSQL;
        in id order, so that two bulk requests never wait for each other in a circle), re-read
        so that a concurrent change is seen."""
        if not node_ids:
            return {}
        rows = await self.all(
            select(CatalogueNode)
            .where(CatalogueNode.id.in_(list(node_ids)))
            .order_by(CatalogueNode.id)
            .with_for_update()
            .execution_options(populate_existing=True)
        )
        return {row.id: row for row in rows}


class PortalRepository(Repository[Organisation]):
    model = Organisation
    sort_columns = {"name": Organisation.name, "created_at": Organisation.created_at}

    def matching(self, name: str | None) -> Select[Organisation]:
        statement = select(Organisation)
        if name is not None:
            statement = statement.where(Organisation.name == name)
        return statement

    async def existing(self, ids: Collection[uuid.UUID]) -> set[uuid.UUID]:
        """Those of ``ids`` that name an organisation."""
        if not ids:
            return set()
        return set(
            await self.session.scalars(
                select(Organisation.id).where(Organisation.id.in_(list(ids)))
            )
        )


class TeamRepository(Repository[Team]):
    model = Team

    async def many(self, ids: Collection[uuid.UUID]) -> dict[uuid.UUID, Team]:
        if not ids:
            return {}
        return {t.id: t for t in await self.all(select(Team).where(Team.id.in_(list(ids))))}


class AudienceRepository(Repository[NodeAudience]):
    model = NodeAudience

    async def of_nodes(self, node_ids: Collection[uuid.UUID]) -> dict[uuid.UUID, set[Audience]]:
        out: dict[uuid.UUID, set[Audience]] = {node_id: set() for node_id in node_ids}
        if not node_ids:
            return out
        rows = await self.session.execute(
            select(NodeAudience.node_id, NodeAudience.organisation_id, NodeAudience.team_id).where(
                NodeAudience.node_id.in_(list(node_ids))
            )
        )
        for node_id, organisation_id, team_id in rows:
            out[node_id].add(Audience(organisation_id, team_id))
        return out

    async def replace(self, node_id: uuid.UUID, audience: Iterable[Audience]) -> None:
        await self.session.execute(delete(NodeAudience).where(NodeAudience.node_id == node_id))
        self.session.add_all(
            NodeAudience(
                id=uuid.uuid4(),
                node_id=node_id,
                organisation_id=a.organisation_id,
                team_id=a.team_id,
            )
            for a in audience
        )
        await self.session.flush()


class SyndicationRepository(Repository[Syndication]):
    model = Syndication

    async def explicit(self, node_ids: Collection[uuid.UUID]) -> dict[uuid.UUID, set[uuid.UUID]]:
        """The portals each node is syndicated to on its own."""
        out: dict[uuid.UUID, set[uuid.UUID]] = {node_id: set() for node_id in node_ids}
        if not node_ids:
            return out
        rows = await self.session.execute(
            select(Syndication.node_id, Syndication.organisation_id).where(
                Syndication.node_id.in_(list(node_ids))
            )
        )
        for node_id, organisation_id in rows:
            out[node_id].add(organisation_id)
        return out

    async def implied(
        self, api_ids: Collection[uuid.UUID]
    ) -> dict[uuid.UUID, dict[uuid.UUID, set[uuid.UUID]]]:
        """For each API, the portals its products are syndicated to, with those products:
        the publications the products imply (derived, never stored)."""
        out: dict[uuid.UUID, dict[uuid.UUID, set[uuid.UUID]]] = {a: {} for a in api_ids}
        if not api_ids:
            return out
        rows = await self.session.execute(
            select(ProductApi.api_id, Syndication.organisation_id, Syndication.node_id)
            .join(Syndication, Syndication.node_id == ProductApi.product_id)
            .where(ProductApi.api_id.in_(list(api_ids)))
        )
        for api_id, organisation_id, product_id in rows:
            out[api_id].setdefault(organisation_id, set()).add(product_id)
        return out

    async def publish(self, node_id: uuid.UUID, organisation_ids: Iterable[uuid.UUID]) -> None:
        self.session.add_all(
            Syndication(node_id=node_id, organisation_id=o) for o in organisation_ids
        )
        await self.session.flush()

    async def withdraw(self, node_id: uuid.UUID, organisation_ids: Collection[uuid.UUID]) -> None:
        if not organisation_ids:
            return
        await self.session.execute(
            delete(Syndication).where(
                Syndication.node_id == node_id,
                Syndication.organisation_id.in_(list(organisation_ids)),
            )
        )
