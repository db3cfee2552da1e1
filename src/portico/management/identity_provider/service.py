"""Identity-provider (SAML) configurations: create, read, change, delete; every change
audited. A configuration with no mappings is kept but inactive (the seed's rule)."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.db.session import end_reads
from portico.core.egress import EgressGuard
from portico.core.errors import Conflict, NotFound
from portico.core.pagination import ListQuery, Page
from portico.management.access import OrgCaller
from portico.management.identity_provider import metadata as idp_metadata
from portico.management.identity_provider.models import IdentityProvider
from portico.management.identity_provider.repository import IdentityProviderRepository
from portico.management.identity_provider.schemas import (
    IdentityProviderCreate,
    IdentityProviderMapping,
    IdentityProviderSummary,
    IdentityProviderUpdate,
    checked_metadata,
)


class IdentityProviderNotFound(NotFound):
    default_detail = "identity provider not found"


def snapshot(idp: IdentityProvider) -> dict[str, Any]:
    # The summary, not the full read: the fingerprint identifies the certificate, and the
    # audit log need not hold a copy of every PEM ever pasted.
    return IdentityProviderSummary.model_validate(idp).model_dump(mode="json")


async def get(*, session: AsyncSession, caller: OrgCaller, idp_id: uuid.UUID) -> IdentityProvider:
    idp = await IdentityProviderRepository(session).get_in_org(caller.org_id, idp_id)
    if idp is None:
        raise IdentityProviderNotFound()
    return idp


async def list_(
    *, session: AsyncSession, caller: OrgCaller, query: ListQuery
) -> Page[IdentityProvider]:
    repository = IdentityProviderRepository(session)
    return await repository.page_in_org(caller.org_id, query)


async def _from_metadata(
    session: AsyncSession, url: str, guard: EgressGuard, given: tuple[str | None, ...]
) -> tuple[str, str, str]:
    """(entity id, SSO URL, certificate) read from the IdP's metadata, each unless given.
    Nothing is written before: the request's reads end first (no transaction is held while
    the remote side answers), and a failure leaves the store as it was."""
    await end_reads(session)
    facts = await idp_metadata.read(url, guard)
    read = checked_metadata(facts.entity_id, facts.sso_url, facts.certificate_pem)
    entity_id, sso_url, certificate = (
        g if g is not None else r for g, r in zip(given, read, strict=True)
    )
    return entity_id, sso_url, certificate


async def create(
    *,
    session: AsyncSession,
    caller: OrgCaller,
    data: IdentityProviderCreate,
    guard: EgressGuard,
) -> IdentityProvider:
    repository = IdentityProviderRepository(session)
    given = (data.entity_id, data.sso_url, data.certificate)
    if data.metadata_url is not None:
        entity_id, sso_url, certificate = await _from_metadata(
            session, data.metadata_url, guard, given
        )
    else:
        assert None not in given  # the schema's rule
        entity_id, sso_url, certificate = (str(v) for v in given)
    await _check_unique(repository, caller.org_id, data.name, None)
    idp = IdentityProvider(
        id=uuid.uuid4(),
        org_id=caller.org_id,
        name=data.name,
        type=data.type,
        metadata_url=data.metadata_url,
        entity_id=entity_id,
        sso_url=sso_url,
        certificate=certificate,
        mappings=_stored(data.mappings),
        jit_provisioning=data.jit_provisioning,
    )
    await repository.add(idp)
    await caller.audit(session, "identity_provider.create", idp.id, after=snapshot(idp))
    return idp


async def update(
    *,
    session: AsyncSession,
    caller: OrgCaller,
    idp_id: uuid.UUID,
    data: IdentityProviderUpdate,
    guard: EgressGuard,
) -> IdentityProvider:
    repository = IdentityProviderRepository(session)
    if data.metadata_url is not None:
        read = await _from_metadata(
            session, data.metadata_url, guard, (data.entity_id, data.sso_url, data.certificate)
        )
        data = data.model_copy(
            update={"entity_id": read[0], "sso_url": read[1], "certificate": read[2]}
        )
    idp = await get(session=session, caller=caller, idp_id=idp_id)
    before = snapshot(idp)
    await _check_unique(repository, caller.org_id, data.name, idp.id)
    if data.name is not None:
        idp.name = data.name
    if data.type is not None:
        idp.type = data.type
    if data.entity_id is not None:
        idp.entity_id = data.entity_id
    if data.sso_url is not None:
        idp.sso_url = data.sso_url
    if data.certificate is not None:
        idp.certificate = data.certificate
    if data.metadata_url is not None:
        idp.metadata_url = data.metadata_url
    if data.jit_provisioning is not None:
        idp.jit_provisioning = data.jit_provisioning
    if data.mappings is not None:
        # A new list object: the JSON column does not track in-place changes.
        idp.mappings = _stored(data.mappings)
    await session.flush()
    await session.refresh(idp)
    await caller.audit(
        session, "identity_provider.update", idp.id, before=before, after=snapshot(idp)
    )
    return idp


async def delete(*, session: AsyncSession, caller: OrgCaller, idp_id: uuid.UUID) -> None:
    idp = await get(session=session, caller=caller, idp_id=idp_id)
    before = snapshot(idp)
    await IdentityProviderRepository(session).delete(idp)
    await caller.audit(session, "identity_provider.delete", idp_id, before=before)


async def _check_unique(
    repository: IdentityProviderRepository,
    org_id: uuid.UUID,
    name: str | None,
    idp_id: uuid.UUID | None,
) -> None:
    if name is not None and await repository.name_taken(org_id, name, except_id=idp_id):
        raise Conflict(f"an identity provider named '{name}' already exists")


def _stored(mappings: list[IdentityProviderMapping]) -> list[dict[str, str]]:
    """Mappings are stored in their wire shape (``{attribute, userField}``)."""
    return [m.model_dump(by_alias=True) for m in mappings]
