"""Every router of the management service, in one list."""

from __future__ import annotations

from fastapi import FastAPI

from portico.management.audit_log.endpoints import router as audit_log_router
from portico.management.auth.endpoints import router as auth_router
from portico.management.environment.endpoints import router as environment_router
from portico.management.org.endpoints import router as org_router


def include_management_routes(app: FastAPI) -> None:
    for router in (auth_router, org_router, environment_router, audit_log_router):
        app.include_router(router)
