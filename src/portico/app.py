"""The control-plane ASGI application: the management service, the marketplace admin API
under /api/admin/v1 and the developer portal API under /api/portal/v1, built from settings."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from portico import __version__
from portico.console import mount_console
from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.middleware import RequestContextMiddleware
from portico.core.problem_pages import router as problem_pages_router
from portico.core.problems import install_problem_handlers
from portico.core.refresh import RefreshTokenStore
from portico.core.settings import Settings
from portico.core.tokens import AccessTokenService
from portico.management import openapi
from portico.management.routes import include_management_routes
from portico.marketplace.app import PREFIX, create_marketplace_app
from portico.marketplace.public import token_issuer
from portico.portal.app import PREFIX as PORTAL_PREFIX
from portico.portal.app import create_portal_app
from portico.portal.pages import PORTAL
from portico.web_pages import mount_pages

MANAGEMENT_AUDIENCE = "portico-management"


def create_app(
    settings: Settings, *, database: Database | None = None, clock: Clock | None = None
) -> FastAPI:
    database = database or Database(settings.resolved_database_url, echo=settings.database_echo)
    clock = clock or Clock()

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        await admin_api.state.rate_limiter.aclose()  # holds a Redis pool when configured
        await database.dispose()

    app = FastAPI(
        title="Portico management service",
        version=__version__,
        lifespan=lifespan,
        docs_url="/api/docs",
        redoc_url=None,
        openapi_url="/api/openapi.json",
    )
    app.state.settings = settings
    app.state.database = database
    app.state.clock = clock
    app.state.access_tokens = AccessTokenService(
        settings.signing_keys(),
        clock,
        ttl_seconds=settings.access_token_ttl_seconds,
        audience=MANAGEMENT_AUDIENCE,
    )
    app.state.refresh_tokens = RefreshTokenStore(
        clock, ttl_seconds=settings.refresh_token_ttl_seconds, audience=MANAGEMENT_AUDIENCE
    )
    admin_api = create_marketplace_app(settings, database=database, clock=clock)
    # one limiter for the process: portal registration counts beside the admin API's sign-ins
    app.state.rate_limiter = admin_api.state.rate_limiter
    install_problem_handlers(app)

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    # Routes are matched in order, each router's routes one by one: the two mounted APIs
    # come first, so that their requests are not matched against every management route
    # before reaching their prefix (a full scan cost a marketplace request ~0.3 ms)
    app.mount(PREFIX, admin_api)
    portal_api = create_portal_app(
        settings,
        database=database,
        clock=clock,
        token_issuer=token_issuer(admin_api),
        rate_limiter=admin_api.state.rate_limiter,
    )
    app.mount(PORTAL_PREFIX, portal_api)
    include_management_routes(app)
    mount_console(app, settings.console_dir)
    mount_pages(app, PORTAL, settings.portal_dir)
    # the pages the problem documents' ``type`` URIs name (relative: resolved at this root)
    app.include_router(problem_pages_router)
    openapi.install(app)  # every route's failures (problem+json), derived once for all

    app.add_middleware(
        RequestContextMiddleware,
        max_body_bytes=settings.max_body_bytes,
        trusted_proxies=settings.trusted_proxies,
    )
    return app
