"""Every table of every part, registered on one ``MetaData`` for Alembic and the tests."""

from portico.core import account, audit, jobs, outbox, refresh
from portico.core.db.base import Base
from portico.core.saml import store as saml_store
from portico.management.api import models as api_models
from portico.management.app import models as app_models
from portico.management.consumer import models as consumer_models
from portico.management.dataplane import models as dataplane_models
from portico.management.developer import models as developer_models
from portico.management.environment import models as environment_models
from portico.management.group import models as group_models
from portico.management.identity_provider import models as idp_models
from portico.management.org import models as org_models
from portico.management.plugin import models as plugin_models
from portico.management.product import models as product_models
from portico.management.revision import models as revision_models
from portico.management.role import models as role_models
from portico.management.secret import models as secret_models
from portico.management.service_account import models as service_account_models
from portico.management.telemetry import models as telemetry_models
from portico.management.upstream import models as upstream_models
from portico.management.user import models as user_models
from portico.management.widget import models as widget_models
from portico.marketplace.auth import models as marketplace_auth_models
from portico.marketplace.connection import models as gateway_connection_models
from portico.marketplace.developer_app import models as developer_app_models
from portico.marketplace.feature import models as portal_feature_models
from portico.marketplace.governance import models as governance_models
from portico.marketplace.health import models as health_models
from portico.marketplace.node import counts as node_counts
from portico.marketplace.node import models as catalogue_node_models
from portico.marketplace.node import search as node_search
from portico.marketplace.notification import models as notification_models
from portico.marketplace.organisation import models as portal_organisation_models
from portico.marketplace.subscription import models as subscription_models
from portico.marketplace.user import models as marketplace_user_models

metadata = Base.metadata


def include_name(name: str | None, type_: str, parent_names: object) -> bool:
    """Alembic's filter of reflected names: a table partition is storage of its parent table,
    not a table of its own, and the catalogue's title search is store-specific storage the
    models cannot declare (node/search/), so comparing models with the database skips
    them, as are the counts of nodes per facet the triggers keep (node/counts.py)."""
    if type_ == "table" and name in telemetry_models.SKETCH_PARTITIONS:
        return False
    if type_ == "table" and name == node_counts.FACET_COUNTS.name:
        return False
    return not node_search.storage_names(name, type_)


__all__ = [
    "account",
    "api_models",
    "app_models",
    "audit",
    "catalogue_node_models",
    "consumer_models",
    "dataplane_models",
    "developer_app_models",
    "developer_models",
    "environment_models",
    "gateway_connection_models",
    "governance_models",
    "group_models",
    "health_models",
    "idp_models",
    "include_name",
    "jobs",
    "marketplace_auth_models",
    "marketplace_user_models",
    "metadata",
    "notification_models",
    "org_models",
    "outbox",
    "plugin_models",
    "portal_feature_models",
    "portal_organisation_models",
    "product_models",
    "refresh",
    "revision_models",
    "role_models",
    "saml_store",
    "secret_models",
    "service_account_models",
    "subscription_models",
    "telemetry_models",
    "upstream_models",
    "user_models",
    "widget_models",
]
