"""The developer portal API: a FastAPI application mounted at ``/api/portal/v1`` in the
control-plane process (as the admin API is at ``/api/admin/v1``), sharing its store, clock,
middleware, problem handlers, rate limiter and the admin API's token issuer.

``GET /openapi.json`` is the OpenAPI 3.1 document of its routes, unwrapped and public (the
catalogue is open to anonymous callers, so is its description). Every route refuses query
parameters it does not read (``core/query.py``); successes and collections use the admin
API's envelope (``core/envelope.py``) and list contract (page, limit, sort, filter[...]).
"""

from __future__ import annotations

from typing import Any

from fastapi import Depends, FastAPI
from fastapi.responses import JSONResponse

from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.problems import install_problem_handlers
from portico.core.query import strict_query
from portico.core.ratelimit import RateLimiter
from portico.core.settings import Settings
from portico.marketplace.public import SUBSCRIPTIONS_FEATURE, TokenIssuer, feature_installed
from portico.portal import openapi
from portico.portal.account.endpoints import router as account_router
from portico.portal.apps.endpoints import router as apps_router
from portico.portal.auth.endpoints import router as auth_router
from portico.portal.catalogue.endpoints import router as catalogue_router
from portico.portal.features import gated
from portico.portal.invitation.endpoints import router as invitation_router
from portico.portal.jwks import router as jwks_router
from portico.portal.registration.endpoints import router as registration_router
from portico.portal.subscriptions.endpoints import router as subscriptions_router

PREFIX = "/api/portal/v1"
#: the version of the portal API's document; the path carries the major, v1
API_VERSION = "1.0.0"
ROUTERS = (
    jwks_router,
    registration_router,
    auth_router,
    account_router,
    catalogue_router,
    invitation_router,
)
#: the routers of the marketplace feature ``subscriptions`` (portal/features.py)
SUBSCRIPTION_ROUTERS = (apps_router, subscriptions_router)


def create_portal_app(
    settings: Settings,
    *,
    database: Database,
    clock: Clock,
    token_issuer: TokenIssuer,
    rate_limiter: RateLimiter,
) -> FastAPI:
    """``token_issuer`` and ``rate_limiter``: the admin API's (one per process), so that
    a token is good on both surfaces and an attempt counts on both."""
    app = FastAPI(
        title="Portico developer portal API",
        version=API_VERSION,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,  # served below, with its servers
        dependencies=[Depends(strict_query)],
    )
    app.state.settings = settings
    app.state.database = database
    app.state.clock = clock
    app.state.token_issuer = token_issuer
    app.state.rate_limiter = rate_limiter
    install_problem_handlers(app)
    for router in ROUTERS:
        app.include_router(router)
    if feature_installed(settings, SUBSCRIPTIONS_FEATURE):
        for router in SUBSCRIPTION_ROUTERS:
            app.include_router(router, dependencies=gated(SUBSCRIPTIONS_FEATURE))
    openapi.install(app)  # the failures (problem+json), declared once for all routes

    @app.get("/openapi.json", include_in_schema=False)
    async def openapi_document() -> JSONResponse:
        return JSONResponse(_document(app))

    return app


def _document(app: FastAPI) -> dict[str, Any]:
    document = app.openapi()
    document["servers"] = [{"url": PREFIX}]
    return document
