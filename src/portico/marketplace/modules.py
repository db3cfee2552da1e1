"""The marketplace's modules: each declares its permissions and its routers.

``PORTICO_MARKETPLACE_MODULES`` (a JSON list of names) installs a subset; unset, all are
installed. A module that is not installed has no routes, no description in
``/openapi.json`` and no permissions. ``admin_api`` (authentication, the API description,
the baseline permission) is always installed.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from fastapi import APIRouter

from portico.marketplace.node.moderation import TRANSITIONS
from portico.marketplace.permissions import BASELINE, Permission

CORE = "admin_api"


@dataclass(frozen=True)
class Module:
    name: str
    label: str
    permissions: tuple[Permission, ...]
    #: "package.module:attribute" of each APIRouter, imported only when installed
    routers: tuple[str, ...]
    #: the modules it cannot work without (their permissions or their tables' endpoints)
    needs: tuple[str, ...] = ()
    #: why its feature can never be switched off; None when it can
    always_on: str | None = None

    def load_routers(self) -> list[APIRouter]:
        out = []
        for path in self.routers:
            module_name, _, attribute = path.partition(":")
            router = getattr(importlib.import_module(module_name), attribute)
            assert isinstance(router, APIRouter)
            out.append(router)
        return out


def _p(key: str, title: str, description: str, module: str, restrict: bool = False) -> Permission:
    return Permission(key, title, description, module, restrict)


MODULES: tuple[Module, ...] = (
    Module(
        CORE,
        "Admin API",
        (
            _p(BASELINE, "Access the marketplace admin API", "Call any admin API endpoint.", CORE),
            _p(
                "administer marketplace admin api",
                "Administer the marketplace admin API",
                "Configure the admin API and sever accounts' identity-provider links.",
                CORE,
                restrict=True,
            ),
        ),
        ("portico.marketplace.auth.endpoints:router",),
        always_on="sign-in and the API description live there",
    ),
    Module(
        "user",
        "Users and site roles",
        (
            _p(
                "administer users",
                "Administer users",
                "Approve, block and review accounts.",
                "user",
                restrict=True,
            ),
            _p(
                "administer permissions",
                "Administer permissions",
                "Read site roles and what they grant.",
                "user",
                restrict=True,
            ),
        ),
        ("portico.marketplace.role.endpoints:router", "portico.marketplace.user.endpoints:router"),
    ),
    Module(
        "audit",
        "Audit log",
        (
            _p(
                "view marketplace audit log",
                "View the marketplace audit log",
                "Read, export and summarise audit events.",
                "audit",
            ),
        ),
        ("portico.marketplace.event.endpoints:router",),
    ),
    Module(
        "notification",
        "Notifications",
        (
            _p(
                "administer marketplace notifications",
                "Administer marketplace notifications",
                "Read site-wide notifications.",
                "notification",
            ),
        ),
        ("portico.marketplace.notification.endpoints:router",),
    ),
    Module(
        "content",
        "Catalogue and content",
        (
            _p("access content", "View published content", "Read the catalogue.", "content"),
            *(
                _p(
                    f"{verb} {bundle} content",
                    f"{bundle_label}: {verb_label}",
                    f"{verb_label} {bundle_label.lower()}.",
                    "content",
                )
                for bundle, bundle_label in (
                    ("apis", "APIs"),
                    ("api_products", "API products"),
                    ("page", "Pages"),
                )
                for verb, verb_label in (
                    ("create", "Create new content"),
                    ("edit any", "Edit any content"),
                    ("delete any", "Delete any content"),
                )
            ),
            *(
                _p(
                    t.permission,
                    f"Editorial workflow: use {t.label} transition",
                    f"Move content to {t.target.value} ({t.id}).",
                    "content",
                )
                for t in TRANSITIONS
            ),
            _p(
                "syndicate apis to portals",
                "Syndicate APIs to portals",
                "Publish APIs and products to other organisations' portals.",
                "content",
                restrict=True,
            ),
        ),
        (
            "portico.marketplace.catalogue.endpoints:router",
            "portico.marketplace.content.endpoints:router",
            "portico.marketplace.publishing.endpoints:router",
        ),
    ),
    Module(
        "organisation",
        "Organisations, members and teams",
        (
            _p(
                "administer marketplace organisations",
                "Administer marketplace organisations",
                "List and read the portal's organisations.",
                "organisation",
                restrict=True,
            ),
            _p(
                "manage org members",
                "Manage organisation members",
                "Invite and remove members, and decide partner registrations.",
                "organisation",
            ),
            _p(
                "manage org teams",
                "Manage organisation teams",
                "Read organisations' teams and their members.",
                "organisation",
            ),
        ),
        (
            # first: /organisations/permissions is not an /organisations/{group}
            "portico.marketplace.organisation.role_endpoints:router",
            "portico.marketplace.organisation.endpoints:router",
        ),
    ),
    Module(
        "gateway_sync",
        "Gateway sync",
        (
            _p(
                "administer gateway sync",
                "Administer gateway sync",
                "Manage gateway connections, imports and their jobs.",
                "gateway_sync",
                restrict=True,
            ),
        ),
        (
            "portico.marketplace.source.endpoints:router",
            "portico.marketplace.connection.endpoints:router",
            "portico.marketplace.imports.endpoints:router",
            "portico.marketplace.job.endpoints:router",
        ),
        needs=("content",),
    ),
    Module(
        "features",
        "Portal features",
        (
            _p(
                "manage portal features",
                "Manage portal features",
                "Switch portal features on and off, platform-wide and per organisation.",
                "features",
                restrict=True,
            ),
        ),
        ("portico.marketplace.feature.endpoints:router",),
        always_on="it is what switches features back on",
    ),
    Module(
        "governance",
        "API governance",
        (
            _p(
                "view api governance",
                "View API governance",
                "Read the linting scores and findings of APIs' OpenAPI documents.",
                "governance",
            ),
        ),
        ("portico.marketplace.governance.endpoints:router",),
        needs=("content",),
    ),
    Module(
        "health",
        "API health",
        (
            _p(
                "view api health dashboard",
                "View the API health dashboard",
                "Read APIs' health checks and the dashboard's counts.",
                "health",
            ),
            _p(
                "refresh api health",
                "Refresh API health",
                "Queue an immediate health check of an API.",
                "health",
            ),
        ),
        ("portico.marketplace.health.endpoints:router",),
        needs=("content",),
    ),
    Module(
        "subscriptions",
        "API subscriptions",
        (
            _p(
                "administer apim subscriptions",
                "Administer API subscriptions",
                "Approve, reject and revoke developer apps' subscriptions to APIs and products.",
                "subscriptions",
            ),
            _p(
                "view api analytics",
                "View API analytics",
                "Read subscriptions' traffic as their gateway connection reports it.",
                "subscriptions",
            ),
        ),
        ("portico.marketplace.subscription.endpoints:router",),
        needs=("content",),
    ),
)
MODULE_NAMES = frozenset(m.name for m in MODULES)


def installed(names: Sequence[str] | None) -> list[Module]:
    """The modules to run: all when ``names`` is None, else the named ones plus the core."""
    if names is None:
        return list(MODULES)
    unknown = set(names) - MODULE_NAMES
    if unknown:
        raise ValueError(
            f"unknown marketplace modules {sorted(unknown)}; known: {sorted(MODULE_NAMES)}"
        )
    wanted = {CORE, *names}
    for module in MODULES:
        missing = [need for need in module.needs if module.name in wanted and need not in wanted]
        if missing:
            raise ValueError(
                f"marketplace module {module.name!r} needs {sorted(missing)}: install them too"
            )
    return [m for m in MODULES if m.name in wanted]


def permissions_of(modules: Iterable[Module]) -> dict[str, Permission]:
    return {p.key: p for m in modules for p in m.permissions}
