"""Apps: a developer's credential set in one environment. Each app owns one consumer (named
``app-<app id>``), whose credentials the environment's gateways check; its products decide
what it may call and how much. Every change that alters what gateways enforce publishes the
environment's snapshot in the same transaction."""

from __future__ import annotations

import secrets
import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.clock import utcnow
from portico.core.errors import BadRequest, Conflict, NotFound
from portico.core.pagination import ListQuery, Page
from portico.management.access import OrgCaller
from portico.management.app.models import App, AppStatus
from portico.management.app.repository import AppRepository
from portico.management.app.schemas import AppCreate, AppRead, AppUpdate, CredentialRotate
from portico.management.consumer import service as consumer_service
from portico.management.consumer.credentials import SecretBox, public_plugins
from portico.management.consumer.models import Consumer
from portico.management.consumer.repository import ConsumerRepository
from portico.management.developer.models import Developer
from portico.management.environment import service as environment_service
from portico.management.environment.ports import publish
from portico.management.environment.repository import EnvironmentRepository

#: credential plugins whose empty configuration ({}) the app generates
GENERATED_SECRET_BYTES = 32


class AppNotFound(NotFound):
    default_detail = "app not found"


class DeveloperNotFound(NotFound):
    default_detail = "developer not found"


@dataclass
class AppView:
    """An app with what its read shape shows: product ranks and its consumer's credentials."""

    app: App
    products: dict[str, int]
    credentials: dict[str, Any]
    generated: dict[str, dict[str, str]] = field(default_factory=dict)

    def read(self) -> AppRead:
        app = self.app
        return AppRead(
            id=app.id,
            org_id=app.org_id,
            developer_id=app.developer_id,
            environment_id=app.environment_id,
            consumer_id=app.consumer_id,
            name=app.name,
            status=app.status,
            products=self.products,
            credentials=self.credentials,
            created_at=app.created_at,
            updated_at=app.updated_at,
        )


def _snapshot(view: AppView) -> dict[str, Any]:
    return view.read().model_dump(mode="json")


async def _view(session: AsyncSession, app: App) -> AppView:
    ranks = await AppRepository(session).products_of(app.id)
    consumer = await ConsumerRepository(session).get(app.consumer_id)
    return AppView(
        app,
        {str(k): v for k, v in sorted(ranks.items(), key=lambda item: (item[1], str(item[0])))},
        public_plugins(consumer.plugins or {}) if consumer is not None else {},
    )


async def _developer(
    session: AsyncSession, caller: OrgCaller, developer_id: uuid.UUID
) -> Developer:
    developer = await AppRepository(session).developer_in_org(caller.org_id, developer_id)
    if developer is None:
        raise DeveloperNotFound()
    return developer


async def get_app(*, session: AsyncSession, caller: OrgCaller, app_id: uuid.UUID) -> App:
    app = await AppRepository(session).get_in_org(caller.org_id, app_id)
    if app is None:
        raise AppNotFound()
    return app


async def get(*, session: AsyncSession, caller: OrgCaller, app_id: uuid.UUID) -> AppView:
    return await _view(session, await get_app(session=session, caller=caller, app_id=app_id))


async def list_(
    *,
    session: AsyncSession,
    caller: OrgCaller,
    developer_id: uuid.UUID,
    environment_id: uuid.UUID,
    query: ListQuery,
) -> Page[AppView]:
    await _developer(session, caller, developer_id)
    await environment_service.get(session=session, caller=caller, env_id=environment_id)
    repository = AppRepository(session)
    page = await repository.page(repository.of_developer(developer_id, environment_id), query)
    return Page(
        items=[await _view(session, app) for app in page.items],
        page=page.page,
        size=page.size,
        total=page.total,
    )


async def _ranks(
    repository: AppRepository, org_id: uuid.UUID, sent: dict[str, int]
) -> dict[uuid.UUID, int]:
    """The sent ``{productId: rank}`` with ids checked to be products of the org."""
    parsed: dict[uuid.UUID, int] = {}
    unknown: list[str] = []
    for raw, rank in sent.items():
        try:
            parsed[uuid.UUID(raw)] = rank
        except ValueError:
            unknown.append(raw)
    known = await repository.products_in_org(org_id, parsed)
    unknown += [raw for raw in sent if raw not in unknown and uuid.UUID(raw) not in known]
    if unknown:
        detail = f"unknown product '{unknown[0]}'"
        raise BadRequest(
            detail,
            errors=[
                {"pointer": f"/products/{raw}", "detail": "unknown product"} for raw in unknown
            ],
        )
    return parsed


def _generate(sent: dict[str, dict[str, Any]], username: str) -> dict[str, dict[str, Any]]:
    """Credentials sent empty made whole: basic-auth and jwt-auth get generated secrets
    (key-auth's key is generated by the consumer's own rules)."""
    filled = dict(sent)
    basic = filled.get("basic-auth")
    if basic is not None and "password" not in basic:
        filled["basic-auth"] = {
            "username": username,
            **basic,
            "password": secrets.token_urlsafe(GENERATED_SECRET_BYTES),
        }
    jwt = filled.get("jwt-auth")
    if jwt is not None and not jwt:
        filled["jwt-auth"] = {
            "key": username,
            "secret": secrets.token_urlsafe(GENERATED_SECRET_BYTES),
        }
    return filled


def _shown(
    sent: dict[str, dict[str, Any]], filled: dict[str, dict[str, Any]]
) -> dict[str, dict[str, str]]:
    """What this request generated beyond key-auth's key: shown once."""
    shown: dict[str, dict[str, str]] = {}
    for name in ("basic-auth", "jwt-auth"):
        if name in sent and filled[name] is not sent[name]:
            generated = {k: str(v) for k, v in filled[name].items() if k not in sent[name]}
            if generated:
                shown[name] = generated
    return shown


async def create(
    *,
    session: AsyncSession,
    caller: OrgCaller,
    developer_id: uuid.UUID,
    environment_id: uuid.UUID,
    data: AppCreate,
    box: SecretBox,
) -> AppView:
    repository = AppRepository(session)
    developer = await _developer(session, caller, developer_id)
    env = await environment_service.get(session=session, caller=caller, env_id=environment_id)
    if await repository.name_taken_by_developer(developer.id, env.id, data.name):
        raise Conflict(f"an app named '{data.name}' already exists for this developer here")
    ranks = await _ranks(repository, caller.org_id, data.products)
    app_id = uuid.uuid4()
    username = f"app-{app_id.hex}"
    filled = _generate(data.plugins, username)
    plugins, generated = consumer_service.prepare_plugins(filled, {}, box)
    consumers = ConsumerRepository(session)
    await consumer_service.check_credentials_free(consumers, caller.org_id, plugins, {}, None)
    consumer = Consumer(
        id=uuid.uuid4(),
        org_id=caller.org_id,
        username=username,
        description=f"app {data.name} of {developer.email}"[:256],
        plugins=plugins,
    )
    await consumers.add(consumer)
    app = App(
        id=app_id,
        org_id=caller.org_id,
        developer_id=developer.id,
        environment_id=env.id,
        consumer_id=consumer.id,
        name=data.name,
        status=AppStatus.ACTIVE,
    )
    await repository.add(app)
    await repository.set_products(app.id, ranks)
    await publish(session, env, f"app {app.name} created")
    view = await _view(session, app)
    view.generated = {**generated, **_shown(data.plugins, filled)}
    await caller.audit(session, "app.create", app.id, after=_snapshot(view))
    return view


async def update(
    *,
    session: AsyncSession,
    caller: OrgCaller,
    app_id: uuid.UUID,
    data: AppUpdate,
    box: SecretBox,
) -> AppView:
    repository = AppRepository(session)
    app = await get_app(session=session, caller=caller, app_id=app_id)
    before = _snapshot(await _view(session, app))
    developer_id = app.developer_id
    if data.developer_id is not None:
        developer_id = (await _developer(session, caller, data.developer_id)).id
    name = data.name if data.name is not None else app.name
    renamed = (name, developer_id) != (app.name, app.developer_id)
    if renamed and await repository.name_taken_by_developer(
        developer_id, app.environment_id, name, except_id=app.id
    ):
        raise Conflict(f"an app named '{name}' already exists for this developer here")
    ranks = None
    if data.products is not None:
        ranks = await _ranks(repository, caller.org_id, data.products)
    generated: dict[str, dict[str, str]] = {}
    if data.plugins is not None:
        consumer = await ConsumerRepository(session).get(app.consumer_id)
        assert consumer is not None
        filled = _generate(data.plugins, consumer.username)
        plugins, generated = consumer_service.prepare_plugins(filled, consumer.plugins or {}, box)
        await consumer_service.check_credentials_free(
            ConsumerRepository(session), caller.org_id, plugins, consumer.plugins or {}, consumer.id
        )
        consumer.plugins = plugins
        generated = {**generated, **_shown(data.plugins, filled)}
    app.name = name
    app.developer_id = developer_id
    if data.status is not None:
        app.status = data.status
    if ranks is not None:
        await repository.set_products(app.id, ranks)
    await session.flush()
    await session.refresh(app)
    await _publish(session, app, f"app {app.name} changed")
    view = await _view(session, app)
    view.generated = generated
    await caller.audit(session, "app.update", app.id, before=before, after=_snapshot(view))
    return view


async def rotate(
    *,
    session: AsyncSession,
    caller: OrgCaller,
    app_id: uuid.UUID,
    data: CredentialRotate,
    box: SecretBox,
) -> AppView:
    """A new key-auth key, basic-auth password, jwt-auth key id and secret, edge-auth client
    id and secret (those the app has); the replaced ones keep working for ``graceSeconds``:
    the old key, the old password, tokens signed for the old key id, the old client id and
    secret (and the tokens issued to it)."""
    app = await get_app(session=session, caller=caller, app_id=app_id)
    consumer = await ConsumerRepository(session).get(app.consumer_id)
    assert consumer is not None
    current: dict[str, Any] = dict(consumer.plugins or {})
    rotating = [
        name for name in ("key-auth", "basic-auth", "jwt-auth", "edge-auth") if name in current
    ]
    if not rotating:
        raise BadRequest("the app has no credential to rotate")
    sent: dict[str, dict[str, Any]] = {}
    for name, stored in current.items():
        if name == "key-auth":
            sent[name] = {}
        elif name == "basic-auth":
            sent[name] = {"username": stored["username"]}
        elif name in ("jwt-auth", "edge-auth"):  # edge-auth: a new client id and secret
            sent[name] = {}
        else:
            sent[name] = stored
    filled = _generate(sent, consumer.username)
    if "jwt-auth" in filled:  # a new key id, so that old tokens stop matching at once
        filled["jwt-auth"]["key"] = f"{consumer.username}-{secrets.token_hex(4)}"
    kept = {k: v for k, v in current.items() if k not in rotating}
    prepared, generated = consumer_service.prepare_plugins(
        {k: v for k, v in filled.items() if k in rotating}, {}, box
    )
    plugins = {**kept, **prepared}
    await consumer_service.check_credentials_free(
        ConsumerRepository(session), caller.org_id, plugins, current, consumer.id
    )
    now = utcnow()
    retiring = [
        entry for entry in consumer.retiring or [] if entry.get("expires_at", "") > now.isoformat()
    ]
    if data.grace_seconds:
        expires_at = (now + timedelta(seconds=data.grace_seconds)).isoformat()
        retiring += [
            {"plugin": name, "credential": current[name], "expires_at": expires_at}
            for name in rotating
        ]
    before = _snapshot(await _view(session, app))
    consumer.plugins = plugins
    consumer.retiring = retiring
    await session.flush()
    await _publish(session, app, f"app {app.name} credentials rotated")
    view = await _view(session, app)
    view.generated = {**generated, **_shown(sent, filled)}
    await caller.audit(
        session,
        "app.rotate",
        app.id,
        before=before,
        after=_snapshot(view),
        summary=f"grace {data.grace_seconds}s",
    )
    return view


async def delete(*, session: AsyncSession, caller: OrgCaller, app_id: uuid.UUID) -> None:
    app = await get_app(session=session, caller=caller, app_id=app_id)
    before = _snapshot(await _view(session, app))
    await AppRepository(session).delete_with_consumers([app])
    await _publish(session, app, f"app {app.name} deleted")
    await caller.audit(session, "app.delete", app_id, before=before)


async def _publish(session: AsyncSession, app: App, reason: str) -> None:
    env = await EnvironmentRepository(session).get(app.environment_id)
    if env is not None:
        await publish(session, env, reason)
