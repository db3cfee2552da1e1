"""SAML 2.0 sign-in (service-provider initiated) through an organisation's identity-provider
configuration: the AuthnRequest, the assertion consumer, the mappings applied, and the
one-time code the browser exchanges for the same tokens a password sign-in gets.

Every sign-in is audited (``auth.saml_sign_in``), and so is every refusal
(``auth.saml_refused``, kept although the request fails): the reason, the configuration
and, once the assertion is verified, the email it names; never the document, its
signature, NameID or attributes.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar

from anyio import to_thread
from sqlalchemy.ext.asyncio import AsyncSession

from portico.core import audit
from portico.core.account import AccountStatus, User, find_by_email, find_by_id, normalise_email
from portico.core.audit import Actor
from portico.core.clock import Clock
from portico.core.errors import (
    Conflict,
    Forbidden,
    NotFound,
    ServiceUnavailable,
    Unauthorized,
    ValidationFailed,
)
from portico.core.refresh import RefreshTokenStore
from portico.core.saml import service_provider, store
from portico.core.saml.service_provider import (
    IdentityProviderTrust,
    SamlRefused,
    SamlUnavailable,
    ServiceProvider,
    Verified,
)
from portico.core.tokens import AccessTokenService
from portico.management.auth.schemas import TokenResponse
from portico.management.identity_provider.models import IdentityProvider
from portico.management.org.models import Membership, Organization
from portico.management.saml.repository import SamlSignInRepository

#: the active configurations the sign-in page lists, at most
MAX_LISTED = 200
MAX_EMAIL = 254
MAX_DISPLAY_NAME = 200


class ConfigurationNotFound(NotFound):
    default_detail = "identity provider not found"

    def __init__(self, idp_id: str) -> None:
        super().__init__(
            f"idpId: no identity-provider configuration {idp_id} in this organisation",
            errors=[
                {
                    "parameter": "idpId",
                    "detail": f"idpId: no identity-provider configuration {idp_id} in this "
                    "organisation",
                }
            ],
        )


class ConfigurationInactive(Conflict):
    # at the assertion consumer the refusal's audit entry is kept (the login writes nothing)
    commit: ClassVar[bool] = True
    kind = "identity-provider-inactive"
    title = "Identity Provider Inactive"
    description = (
        "The identity-provider configuration has no mappings, so it cannot place anyone and "
        "nobody signs in through it (the sign-in page offers email and password only). An "
        "administrator completes its Mappings (at least the attribute holding the email) "
        "and saves it."
    )


class SamlNotAvailable(ServiceUnavailable):
    kind = "saml-unavailable"
    title = "SAML Sign-in Unavailable"
    description = (
        "The server cannot check SAML signatures: the xmlsec1 program (Debian package "
        "xmlsec1) is not installed where the management service runs. The operator installs "
        "it; nothing else changes."
    )


class SignInRefused(Forbidden):
    """A Response that signs nobody in. Kept although the request fails: the audit entry of
    the refusal, and the request and assertion it used up."""

    kind = "saml-sign-in-refused"
    title = "SAML Sign-in Refused"
    description = (
        "The identity provider's answer was refused: its signature does not verify with the "
        "configured certificate, it is issued by another entity or for another audience, it "
        "is expired or not valid yet, it answers no sign-in this service started (or one "
        "already answered), or its assertion was used before. `detail` says which. Start "
        "the sign-in again from the sign-in page; if it keeps failing, an administrator "
        "checks the configuration's entity id and certificate against the identity "
        "provider's."
    )
    commit: ClassVar[bool] = True


class ResponseInvalid(ValidationFailed):
    """A form that is not a SAML Response at all; audited and kept like a refusal."""

    commit: ClassVar[bool] = True


class NotProvisioned(Forbidden):
    kind = "not-provisioned"
    title = "Not Provisioned"
    description = (
        "The identity provider signed the user in, but their email is not provisioned in "
        "the organisation whose configuration they used: no account with this email is a "
        "member of it. An administrator of the organisation invites the email (POST "
        "/api/orgs/{orgId}/users), or switches on just-in-time provisioning "
        "(`jitProvisioning`) for the configuration."
    )
    commit: ClassVar[bool] = True


class CodeRefused(Unauthorized):
    default_detail = "invalid sign-in code"


@dataclass(frozen=True)
class ConfiguredSignIn:
    """One active configuration as the sign-in page shows it."""

    idp: IdentityProvider
    org: Organization


@dataclass(frozen=True)
class SignedIn:
    """A completed sign-in: who, for which client, and the code that client exchanges."""

    user: User
    target: str
    code: str
    org: Organization
    idp: IdentityProvider


def endpoints(base_url: str, org_id: uuid.UUID, idp_id: uuid.UUID) -> ServiceProvider:
    """Portico's entity id (its metadata URL) and assertion consumer for a configuration."""
    root = f"{base_url.rstrip('/')}/api/orgs/{org_id}/identity-providers/{idp_id}/saml"
    return ServiceProvider(entity_id=f"{root}/metadata", acs_url=f"{root}/acs")


def trust(idp: IdentityProvider) -> IdentityProviderTrust:
    return IdentityProviderTrust(
        entity_id=idp.entity_id, sso_url=idp.sso_url, certificate_pem=idp.certificate
    )


async def active_configurations(*, session: AsyncSession) -> list[ConfiguredSignIn]:
    rows = await SamlSignInRepository(session).active_configurations(MAX_LISTED)
    return [ConfiguredSignIn(idp=idp, org=org) for idp, org in rows]


async def _configuration(
    session: AsyncSession, org_id: uuid.UUID, idp_id: uuid.UUID, raw_id: str
) -> tuple[IdentityProvider, Organization]:
    found = await SamlSignInRepository(session).configuration(org_id, idp_id)
    if found is None:
        raise ConfigurationNotFound(raw_id)
    return found


async def metadata(
    *, session: AsyncSession, base_url: str, org_id: uuid.UUID, idp_id: uuid.UUID, raw_id: str
) -> str:
    idp, _ = await _configuration(session, org_id, idp_id, raw_id)
    try:
        return await to_thread.run_sync(
            service_provider.metadata, trust(idp), endpoints(base_url, org_id, idp_id)
        )
    except SamlUnavailable as missing:
        raise SamlNotAvailable(str(missing)) from None


async def start(
    *,
    session: AsyncSession,
    clock: Clock,
    base_url: str,
    org_id: uuid.UUID,
    idp_id: uuid.UUID,
    raw_id: str,
    target: str,
    challenge: str | None,
) -> str:
    """The identity provider's URL carrying a new AuthnRequest (HTTP-Redirect binding); the
    request is remembered, with the client it is for, until it is answered or expires."""
    idp, org = await _configuration(session, org_id, idp_id, raw_id)
    if not idp.active:
        raise ConfigurationInactive(
            f"the identity provider '{idp.name}' of {org.name} has no mappings: sign in with "
            "email and password"
        )
    sp = endpoints(base_url, org_id, idp_id)
    try:
        request_id, location = await to_thread.run_sync(
            service_provider.authn_request, trust(idp), sp
        )
    except SamlUnavailable as missing:
        raise SamlNotAvailable(str(missing)) from None
    await store.remember_request(
        session,
        request_id=request_id,
        idp_id=idp.id,
        target=target,
        challenge=challenge,
        now=clock.now(),
    )
    return location


async def consume(
    *,
    session: AsyncSession,
    clock: Clock,
    base_url: str,
    org_id: uuid.UUID,
    idp_id: uuid.UUID,
    raw_id: str,
    saml_response: str | None,
    relay_state: str | None,
    actor: Actor,
) -> SignedIn:
    """Verify a Response posted to the assertion consumer and sign its user in."""
    idp, org = await _configuration(session, org_id, idp_id, raw_id)
    refusal = _Refusals(session, actor, idp, org)
    if not saml_response:
        await refusal.record("the form has no SAMLResponse")
        raise ResponseInvalid([{"pointer": "/SAMLResponse", "detail": "SAMLResponse: required"}])
    if not idp.active:
        await refusal.record("the configuration is inactive (no mappings)")
        raise ConfigurationInactive(
            f"the identity provider '{idp.name}' of {org.name} has no mappings: nobody signs "
            "in through it"
        )
    try:
        document = service_provider.decode_response(saml_response)
        request_id = service_provider.in_response_to(document, issuer=idp.entity_id)
    except SamlRefused as refused:
        await refusal.record(str(refused))
        raise ResponseInvalid(
            [{"pointer": "/SAMLResponse", "detail": f"SAMLResponse: {refused}"}]
        ) from None
    if relay_state is not None and relay_state != request_id:
        await refusal.record("the RelayState does not belong to the request answered")
        raise SignInRefused("the RelayState does not belong to the sign-in this Response answers")
    now = clock.now()
    pending = await store.claim_request(session, request_id=request_id, idp_id=idp.id, now=now)
    if pending is None:
        reason = (
            "the Response answers no sign-in this service started for this configuration, "
            "or one already answered or expired"
        )
        await refusal.record(reason)
        raise SignInRefused(reason)
    sp = endpoints(base_url, org_id, idp_id)
    try:
        verified = await to_thread.run_sync(_verify, trust(idp), sp, saml_response, request_id)
    except SamlUnavailable as missing:
        raise SamlNotAvailable(str(missing)) from None
    except SamlRefused as refused:
        await refusal.record(str(refused))
        raise SignInRefused(str(refused)) from None
    if not await store.use_assertion(
        session,
        issuer=verified.issuer,
        assertion_id=verified.assertion_id,
        expires_at=max(verified.not_on_or_after, now),
    ):
        reason = "the assertion was used before (a replay)"
        await refusal.record(reason)
        raise SignInRefused(reason)
    email = _email(idp, verified)
    if email is None:
        reason = "the assertion carries no email (in the attribute mapped to it, or as NameID)"
        await refusal.record(reason)
        raise SignInRefused(reason)
    refusal.email = email
    user = await _place(session, idp, org, verified, email, refusal, now)
    user.last_login_at = now
    await audit.record(
        session,
        Actor(id=user.id, email=user.email, request_id=actor.request_id, ip=actor.ip),
        action="auth.saml_sign_in",
        entity_type="user",
        entity_id=user.id,
        org_id=org.id,
        summary=f"signed in through the identity provider '{idp.name}' ({pending.target})",
    )
    code = await store.issue_code(
        session, user_id=user.id, target=pending.target, challenge=pending.challenge, now=now
    )
    return SignedIn(user=user, target=pending.target, code=code, org=org, idp=idp)


def _verify(
    idp: IdentityProviderTrust, sp: ServiceProvider, saml_response: str, request_id: str
) -> Verified:
    return service_provider.verify(idp, sp, saml_response=saml_response, request_id=request_id)


class _Refusals:
    """Writes the audit entry of a refusal: the reason and the configuration, and the email
    once a verified assertion named one."""

    def __init__(
        self, session: AsyncSession, actor: Actor, idp: IdentityProvider, org: Organization
    ) -> None:
        self.session = session
        self.actor = actor
        self.idp = idp
        self.org = org
        self.email: str | None = None

    async def record(self, reason: str) -> None:
        await audit.record(
            self.session,
            Actor(
                id=None,
                email=self.email,
                kind="anonymous",
                request_id=self.actor.request_id,
                ip=self.actor.ip,
            ),
            action="auth.saml_refused",
            entity_type="identity_provider",
            entity_id=self.idp.id,
            org_id=self.org.id,
            summary=f"SAML sign-in through '{self.idp.name}' refused: {reason}",
        )


def _mapped(idp: IdentityProvider, verified: Verified, field: str) -> list[str]:
    values: list[str] = []
    for mapping in idp.mappings or []:
        if mapping.get("userField") == field:
            values.extend(verified.attributes.get(str(mapping.get("attribute")), []))
    return [value.strip() for value in values if value and value.strip()]


def _email(idp: IdentityProvider, verified: Verified) -> str | None:
    """The mapped email attribute's value; the NameID only when no attribute is mapped to
    the email (an IdP that names users by their email address)."""
    if any(m.get("userField") == "email" for m in idp.mappings or []):
        mapped = _mapped(idp, verified, "email")
        candidate = mapped[0] if mapped else ""
    else:
        candidate = verified.name_id or ""
    email = normalise_email(candidate)
    if not email or len(email) > MAX_EMAIL or "@" not in email or any(c.isspace() for c in email):
        return None
    return email


async def _place(
    session: AsyncSession,
    idp: IdentityProvider,
    org: Organization,
    verified: Verified,
    email: str,
    refusal: _Refusals,
    now: datetime,
) -> User:
    """The account the email names, a member of the organisation (made so when just-in-time
    provisioning is on), its display name and groups as the mappings say."""
    repository = SamlSignInRepository(session)
    user = await find_by_email(session, email)
    membership = None if user is None else await repository.membership(org.id, user.id)
    if user is not None and user.status not in (AccountStatus.ACTIVE, AccountStatus.INVITED):
        reason = f"the account of {email} is {user.status.value}"
        await refusal.record(reason)
        raise SignInRefused(reason)
    if membership is None and not idp.jit_provisioning:
        reason = f"{email} is not provisioned in the organisation {org.name}"
        await refusal.record(reason)
        raise NotProvisioned(
            f"{email} is not provisioned in the organisation {org.name}: ask one of its "
            "administrators to invite this email, or to switch on just-in-time provisioning "
            f"for the identity provider '{idp.name}'"
        )
    if user is None:
        user = User(id=uuid.uuid4(), email=email, password_hash=None, status=AccountStatus.ACTIVE)
        session.add(user)
        await session.flush()
    if user.status is AccountStatus.INVITED:
        # the identity provider vouches for the email: the invitation's purpose is met
        user.status = AccountStatus.ACTIVE
    if membership is None:
        membership = Membership(id=uuid.uuid4(), org_id=org.id, user_id=user.id, user=user)
        session.add(membership)
        await session.flush()
    if membership.accepted_at is None:
        membership.accepted_at = now
    names = _mapped(idp, verified, "displayName")
    if names:
        user.display_name = names[0][:MAX_DISPLAY_NAME]
    if any(m.get("userField") == "groups" for m in idp.mappings or []):
        await _set_groups(repository, org.id, membership, _mapped(idp, verified, "groups"))
    await session.flush()
    return user


async def _set_groups(
    repository: SamlSignInRepository,
    org_id: uuid.UUID,
    membership: Membership,
    names: list[str],
) -> None:
    """The identity provider is the authority on groups: the membership is in exactly the
    organisation's groups its assertion names (names it has no group for are ignored)."""
    wanted = await repository.groups_named(org_id, names)
    wanted_ids = {group.id for group in wanted}
    current = await repository.groups_of(membership.id)
    for group in current:
        if group.id not in wanted_ids:
            group.members.remove(membership)
    current_ids = {group.id for group in current}
    for group in wanted:
        if group.id not in current_ids:
            group.members.append(membership)


async def exchange(
    *,
    session: AsyncSession,
    clock: Clock,
    tokens: AccessTokenService,
    refresh: RefreshTokenStore,
    code: str,
    verifier: str | None,
) -> TokenResponse:
    """The console's tokens for the one-time code its sign-in was given."""
    redeemed = await store.redeem_code(
        session, code=code, verifier=verifier, target="console", now=clock.now()
    )
    user = None if redeemed is None else await find_by_id(session, redeemed.user_id)
    if user is None or user.status is not AccountStatus.ACTIVE:
        raise CodeRefused()
    access = tokens.issue(str(user.id))
    issued = await refresh.issue(session, subject_id=user.id)
    return TokenResponse(
        token=access.token, refresh_token=issued.token, expires_at=access.expires_at
    )
