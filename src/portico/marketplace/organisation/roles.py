"""Organisation roles: the predefined ones (immutable: 409), an organisation's custom roles
(created from the catalogue of organisation permissions), and who holds them — directly, or
through a team. A member's effective permissions are the union of both. Every change is
audited in the request's transaction; nothing here commits.

A ``{role}`` in a path is a predefined role's id (``org-admin``, ``org-member``) or a custom
role's UUID; a custom role of another organisation is not found.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.errors import Conflict, NotFound, ValidationFailed
from portico.marketplace.access import SiteCaller
from portico.marketplace.organisation import service as organisation_service
from portico.marketplace.organisation.models import OrganisationRole
from portico.marketplace.organisation.permissions import (
    ORGANISATION_PERMISSIONS,
    PERMISSION_KEYS,
    PREDEFINED_BY_ID,
    PREDEFINED_ROLES,
    PredefinedRole,
    in_catalogue_order,
)
from portico.marketplace.organisation.repository import RoleRepository
from portico.marketplace.organisation.schemas import (
    InheritedRoles,
    MemberRoles,
    OrganisationPermissionRead,
    PermissionCategory,
    RoleCatalogue,
    RoleCreate,
    RoleRead,
    RoleRef,
    RoleUpdate,
    TeamRef,
)
from portico.marketplace.organisation.service import MODULE

ENTITY = "organisation_role"


class RoleNotFound(NotFound):
    default_detail = "role not found"


class PredefinedRoleImmutable(Conflict):
    def __init__(self, role: PredefinedRole) -> None:
        super().__init__(f"{role.id} is a predefined role: it cannot be edited or deleted")


class RoleLabelTaken(Conflict):
    default_detail = "the organisation has a role with this label"


class NotACustomRole(Conflict):
    def __init__(self, role: PredefinedRole) -> None:
        super().__init__(
            f"{role.id} is a predefined role, not a custom one: give it with PATCH "
            ".../members/{relationship}/roles"
        )


def permission_catalogue() -> list[PermissionCategory]:
    """The organisation permissions by category, in catalogue order."""
    categories: dict[str, list[OrganisationPermissionRead]] = {}
    for permission in ORGANISATION_PERMISSIONS:
        categories.setdefault(permission.category, []).append(
            OrganisationPermissionRead(key=permission.key, title=permission.title)
        )
    return [PermissionCategory(category=c, permissions=p) for c, p in categories.items()]


async def catalogue(*, session: AsyncSession, organisation_id: uuid.UUID) -> RoleCatalogue:
    await organisation_service.get_organisation(session=session, organisation_id=organisation_id)
    custom = await RoleRepository(session).custom_roles(organisation_id)
    return RoleCatalogue(
        roles=[*(_predefined(r) for r in PREDEFINED_ROLES), *(_custom(r) for r in custom)],
        available_permissions=list(PERMISSION_KEYS),
    )


async def get(*, session: AsyncSession, organisation_id: uuid.UUID, role: str) -> RoleRead:
    await organisation_service.get_organisation(session=session, organisation_id=organisation_id)
    found = await _role(RoleRepository(session), organisation_id, role)
    return _predefined(found) if isinstance(found, PredefinedRole) else _custom(found)


async def create(
    *, session: AsyncSession, caller: SiteCaller, organisation_id: uuid.UUID, data: RoleCreate
) -> RoleRead:
    await organisation_service.get_organisation(session=session, organisation_id=organisation_id)
    repository = RoleRepository(session)
    if await repository.label_taken(organisation_id, data.label):
        raise RoleLabelTaken()
    role = await repository.add(
        OrganisationRole(
            id=uuid.uuid4(),
            organisation_id=organisation_id,
            label=data.label,
            permissions=in_catalogue_order(set(data.permissions)),
        )
    )
    read = _custom(role)
    await _audit(caller, session, "organisation_role.create", role, None, read, "created")
    return read


async def update(
    *,
    session: AsyncSession,
    caller: SiteCaller,
    organisation_id: uuid.UUID,
    role: str,
    data: RoleUpdate,
) -> RoleRead:
    await organisation_service.get_organisation(session=session, organisation_id=organisation_id)
    repository = RoleRepository(session)
    found = await _custom_or_409(repository, organisation_id, role)
    before = _custom(found)
    if data.label is not None and data.label != found.label:
        if await repository.label_taken(organisation_id, data.label, besides=found.id):
            raise RoleLabelTaken()
        found.label = data.label
    if data.permissions is not None:
        found.permissions = in_catalogue_order(set(data.permissions))
    await session.flush()
    await session.refresh(found)
    after = _custom(found)
    await _audit(caller, session, "organisation_role.update", found, before, after, "updated")
    return after


async def delete(
    *, session: AsyncSession, caller: SiteCaller, organisation_id: uuid.UUID, role: str
) -> None:
    """The role, and every assignment of it (members' and teams')."""
    await organisation_service.get_organisation(session=session, organisation_id=organisation_id)
    repository = RoleRepository(session)
    found = await _custom_or_409(repository, organisation_id, role)
    before = _custom(found)
    await repository.forget(str(found.id))
    await repository.delete(found)
    await _audit(caller, session, "organisation_role.delete", found, before, None, "deleted")


async def member_roles(
    *, session: AsyncSession, organisation_id: uuid.UUID, membership_id: uuid.UUID
) -> MemberRoles:
    """Direct roles, team-inherited roles, and the union of their permissions."""
    membership = await organisation_service.membership_in(
        session=session, organisation_id=organisation_id, membership_id=membership_id
    )
    repository = RoleRepository(session)
    custom = {str(r.id): r for r in await repository.custom_roles(organisation_id)}

    def resolve(key: str) -> PredefinedRole | OrganisationRole | None:
        return PREDEFINED_BY_ID.get(key) or custom.get(key)

    direct = [r for r in map(resolve, sorted(await repository.direct_roles(membership.id))) if r]
    inherited: dict[uuid.UUID, InheritedRoles] = {}
    granted: set[str] = set()
    for team, key in await repository.team_roles(membership.id):
        role = resolve(key)
        if role is None:
            continue
        entry = inherited.setdefault(
            team.id, InheritedRoles(team=TeamRef(id=team.id, name=team.name), roles=[])
        )
        entry.roles.append(_ref(role))
        granted.update(_permissions(role))
    for role in direct:
        granted.update(_permissions(role))
    return MemberRoles(
        relationship=membership.id,
        direct=[_ref(r) for r in direct],
        inherited=list(inherited.values()),
        permissions=in_catalogue_order(granted),
    )


async def replace_member_roles(
    *,
    session: AsyncSession,
    caller: SiteCaller,
    organisation_id: uuid.UUID,
    membership_id: uuid.UUID,
    roles: list[str],
) -> MemberRoles:
    """The member's direct roles become ``roles`` (each a predefined role or one of the
    organisation's custom roles: 400 naming ``/roles/<i>`` otherwise)."""
    before = await member_roles(
        session=session, organisation_id=organisation_id, membership_id=membership_id
    )
    repository = RoleRepository(session)
    custom = {str(r.id) for r in await repository.custom_roles(organisation_id)}
    unknown = [
        {"pointer": f"/roles/{i}", "detail": f"roles/{i}: no role {key!r} in this organisation"}
        for i, key in enumerate(roles)
        if key not in PREDEFINED_BY_ID and _canonical(key) not in custom
    ]
    if unknown:
        raise ValidationFailed(unknown)
    wanted = {key if key in PREDEFINED_BY_ID else _canonical(key) for key in roles}
    held = set(await repository.direct_roles(membership_id))
    for key in held - wanted:
        await repository.unassign(membership_id, key)
    for key in sorted(wanted - held):
        await repository.assign(membership_id, key)
    return await _member_audited(
        session, caller, organisation_id, membership_id, "membership.roles_replace", before
    )


async def assign_custom_role(
    *,
    session: AsyncSession,
    caller: SiteCaller,
    organisation_id: uuid.UUID,
    membership_id: uuid.UUID,
    role: str,
) -> MemberRoles:
    """Give the member a custom role; giving it again changes nothing (and audits
    nothing)."""
    before = await member_roles(
        session=session, organisation_id=organisation_id, membership_id=membership_id
    )
    repository = RoleRepository(session)
    found = await _role(repository, organisation_id, role)
    if isinstance(found, PredefinedRole):
        raise NotACustomRole(found)
    if not await repository.assign(membership_id, str(found.id)):
        return before
    return await _member_audited(
        session, caller, organisation_id, membership_id, "membership.role_assign", before
    )


async def unassign_custom_role(
    *,
    session: AsyncSession,
    caller: SiteCaller,
    organisation_id: uuid.UUID,
    membership_id: uuid.UUID,
    role: str,
) -> None:
    """Take a custom role from the member (404 when it does not hold it directly)."""
    before = await member_roles(
        session=session, organisation_id=organisation_id, membership_id=membership_id
    )
    repository = RoleRepository(session)
    found = await _role(repository, organisation_id, role)
    if isinstance(found, PredefinedRole):
        raise NotACustomRole(found)
    if not await repository.unassign(membership_id, str(found.id)):
        raise RoleNotFound("the member does not hold this role directly")
    await _member_audited(
        session, caller, organisation_id, membership_id, "membership.role_unassign", before
    )


# -- helpers ----------------------------------------------------------------------------------


def _canonical(key: str) -> str:
    """A custom role's id as stored (lower-case hyphenated), whatever spelling was given."""
    try:
        return str(uuid.UUID(key))
    except ValueError:
        return key


async def _role(
    repository: RoleRepository, organisation_id: uuid.UUID, role: str
) -> PredefinedRole | OrganisationRole:
    if role in PREDEFINED_BY_ID:
        return PREDEFINED_BY_ID[role]
    try:
        role_id = uuid.UUID(role)
    except ValueError:
        raise RoleNotFound() from None
    found = await repository.in_organisation(organisation_id, role_id)
    if found is None:
        raise RoleNotFound()
    return found


async def _custom_or_409(
    repository: RoleRepository, organisation_id: uuid.UUID, role: str
) -> OrganisationRole:
    found = await _role(repository, organisation_id, role)
    if isinstance(found, PredefinedRole):
        raise PredefinedRoleImmutable(found)
    return found


def _permissions(role: PredefinedRole | OrganisationRole) -> list[str]:
    return [str(p) for p in role.permissions]


def _ref(role: PredefinedRole | OrganisationRole) -> RoleRef:
    if isinstance(role, PredefinedRole):
        return RoleRef(id=role.id, label=role.label, predefined=True)
    return RoleRef(id=str(role.id), label=role.label, predefined=False)


def _predefined(role: PredefinedRole) -> RoleRead:
    return RoleRead(
        id=role.id,
        label=role.label,
        predefined=True,
        permissions=list(role.permissions),
        organisation_id=None,
        created_at=None,
        updated_at=None,
    )


def _custom(role: OrganisationRole) -> RoleRead:
    return RoleRead(
        id=str(role.id),
        label=role.label,
        predefined=False,
        permissions=_permissions(role),
        organisation_id=role.organisation_id,
        created_at=role.created_at,
        updated_at=role.updated_at,
    )


async def _audit(
    caller: SiteCaller,
    session: AsyncSession,
    operation: str,
    role: OrganisationRole,
    before: RoleRead | None,
    after: RoleRead | None,
    verb: str,
) -> None:
    await caller.audit(
        session,
        operation,
        entity_type=ENTITY,
        entity_id=role.id,
        module=MODULE,
        summary=f"{verb} the organisation role {role.label!r}",
        before=_dump(before),
        after=_dump(after),
    )


async def _member_audited(
    session: AsyncSession,
    caller: SiteCaller,
    organisation_id: uuid.UUID,
    membership_id: uuid.UUID,
    operation: str,
    before: MemberRoles,
) -> MemberRoles:
    after = await member_roles(
        session=session, organisation_id=organisation_id, membership_id=membership_id
    )
    await caller.audit(
        session,
        operation,
        entity_type=organisation_service.ENTITY,
        entity_id=membership_id,
        module=MODULE,
        summary="changed the organisation roles of a member",
        before=_dump(before),
        after=_dump(after),
    )
    return after


def _dump(model: RoleRead | MemberRoles | None) -> dict[str, Any] | None:
    return None if model is None else model.model_dump(mode="json")
