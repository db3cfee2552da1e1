"""Roles and groups for the users tests, written straight to the store: their own endpoints
are not what these tests exercise."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import select

from portico.core.db.engine import Database
from portico.management.group.models import Group
from portico.management.role.models import Role
from tests.conftest import Org
from tests.management.user.support import MakeGroup, MakeRole, RoleId


@pytest.fixture
def role_id(database: Database) -> RoleId:
    """The id of a role of ``org`` by name (e.g. the predefined "Viewer")."""

    async def find(org: Org, name: str) -> uuid.UUID:
        async with database.session() as session:
            found = await session.scalar(
                select(Role.id).where(Role.org_id == org.id, Role.name == name)
            )
        assert found is not None, name
        return found

    return find


@pytest.fixture
def make_role(database: Database) -> MakeRole:
    async def make(org: Org, name: str, permissions: list[str]) -> uuid.UUID:
        role = Role(id=uuid.uuid4(), org_id=org.id, name=name, permissions=permissions)
        async with database.session() as session, session.begin():
            session.add(role)
        return role.id

    return make


@pytest.fixture
def make_group(database: Database) -> MakeGroup:
    async def make(org: Org, name: str, role_ids: tuple[uuid.UUID, ...] = ()) -> uuid.UUID:
        async with database.session() as session, session.begin():
            roles = list(await session.scalars(select(Role).where(Role.id.in_(role_ids))))
            group = Group(id=uuid.uuid4(), org_id=org.id, name=name, roles=roles, members=[])
            session.add(group)
        return group.id

    return make
