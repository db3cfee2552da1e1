"""Site-wide permissions and site roles of the marketplace (Drupal-style strings, exactly as
the seed writes them).

Modules declare their permissions (``modules.py``); a permission whose module is not
installed does not exist. ``restrict_access`` marks the dangerous ones (the admin UI warns
before granting them). Site roles are defined here with their weights (the admin UI's order)
and grants; the administrator role holds every permission, present and future. Every
signed-in account is ``authenticated``; the bootstrap administrator (``is_platform_admin``)
is ``administrator``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

BASELINE = "access marketplace admin api"


@dataclass(frozen=True)
class Permission:
    key: str
    title: str
    description: str
    module: str
    restrict_access: bool = False


@dataclass(frozen=True)
class SiteRole:
    id: str
    label: str
    weight: int
    grants: frozenset[str]
    is_admin: bool = False

    def permissions(self, available: Iterable[str]) -> frozenset[str]:
        """What the role holds among the permissions that exist (installed modules)."""
        known = frozenset(available)
        return known if self.is_admin else self.grants & known


ANONYMOUS = "anonymous"
AUTHENTICATED = "authenticated"
ADMINISTRATOR = "administrator"

_CONTENT = {
    "access content",
    "create apis content",
    "edit any apis content",
    "delete any apis content",
    "create api_products content",
    "edit any api_products content",
    "delete any api_products content",
    "create page content",
    "edit any page content",
    "delete any page content",
}
#: the editorial transitions (node/moderation.py): editors draft and submit, managers decide
_DRAFTING = {
    "use editorial transition create_new_draft",
    "use editorial transition submit_for_review",
}
_DECIDING = _DRAFTING | {
    "use editorial transition publish",
    "use editorial transition archive",
    "use editorial transition restore_to_draft",
}

SITE_ROLES: tuple[SiteRole, ...] = (
    SiteRole(ANONYMOUS, "Anonymous user", 0, frozenset()),
    SiteRole(AUTHENTICATED, "Authenticated user", 1, frozenset({"access content"})),
    SiteRole(
        "content_editor",
        "Content editor",
        2,
        frozenset(_CONTENT | _DRAFTING | {"view api governance", "view api health dashboard"}),
    ),
    SiteRole(
        "api_manager",
        "API manager",
        3,
        frozenset(
            _CONTENT
            | _DECIDING
            | {
                BASELINE,
                "administer gateway sync",
                "administer apim subscriptions",
                "view api analytics",
                "syndicate apis to portals",
                "view api governance",
                "view api health dashboard",
                "refresh api health",
            }
        ),
    ),
    SiteRole(
        "marketplace_admin",
        "Marketplace administrator",
        4,
        frozenset(
            _CONTENT
            | _DECIDING
            | {
                BASELINE,
                "administer users",
                "administer marketplace organisations",
                "manage org members",
                "manage org teams",
                "manage portal features",
                "view marketplace audit log",
                "administer marketplace notifications",
                "administer apim subscriptions",
                "view api analytics",
                "view api governance",
                "view api health dashboard",
                "refresh api health",
            }
        ),
    ),
    SiteRole(ADMINISTRATOR, "Administrator", 5, frozenset(), is_admin=True),
)
ROLES_BY_ID = {role.id: role for role in SITE_ROLES}


def effective_roles(assigned: Iterable[str], *, is_platform_admin: bool) -> list[SiteRole]:
    """The account's roles in weight order: ``authenticated`` always, the administrator role
    for the bootstrap administrator, then what was assigned (unknown ids are ignored)."""
    ids = {AUTHENTICATED, *assigned}
    if is_platform_admin:
        ids.add(ADMINISTRATOR)
    return sorted((ROLES_BY_ID[i] for i in ids if i in ROLES_BY_ID), key=lambda r: r.weight)


def permission_union(roles: Iterable[SiteRole], available: Iterable[str]) -> frozenset[str]:
    known = frozenset(available)
    out: frozenset[str] = frozenset()
    for role in roles:
        out |= role.permissions(known)
    return out
