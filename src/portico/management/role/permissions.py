"""The permission catalogue of the management service and its predefined roles.

Permissions are checked per organisation: a caller's effective permissions in an org are the
union of the roles granted to their membership directly and the roles of the groups they
belong to. Predefined roles are created with every organisation and cannot be changed.
"""

from __future__ import annotations

from types import MappingProxyType

PERMISSIONS: MappingProxyType[str, str] = MappingProxyType(
    {
        "org.manage": "Rename the organisation",
        "api.read": "View APIs, revisions and deployments",
        "api.create": "Add APIs (services)",
        "api.update": "Edit APIs and their revisions",
        "api.delete": "Delete APIs and revisions",
        "api.deploy": "Deploy and undeploy revisions",
        "environment.read": "View environments",
        "environment.manage": "Create, edit and delete environments; data-plane tokens",
        "upstream.read": "View upstreams",
        "upstream.manage": "Create, edit and delete upstreams",
        "plugin.global": "Manage global plugins of an environment",
        "consumer.read": "View consumers",
        "consumer.manage": "Manage consumers and their credentials",
        "developer.read": "View developers and apps",
        "developer.manage": "Manage developers and apps",
        "product.read": "View products",
        "product.manage": "Manage products",
        "force-delete": "Delete developers together with their apps (cascade)",
        "user.read": "View users of the organisation",
        "user.manage": "Invite, edit and remove users",
        "role.read": "View roles and groups",
        "role.manage": "Create, edit and delete roles and groups",
        "idp.read": "View identity-provider configurations",
        "idp.manage": "Manage identity-provider configurations",
        "audit.read": "Read the audit log",
        "analytics.read": "Read analytics and widgets",
        "analytics.manage": "Manage analytics widgets",
        "secret.read": "View the names of stored secrets",
        "secret.manage": "Store and delete secrets",
    }
)

_READ_ONLY = frozenset(p for p in PERMISSIONS if p.endswith(".read"))

INTEGRATION_ROLE = "Integration"

#: name → (description, permissions). Created in every organisation; immutable (409).
PREDEFINED_ROLES: MappingProxyType[str, tuple[str, frozenset[str]]] = MappingProxyType(
    {
        "Administrator": ("Every permission in the organisation", frozenset(PERMISSIONS)),
        "API Publisher": (
            "Builds, deploys and operates APIs; cannot manage people or access control",
            _READ_ONLY
            | {
                "api.create",
                "api.update",
                "api.delete",
                "api.deploy",
                "upstream.manage",
                "consumer.manage",
                "developer.manage",
                "product.manage",
                "analytics.manage",
                "secret.manage",
            },
        ),
        "Viewer": ("Reads everything, changes nothing", _READ_ONLY),
        INTEGRATION_ROLE: (
            "For a service account of an integration (the marketplace connector, CI): reads "
            "APIs, revisions, products and analytics; manages developers, apps and the "
            "products the marketplace grants",
            frozenset(
                {
                    "api.read",
                    "product.read",
                    # a subscription to an API alone is granted through its implied product,
                    # which the marketplace's connector creates and deploys
                    "product.manage",
                    "analytics.read",
                    "developer.read",
                    "developer.manage",
                }
            ),
        ),
    }
)

ADMINISTRATOR_ROLE = "Administrator"


def unknown_permissions(requested: list[str]) -> list[str]:
    return [p for p in requested if p not in PERMISSIONS]
