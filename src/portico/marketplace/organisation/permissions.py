"""Organisation (group) permissions and the predefined organisation roles.

What a member may do inside its organisation on the portal, as opposed to the site-wide
permissions of ``marketplace/permissions.py``. Custom roles grant any of these
(``GET /organisations/permissions`` lists them by category); the two predefined roles are
the same in every organisation and cannot be edited or deleted (409).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OrganisationPermission:
    key: str
    title: str
    category: str


@dataclass(frozen=True)
class PredefinedRole:
    id: str
    label: str
    permissions: tuple[str, ...]


def _p(key: str, title: str, category: str) -> OrganisationPermission:
    return OrganisationPermission(key, title, category)


ORGANISATION_PERMISSIONS: tuple[OrganisationPermission, ...] = (
    _p("view organisation", "View the organisation's profile", "Organisation"),
    _p("edit organisation", "Edit the organisation's profile and domains", "Organisation"),
    _p("view members", "View the organisation's members", "Members"),
    _p("invite members", "Invite people to the organisation", "Members"),
    _p("remove members", "Remove members from the organisation", "Members"),
    _p("approve registrations", "Approve or reject partner registrations", "Members"),
    _p("assign roles", "Give members the organisation's roles", "Members"),
    _p("view teams", "View the organisation's teams", "Teams"),
    _p("manage teams", "Create teams and change who is in them", "Teams"),
    _p("view apps", "View the organisation's apps", "Apps and subscriptions"),
    _p(
        "manage apps", "Create, change and delete the organisation's apps", "Apps and subscriptions"
    ),
    _p("request subscriptions", "Subscribe apps to APIs and products", "Apps and subscriptions"),
    _p("view analytics", "View the usage of the organisation's apps", "Apps and subscriptions"),
)
PERMISSION_KEYS: tuple[str, ...] = tuple(p.key for p in ORGANISATION_PERMISSIONS)

ORG_ADMIN = "org-admin"
ORG_MEMBER = "org-member"
PREDEFINED_ROLES: tuple[PredefinedRole, ...] = (
    PredefinedRole(ORG_ADMIN, "Organisation administrator", PERMISSION_KEYS),
    PredefinedRole(
        ORG_MEMBER,
        "Organisation member",
        ("view organisation", "view members", "view teams", "view apps", "request subscriptions"),
    ),
)
PREDEFINED_BY_ID = {role.id: role for role in PREDEFINED_ROLES}


def in_catalogue_order(keys: set[str] | frozenset[str]) -> list[str]:
    return [key for key in PERMISSION_KEYS if key in keys]
