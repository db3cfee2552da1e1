"""The marketplace admin API: a FastAPI application mounted at ``/api/admin/v1`` in the
control-plane process, sharing its store, clock, middleware and problem handlers.

Only installed modules are routed and described (``modules.py``). ``GET /openapi.json`` is
the OpenAPI 3.1 document of the live routes, unwrapped, behind the baseline permission; its
``info.version`` is the API document's version (the seed's 2.0.0), not the package's.
``GET /.well-known/openid-configuration`` describes the ID tokens for relying parties
(``auth/discovery.py``).
Every route refuses query parameters it does not read (``core/query.py``).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, FastAPI
from fastapi.responses import JSONResponse

from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.problems import install_problem_handlers
from portico.core.query import strict_query
from portico.core.ratelimit import RateLimiter
from portico.core.refresh import RefreshTokenStore
from portico.core.sealing import secret_box
from portico.core.settings import Settings
from portico.marketplace import openapi
from portico.marketplace.access import SiteCaller, require
from portico.marketplace.auth.discovery import discovery_document
from portico.marketplace.auth.keys import AUDIENCE, IdTokenService
from portico.marketplace.feature.gate import feature_gate
from portico.marketplace.modules import installed, permissions_of

PREFIX = "/api/admin/v1"
#: the version of the API document (seed, "Versioning"); the path carries the major, v1
API_VERSION = "2.0.0"


def create_marketplace_app(settings: Settings, *, database: Database, clock: Clock) -> FastAPI:
    modules = installed(settings.marketplace_modules)
    app = FastAPI(
        title="Portico marketplace admin API",
        version=API_VERSION,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,  # served below, behind authentication
        dependencies=[Depends(strict_query)],
    )
    app.state.settings = settings
    app.state.database = database
    app.state.clock = clock
    app.state.modules = modules
    app.state.permissions = permissions_of(modules)
    origin = (settings.public_url or f"http://{settings.listen}").rstrip("/")
    issuer = origin + PREFIX
    app.state.id_tokens = IdTokenService(
        secret_box(tuple(settings.signing_keys())),
        clock,
        issuer=issuer,
        ttl_seconds=settings.access_token_ttl_seconds,
    )
    app.state.refresh_tokens = RefreshTokenStore(
        clock, ttl_seconds=settings.refresh_token_ttl_seconds, audience=AUDIENCE
    )
    # sign-in, refresh and portal registration budgets (the control-plane app shares it);
    # no Redis connection is made before the first hit
    app.state.rate_limiter = RateLimiter(
        clock, redis_url=settings.redis_url, prefix="portico:admin-api"
    )
    install_problem_handlers(app)
    for module in modules:
        # a feature switched off answers /problems/feature-disabled on every route of its
        # module (feature/gate.py); the modules that are always on have no gate
        gate = feature_gate(module)
        for router in module.load_routers():
            app.include_router(router, dependencies=gate.dependencies, responses=gate.responses)
    openapi.install(app)  # the contract's failures (problem+json), declared once for all routes

    @app.get("/openapi.json", include_in_schema=False)
    async def openapi_document(
        _caller: Annotated[SiteCaller, Depends(require())],
    ) -> JSONResponse:
        return JSONResponse(_document(app))

    @app.get("/.well-known/openid-configuration", include_in_schema=False)
    async def openid_configuration() -> JSONResponse:
        # public, like the JWKS it points to
        document = discovery_document(issuer, origin)
        return JSONResponse(document, headers={"Cache-Control": "public, max-age=3600"})

    return app


def _document(app: FastAPI) -> dict[str, Any]:
    document = app.openapi()
    document["servers"] = [{"url": PREFIX}]
    return document
