"""Catalogue rows written straight to the store, as the content and publishing tests need them
(the /apis and /products endpoints are not what these tests are about), and what the
endpoints wrote, read back in fresh sessions.

Callers: an API manager decides; a content editor only drafts and submits. No built-in role
holds the admin API's baseline permission without also deciding, so the tests give their
editor a site role granting the baseline alone (``admin_api_client``), as a site would.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select

from portico.core.audit import AuditEntry
from portico.core.db.engine import Database
from portico.marketplace import permissions
from portico.marketplace.connection.models import ConnectionStatus, GatewayConnection
from portico.marketplace.node.models import (
    MODERATED,
    Bundle,
    CatalogueNode,
    ModerationState,
    NodeAudience,
    ProductApi,
    SourceType,
    Syndication,
    Visibility,
)
from portico.marketplace.organisation.models import Organisation, Team
from portico.marketplace.permissions import BASELINE, SiteRole

#: a site role that may call the admin API and nothing more
API_CLIENT = "admin_api_client"
#: ... and one that may also edit APIs, but not products or pages
API_EDITOR = "apis_editor"
#: a moment in the past the inserted rows are dated from (tests never read the clock)
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


def add_test_roles(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setitem(
        permissions.ROLES_BY_ID,
        API_CLIENT,
        SiteRole(API_CLIENT, "API client", 9, frozenset({BASELINE})),
    )
    monkeypatch.setitem(
        permissions.ROLES_BY_ID,
        API_EDITOR,
        SiteRole(
            API_EDITOR,
            "APIs editor",
            10,
            frozenset({BASELINE, "access content", "edit any apis content"}),
        ),
    )
    yield


@dataclass
class Catalogue:
    database: Database

    async def node(
        self,
        bundle: Bundle = Bundle.APIS,
        *,
        title: str | None = None,
        state: ModerationState | None = ModerationState.DRAFT,
        published: bool | None = None,
        visibility: Visibility = Visibility.INTERNAL,
        source: SourceType = SourceType.CUSTOM,
        connection_id: uuid.UUID | None = None,
        organisation_id: uuid.UUID | None = None,
        age: timedelta = timedelta(),
        description: str = "",
    ) -> uuid.UUID:
        """A node; moderated bundles in ``state`` (published as it says), pages without one."""
        moderated = bundle in MODERATED
        state = state if moderated else None
        if published is None:
            published = state is ModerationState.PUBLISHED
        when = EPOCH + age
        node = CatalogueNode(
            id=uuid.uuid4(),
            bundle=bundle,
            title=title or f"{bundle.value} {uuid.uuid4().hex[:8]}",
            description=description,
            moderation_state=state,
            published=published,
            visibility=visibility,
            source_type=source,
            connection_id=connection_id,
            remote_id=uuid.uuid4().hex if source is SourceType.IMPORTED else None,
            organisation_id=organisation_id,
            created_at=when,
            updated_at=when,
        )
        async with self.database.session() as session, session.begin():
            session.add(node)
        return node.id

    async def organisation(
        self, name: str | None = None, domains: list[str] | None = None
    ) -> uuid.UUID:
        organisation = Organisation(
            id=uuid.uuid4(), name=name or f"org {uuid.uuid4().hex[:8]}", domains=domains or []
        )
        async with self.database.session() as session, session.begin():
            session.add(organisation)
        return organisation.id

    async def team(self, organisation_id: uuid.UUID, name: str | None = None) -> uuid.UUID:
        team = Team(
            id=uuid.uuid4(),
            organisation_id=organisation_id,
            name=name or f"team {uuid.uuid4().hex[:8]}",
        )
        async with self.database.session() as session, session.begin():
            session.add(team)
        return team.id

    async def connection(self) -> uuid.UUID:
        connection = GatewayConnection(
            id=uuid.uuid4(),
            name=f"connection {uuid.uuid4().hex[:8]}",
            source="openapi",
            config={"urls": ["https://example.com/openapi.json"]},
            sealed_secrets="",
            status=ConnectionStatus.CONNECTED,
            last_checked=EPOCH,
        )
        async with self.database.session() as session, session.begin():
            session.add(connection)
        return connection.id

    async def include(self, product_id: uuid.UUID, *api_ids: uuid.UUID) -> None:
        async with self.database.session() as session, session.begin():
            for position, api_id in enumerate(api_ids):
                session.add(ProductApi(product_id=product_id, api_id=api_id, position=position))

    async def syndicate(self, node_id: uuid.UUID, *organisation_ids: uuid.UUID) -> None:
        async with self.database.session() as session, session.begin():
            for organisation_id in organisation_ids:
                session.add(Syndication(node_id=node_id, organisation_id=organisation_id))

    async def show_to(
        self, node_id: uuid.UUID, organisation_id: uuid.UUID, team_id: uuid.UUID | None = None
    ) -> None:
        async with self.database.session() as session, session.begin():
            session.add(
                NodeAudience(
                    id=uuid.uuid4(),
                    node_id=node_id,
                    organisation_id=organisation_id,
                    team_id=team_id,
                )
            )

    # ------------------------------------------------------------------------ reading back

    async def load(self, node_id: uuid.UUID) -> CatalogueNode | None:
        async with self.database.session() as session:
            return await session.get(CatalogueNode, node_id)

    async def state(self, node_id: uuid.UUID) -> tuple[ModerationState | None, bool]:
        node = await self.load(node_id)
        assert node is not None
        return node.moderation_state, node.published

    async def audience(self, node_id: uuid.UUID) -> set[tuple[uuid.UUID, uuid.UUID | None]]:
        async with self.database.session() as session:
            rows = await session.scalars(
                select(NodeAudience).where(NodeAudience.node_id == node_id)
            )
            return {(r.organisation_id, r.team_id) for r in rows}

    async def syndications(self, node_id: uuid.UUID) -> set[uuid.UUID]:
        async with self.database.session() as session:
            rows = await session.scalars(select(Syndication).where(Syndication.node_id == node_id))
            return {r.organisation_id for r in rows}

    async def audits(self, action: str, node_id: uuid.UUID | None = None) -> list[AuditEntry]:
        async with self.database.session() as session:
            statement = select(AuditEntry).where(AuditEntry.action == action)
            if node_id is not None:
                statement = statement.where(AuditEntry.entity_id == str(node_id))
            return list(await session.scalars(statement.order_by(AuditEntry.occurred_at)))


def ids(*values: uuid.UUID) -> list[str]:
    return [str(v) for v in values]


def failed(body: dict[str, Any]) -> dict[str, tuple[int, str]]:
    """meta.failed by node id: (status, detail)."""
    return {f["id"]: (f["status"], f["detail"]) for f in body["meta"]["failed"]}
