"""The secret store: create (a name taken is a conflict: delete, then store again), list
(names only), delete, each audited without the value; and ``reveal`` for deploy, which reads
a value to seal it into a snapshot."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.errors import Conflict, NotFound
from portico.core.pagination import ListQuery, Page
from portico.core.sealing import SecretBox, secret_box
from portico.management.access import OrgCaller
from portico.management.secret.models import StoredSecret
from portico.management.secret.repository import SecretRepository
from portico.management.secret.schemas import SecretCreate, SecretRead

#: the HKDF purpose of the store's key: not the one gateways hold for consumer secrets
PURPOSE = b"portico secret store v1"


class SecretNotFound(NotFound):
    default_detail = "secret not found"


def box(server_keys: tuple[str, ...]) -> SecretBox:
    return secret_box(server_keys, purpose=PURPOSE)


def snapshot(secret: StoredSecret) -> dict[str, Any]:
    return SecretRead.model_validate(secret).model_dump(mode="json")


async def create(
    *, session: AsyncSession, caller: OrgCaller, data: SecretCreate, keys: tuple[str, ...]
) -> StoredSecret:
    repository = SecretRepository(session)
    if await repository.name_taken(caller.org_id, data.name):
        raise Conflict(
            f"a secret named '{data.name}' already exists; delete it first to replace it",
            errors=[{"pointer": "/name", "detail": "already in use"}],
        )
    secret = StoredSecret(
        id=uuid.uuid4(),
        org_id=caller.org_id,
        name=data.name,
        value_encrypted=box(keys).encrypt(data.value),
    )
    await repository.add(secret)
    await caller.audit(session, "secret.create", secret.id, after=snapshot(secret))
    return secret


async def list_(
    *, session: AsyncSession, caller: OrgCaller, query: ListQuery
) -> Page[StoredSecret]:
    return await SecretRepository(session).page_in_org(caller.org_id, query)


async def delete(*, session: AsyncSession, caller: OrgCaller, secret_id: uuid.UUID) -> None:
    """Deployments that resolved it keep what they resolved until they are deployed again."""
    repository = SecretRepository(session)
    secret = await repository.get_in_org(caller.org_id, secret_id)
    if secret is None:
        raise SecretNotFound()
    before = snapshot(secret)
    await repository.delete(secret)
    await caller.audit(session, "secret.delete", secret_id, before=before)


async def reveal(
    session: AsyncSession, org_id: uuid.UUID, name: str, keys: tuple[str, ...]
) -> str | None:
    """The value of the organisation's secret ``name``; None when there is none, or when
    the server's keys cannot open it any more."""
    secret = await SecretRepository(session).by_name(org_id, name)
    if secret is None:
        return None
    try:
        return box(keys).decrypt(secret.value_encrypted)
    except ValueError:
        return None
