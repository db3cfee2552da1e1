"""Every router of the management service, in one list."""

from __future__ import annotations

from fastapi import FastAPI

from portico.management.analytics.endpoints import router as analytics_router
from portico.management.api.endpoints import router as api_router
from portico.management.api_import.endpoints import router as api_import_router
from portico.management.app.endpoints import router as app_router
from portico.management.audit_log.endpoints import router as audit_log_router
from portico.management.auth.endpoints import router as auth_router
from portico.management.consumer.endpoints import router as consumer_router
from portico.management.dataplane.endpoints import router as dataplane_router
from portico.management.deployment.endpoints import router as deployment_router
from portico.management.developer.endpoints import router as developer_router
from portico.management.environment.endpoints import router as environment_router
from portico.management.group.endpoints import router as group_router
from portico.management.identity_provider.endpoints import router as identity_provider_router
from portico.management.org.endpoints import router as org_router
from portico.management.plugin.endpoints import router as plugin_router
from portico.management.product.endpoints import env_router as env_product_router
from portico.management.product.endpoints import router as product_router
from portico.management.revision.endpoints import router as revision_router
from portico.management.role.endpoints import router as role_router
from portico.management.saml.endpoints import router as saml_router
from portico.management.secret.endpoints import router as secret_router
from portico.management.service_account.endpoints import router as service_account_router
from portico.management.telemetry.endpoints import router as telemetry_router
from portico.management.upstream.endpoints import router as upstream_router
from portico.management.user.endpoints import router as user_router
from portico.management.widget.endpoints import router as widget_router

ROUTERS = (
    auth_router,
    org_router,
    user_router,
    role_router,
    group_router,
    service_account_router,
    secret_router,
    identity_provider_router,
    saml_router,
    environment_router,
    upstream_router,
    api_import_router,  # before api_router: /apis/from-spec is not an {apiId}
    api_router,
    revision_router,
    deployment_router,
    plugin_router,
    consumer_router,
    developer_router,
    app_router,
    product_router,
    env_product_router,
    dataplane_router,
    telemetry_router,
    analytics_router,
    widget_router,
    audit_log_router,
)


def include_management_routes(app: FastAPI) -> None:
    for router in ROUTERS:
        app.include_router(router)
