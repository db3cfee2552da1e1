"""First start: an administrator, a default organisation and a ``test`` environment; and,
at every run, the marketplace's feature registry reconciled with the installed modules.

Idempotent: what exists is reused, never overwritten. The administrator's password comes
from ``PORTICO_BOOTSTRAP_ADMIN_PASSWORD``; without it one is generated and printed once, at
creation (it is never stored in clear and cannot be shown again).
"""

from __future__ import annotations

import secrets
import uuid
from dataclasses import dataclass

from portico.core.account import AccountStatus, User, find_by_email, normalise_email
from portico.core.audit import Actor
from portico.core.clock import utcnow
from portico.core.db.engine import Database
from portico.core.passwords import hash_password
from portico.core.settings import Settings
from portico.management.deployment.snapshot import publish
from portico.management.environment.models import Environment, GatewayHost
from portico.management.environment.repository import EnvironmentRepository
from portico.management.org import service as org_service
from portico.management.org.models import Membership
from portico.management.org.repository import OrganizationRepository
from portico.management.org.schemas import OrganizationCreate
from portico.management.role.permissions import ADMINISTRATOR_ROLE
from portico.management.role.repository import RoleRepository
from portico.marketplace.feature import service as feature_service
from portico.marketplace.modules import installed

DEFAULT_ENVIRONMENT = "test"
DEFAULT_GATEWAY_HOST = "test.gateway.localhost"


@dataclass(frozen=True)
class BootstrapResult:
    email: str
    generated_password: str | None  # only when created now without a configured password
    created_admin: bool
    org_id: uuid.UUID
    environment_id: uuid.UUID


async def bootstrap(settings: Settings, database: Database) -> BootstrapResult:
    actor = Actor.system("bootstrap")
    email = normalise_email(settings.bootstrap_admin_email)
    async with database.session() as session, session.begin():
        admin = await find_by_email(session, email)
        generated: str | None = None
        created = admin is None
        if admin is None:
            configured = settings.bootstrap_admin_password
            password = configured.get_secret_value() if configured else None
            if not password:
                password = generated = secrets.token_urlsafe(18)
            admin = User(
                id=uuid.uuid4(),
                email=email,
                display_name="Administrator",
                password_hash=hash_password(password),
                status=AccountStatus.ACTIVE,
                is_platform_admin=True,
            )
            session.add(admin)
            await session.flush()

        repository = OrganizationRepository(session)
        org = await repository.by_name(settings.bootstrap_org_name)
        if org is None:
            org = await org_service.create(
                session=session,
                actor=actor,
                data=OrganizationCreate(name=settings.bootstrap_org_name),
                owner=admin,
            )
        elif await repository.membership(org.id, admin.id) is None:
            role = await RoleRepository(session).by_name(org.id, ADMINISTRATOR_ROLE)
            session.add(
                Membership(
                    id=uuid.uuid4(),
                    org_id=org.id,
                    user_id=admin.id,
                    roles=[role] if role else [],
                    accepted_at=utcnow(),
                )
            )

        environments = EnvironmentRepository(session)
        env = await environments.by_name(org.id, DEFAULT_ENVIRONMENT)
        if env is None:
            host_free = await environments.host_free(DEFAULT_GATEWAY_HOST)
            env = Environment(
                id=uuid.uuid4(),
                org_id=org.id,
                name=DEFAULT_ENVIRONMENT,
                description="Created at first start",
                hosts=[GatewayHost(host=DEFAULT_GATEWAY_HOST, position=0)] if host_free else [],
            )
            session.add(env)
            await session.flush()
            await publish(session, env, "environment created")
        await feature_service.sync(
            session=session,
            actor=actor,
            modules=installed(settings.marketplace_modules),
            now=utcnow(),
        )
        return BootstrapResult(email, generated, created, org.id, env.id)
