"""A portal organisation (a group of developers, with the web domains of its portal), its
teams, and the people in them (memberships, team memberships). A fresh installation has one
organisation: the portal owner's (migration 0015)."""

from __future__ import annotations

import enum
import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Enum, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from portico.core.clock import utcnow
from portico.core.db.base import Base, IdMixin, TimestampMixin
from portico.core.db.types import UTCDateTime, json_type

#: the name of the organisation every installation starts with
PORTAL_OWNER = "Portal owner"


def _values(enum_class: type[enum.Enum]) -> list[str]:
    return [str(member.value) for member in enum_class]


class Organisation(IdMixin, TimestampMixin, Base):
    __tablename__ = "portal_organisations"

    name: Mapped[str] = mapped_column(String(200), unique=True)
    #: the host names its portal answers on (syndication targets), e.g. ["dev.example.com"]
    domains: Mapped[list[Any]] = mapped_column(json_type(), default=list)


class Team(IdMixin, TimestampMixin, Base):
    __tablename__ = "portal_teams"
    __table_args__ = (UniqueConstraint("organisation_id", "name"),)

    organisation_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("portal_organisations.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(200))


class MembershipStatus(enum.StrEnum):
    INVITED = "invited"  # invited by email, not accepted yet: grants nothing
    PENDING = "pending"  # a partner registration awaiting an organisation manager's approval
    ACTIVE = "active"
    REJECTED = "rejected"  # kept, with the reason, so that the decision stays on record


class OrganisationMembership(IdMixin, TimestampMixin, Base):
    """A person's relationship with an organisation (the seed's ``{relationship}``): an
    account of ``users`` (``core.account``) and a status. Only an active membership makes
    someone a member (``service.member_organisations``)."""

    __tablename__ = "portal_memberships"
    __table_args__ = (
        UniqueConstraint("organisation_id", "user_id"),
        # the approvals queue and the member lists read one organisation's rows by status
        Index("ix_portal_memberships_organisation_status", "organisation_id", "status"),
    )

    organisation_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("portal_organisations.id", ondelete="CASCADE")
    )
    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    status: Mapped[MembershipStatus] = mapped_column(
        Enum(MembershipStatus, native_enum=False, length=16, values_callable=_values)
    )
    #: why a registration was rejected, as the manager wrote it (also sent in the email)
    status_reason: Mapped[str | None] = mapped_column(Text, default=None)
    status_changed_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    invited_by: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )
    #: SHA-256 of the token the invitation email carries, until the invitation is accepted
    #: (the token itself is only in the email)
    invitation_token_hash: Mapped[str | None] = mapped_column(String(64), unique=True, default=None)


class TeamMembership(Base):
    """A member in one of its organisation's teams. Keyed by the membership, so that
    removing someone from the organisation removes them from its teams too."""

    __tablename__ = "portal_team_members"

    team_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("portal_teams.id", ondelete="CASCADE"), primary_key=True
    )
    membership_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("portal_memberships.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    added_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class OrganisationRole(IdMixin, TimestampMixin, Base):
    """A custom role of one organisation: a label and the organisation permissions it
    grants (``organisation/permissions.py``). The predefined roles (``org-admin``,
    ``org-member``) are not rows: they are the same everywhere and cannot change."""

    __tablename__ = "portal_organisation_roles"
    __table_args__ = (UniqueConstraint("organisation_id", "label"),)

    organisation_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("portal_organisations.id", ondelete="CASCADE")
    )
    label: Mapped[str] = mapped_column(String(100))
    permissions: Mapped[list[Any]] = mapped_column(json_type(), default=list)


class MemberRole(Base):
    """A role held by a member directly: a predefined role's id or a custom role's id (as
    text). Deleting a custom role deletes its assignments (the service does)."""

    __tablename__ = "portal_member_roles"

    membership_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("portal_memberships.id", ondelete="CASCADE"), primary_key=True
    )
    role: Mapped[str] = mapped_column(String(64), primary_key=True, index=True)


class TeamRole(Base):
    """A role every member of the team holds through it (team-inherited roles)."""

    __tablename__ = "portal_team_roles"

    team_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("portal_teams.id", ondelete="CASCADE"), primary_key=True
    )
    role: Mapped[str] = mapped_column(String(64), primary_key=True, index=True)
