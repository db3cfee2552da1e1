"""Sign-in, token refresh, the caller's own view, and accepting an invitation."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core import audit
from portico.core.account import AccountStatus, User, find_by_email, find_by_id
from portico.core.audit import Actor
from portico.core.clock import Clock
from portico.core.errors import Unauthorized, ValidationFailed
from portico.core.passwords import hash_password, needs_rehash, verify_password
from portico.core.refresh import RefreshTokenStore
from portico.core.tokens import AccessTokenService, hash_opaque_token
from portico.management.access import effective_permissions
from portico.management.auth.repository import InvitationRepository
from portico.management.auth.schemas import MeOrg, MeRead, TokenResponse
from portico.management.org.repository import OrganizationRepository
from portico.management.role.permissions import PERMISSIONS

INVALID_CREDENTIALS = "invalid email or password"


async def login(
    *,
    session: AsyncSession,
    tokens: AccessTokenService,
    refresh: RefreshTokenStore,
    email: str,
    password: str,
    actor: Actor,
    clock: Clock,
) -> TokenResponse:
    user = await find_by_email(session, email)
    # Verify even when there is no usable account, so failures take the same time.
    ok = verify_password(user.password_hash if user else None, password)
    if user is None or not ok or not user.can_sign_in:
        raise Unauthorized(INVALID_CREDENTIALS)
    if needs_rehash(user.password_hash or ""):
        user.password_hash = hash_password(password)
    user.last_login_at = clock.now()
    await audit.record(
        session,
        Actor(id=user.id, email=user.email, request_id=actor.request_id, ip=actor.ip),
        action="auth.login",
        entity_type="user",
        entity_id=user.id,
    )
    return await _issue(session, tokens, refresh, user)


async def refresh_tokens(
    *,
    session: AsyncSession,
    tokens: AccessTokenService,
    refresh: RefreshTokenStore,
    raw_refresh_token: str,
) -> TokenResponse:
    issued = await refresh.rotate(session, raw_refresh_token)
    user = await find_by_id(session, issued.subject_id)
    if user is None or not user.can_sign_in:
        await refresh.revoke_family(session, issued.family_id)
        raise Unauthorized("invalid refresh token")
    access = tokens.issue(str(user.id))
    return TokenResponse(
        token=access.token, refresh_token=issued.token, expires_at=access.expires_at
    )


async def _issue(
    session: AsyncSession, tokens: AccessTokenService, refresh: RefreshTokenStore, user: User
) -> TokenResponse:
    access = tokens.issue(str(user.id))
    issued = await refresh.issue(session, subject_id=user.id)
    return TokenResponse(
        token=access.token, refresh_token=issued.token, expires_at=access.expires_at
    )


async def me(*, session: AsyncSession, user: User) -> MeRead:
    orgs: list[MeOrg] = []
    repository = OrganizationRepository(session)
    if user.is_platform_admin:
        rows = await repository.all_by_name()
        memberships = {m.org_id: m for m in await repository.accepted_memberships(user.id)}
        for org in rows:
            membership = memberships.get(org.id)
            roles = sorted(r.name for r in membership.roles) if membership else []
            orgs.append(
                MeOrg(id=org.id, name=org.name, roles=roles, permissions=sorted(PERMISSIONS))
            )
    else:
        for membership, org in await repository.accepted_memberships_with_orgs(user.id):
            permissions = await effective_permissions(session, membership.id)
            orgs.append(
                MeOrg(
                    id=org.id,
                    name=org.name,
                    roles=sorted(r.name for r in membership.roles),
                    permissions=sorted(permissions),
                )
            )
    return MeRead(
        id=user.id,
        email=user.email,
        display_name=user.display_name,
        is_platform_admin=user.is_platform_admin,
        orgs=orgs,
    )


INVALID_INVITATION = "invalid or expired invitation"
MIN_PASSWORD_LENGTH = 12


async def accept_invitation(
    *,
    session: AsyncSession,
    tokens: AccessTokenService,
    refresh: RefreshTokenStore,
    raw_token: str,
    password: str,
    display_name: str | None,
    actor: Actor,
    clock: Clock,
) -> TokenResponse:
    """Accept an invitation: the membership it created starts granting its roles.

    A new account (INVITED) sets its password here. An existing account proves it is its
    owner with its current password: the token alone is not enough, because the inviter saw
    it, and must not be able to act in another organisation as the invitee.
    """
    invitation = await InvitationRepository(session).by_token_hash(hash_opaque_token(raw_token))
    now = clock.now()
    if invitation is None or invitation.accepted_at is not None or invitation.expires_at <= now:
        raise Unauthorized(INVALID_INVITATION)
    user = await find_by_id(session, invitation.user_id)
    membership = await OrganizationRepository(session).membership(
        invitation.org_id, invitation.user_id
    )
    if user is None or membership is None:
        raise Unauthorized(INVALID_INVITATION)
    if user.status is AccountStatus.INVITED:
        if len(password) < MIN_PASSWORD_LENGTH:
            raise ValidationFailed.at(
                "/password", f"$.password: must be at least {MIN_PASSWORD_LENGTH} characters long"
            )
        user.password_hash = hash_password(password)
        user.status = AccountStatus.ACTIVE
        if display_name:
            user.display_name = display_name
    elif user.status is not AccountStatus.ACTIVE or not verify_password(
        user.password_hash, password
    ):
        raise Unauthorized(INVALID_INVITATION)
    invitation.accepted_at = now
    membership.accepted_at = now
    await audit.record(
        session,
        Actor(id=user.id, email=user.email, request_id=actor.request_id, ip=actor.ip),
        action="invitation.accept",
        entity_type="invitation",
        entity_id=invitation.id,
        org_id=invitation.org_id,
    )
    return await _issue(session, tokens, refresh, user)
