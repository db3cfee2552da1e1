"""``/organisations``: portal organisations (permission ``administer marketplace
organisations``), their members and invitations (``manage org members``), teams (``manage
org teams``) and partner approvals (``manage org members``).

A ``{relationship}`` is a membership of one person in the organisation of the path: one of
another organisation is not found (404), as is a ``{team}`` of another organisation.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response

from portico.core.db.session import SessionDep
from portico.core.envelope import (
    BulkFailure,
    BulkMeta,
    BulkResult,
    Collection,
    Envelope,
    collection,
)
from portico.core.openapi import problems
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.core.settings import Settings
from portico.marketplace.access import SiteCaller, parse_uuid, require
from portico.marketplace.organisation import approvals as approval_service
from portico.marketplace.organisation import service as organisation_service
from portico.marketplace.organisation.approvals import AccountKept, NotAwaitingApproval
from portico.marketplace.organisation.models import MembershipStatus
from portico.marketplace.organisation.schemas import (
    ApprovalReject,
    MemberInvite,
    MemberRead,
    OrganisationRead,
    RejectedMember,
    TeamRead,
)
from portico.marketplace.organisation.service import (
    Member,
    MembershipNotFound,
    OrganisationNotFound,
    TeamNotFound,
)
from portico.marketplace.user.schemas import NOT_BLANK

router = APIRouter(prefix="/organisations", tags=["organisations"])

OrganisationAdmin = Annotated[SiteCaller, Depends(require("administer marketplace organisations"))]
MemberManager = Annotated[SiteCaller, Depends(require("manage org members"))]
TeamManager = Annotated[SiteCaller, Depends(require("manage org teams"))]


def _spec(sortable: set[str], default_sort: str, filterable: set[str]) -> ListSpec:
    return ListSpec(
        sortable=frozenset(sortable),
        default_sort=default_sort,
        filterable=frozenset(filterable),
        filter_style="bracket",
        size_param="limit",
        default_size=50,
        max_size=500,
    )


ORGANISATIONS = _spec({"name", "created_at"}, "name", {"name"})
TEAMS = _spec({"name", "created_at"}, "name", {"name"})
_MEMBER_SORT = {"email", "status", "created_at", "status_changed_at"}
MEMBERS = _spec(_MEMBER_SORT, "email", {"status", "email", "team"})
TEAM_MEMBERS = _spec(_MEMBER_SORT, "email", {"status", "email"})
# awaiting a decision: the longest waiting first
APPROVALS = _spec({"email", "created_at"}, "created_at", {"email"})

_TEXT = {"type": "string", "pattern": NOT_BLANK}
FILTERS: dict[str, dict[str, Any]] = {
    "name": {"description": "Names containing this (case-insensitive).", "schema": _TEXT},
    "email": {
        "description": "Accounts whose email contains this (case-insensitive).",
        "schema": _TEXT,
    },
    "status": {
        "description": "Relationships in this status.",
        "schema": {"type": "string", "enum": [s.value for s in MembershipStatus]},
    },
    "team": {
        "description": "Members of this team (GET /organisations/{group}/teams).",
        "schema": {"type": "string", "format": "uuid"},
    },
}
_NOT_PENDING = problems(
    NotAwaitingApproval, detail="The relationship is not a registration awaiting approval."
)


def _parameters(spec: ListSpec) -> dict[str, Any]:
    return {"parameters": spec.openapi_parameters(FILTERS)}


def _base_url(request: Request) -> str:
    settings: Settings = request.app.state.settings
    return settings.public_url or f"http://{settings.listen}"


def _members(request: Request, page: Any) -> Collection[MemberRead]:
    return collection(request, page, [MemberRead.model_validate(m) for m in page.items])


def _member(member: Member) -> Envelope[MemberRead]:
    return Envelope[MemberRead](data=MemberRead.model_validate(member))


@router.get(
    "", response_model=Collection[OrganisationRead], openapi_extra=_parameters(ORGANISATIONS)
)
async def list_organisations(
    request: Request,
    _caller: OrganisationAdmin,
    session: SessionDep,
    query: Annotated[ListQuery, Depends(list_query(ORGANISATIONS))],
) -> Collection[OrganisationRead]:
    """By name, with their counts of active members, pending approvals and teams."""
    page = await organisation_service.list_organisations(session=session, query=query)
    return collection(request, page, page.items)


@router.get("/{group}", response_model=Envelope[OrganisationRead])
async def get_organisation(
    group: str, _caller: OrganisationAdmin, session: SessionDep
) -> Envelope[OrganisationRead]:
    found = await organisation_service.get_organisation(
        session=session, organisation_id=parse_uuid(group, OrganisationNotFound)
    )
    return Envelope[OrganisationRead](data=found)


@router.get(
    "/{group}/members", response_model=Collection[MemberRead], openapi_extra=_parameters(MEMBERS)
)
async def list_organisation_members(
    group: str,
    request: Request,
    _caller: MemberManager,
    session: SessionDep,
    query: Annotated[ListQuery, Depends(list_query(MEMBERS))],
) -> Collection[MemberRead]:
    """Every relationship of the organisation (invited, pending, active, rejected: narrow
    with ``filter[status]``), with its account and teams."""
    page = await organisation_service.list_members(
        session=session, organisation_id=parse_uuid(group, OrganisationNotFound), query=query
    )
    return _members(request, page)


@router.post("/{group}/members/invite", response_model=BulkResult[MemberRead])
async def invite_organisation_members(
    group: str, body: MemberInvite, request: Request, caller: MemberManager, session: SessionDep
) -> BulkResult[MemberRead]:
    """Invite each address by email (the link accepts the invitation). ``data`` lists the
    invited relationships; ``meta.failed`` the addresses that were not invited (409: an
    active member, a registration awaiting approval, a blocked account)."""
    invited, failed = await organisation_service.invite(
        session=session,
        caller=caller,
        organisation_id=parse_uuid(group, OrganisationNotFound),
        data=body,
        clock=request.app.state.clock,
        base_url=_base_url(request),
    )
    return BulkResult[MemberRead](
        data=[MemberRead.model_validate(m) for m in invited],
        meta=BulkMeta(
            count=len(invited),
            failed=[BulkFailure(id=f.email, status=f.status, detail=f.detail) for f in failed],
        ),
    )


@router.delete("/{group}/members/{relationship}", status_code=204, response_class=Response)
async def remove_organisation_member(
    group: str, relationship: str, caller: MemberManager, session: SessionDep
) -> Response:
    """End the relationship (and its team memberships); the account stays."""
    await organisation_service.remove_member(
        session=session,
        caller=caller,
        organisation_id=parse_uuid(group, OrganisationNotFound),
        membership_id=parse_uuid(relationship, MembershipNotFound),
    )
    return Response(status_code=204)


@router.get("/{group}/teams", response_model=Collection[TeamRead], openapi_extra=_parameters(TEAMS))
async def list_organisation_teams(
    group: str,
    request: Request,
    _caller: TeamManager,
    session: SessionDep,
    query: Annotated[ListQuery, Depends(list_query(TEAMS))],
) -> Collection[TeamRead]:
    page = await organisation_service.list_teams(
        session=session, organisation_id=parse_uuid(group, OrganisationNotFound), query=query
    )
    return collection(request, page, page.items)


@router.get(
    "/{group}/teams/{team}/members",
    response_model=Collection[MemberRead],
    openapi_extra=_parameters(TEAM_MEMBERS),
)
async def list_team_members(
    group: str,
    team: str,
    request: Request,
    _caller: TeamManager,
    session: SessionDep,
    query: Annotated[ListQuery, Depends(list_query(TEAM_MEMBERS))],
) -> Collection[MemberRead]:
    page = await organisation_service.list_team_members(
        session=session,
        organisation_id=parse_uuid(group, OrganisationNotFound),
        team_id=parse_uuid(team, TeamNotFound),
        query=query,
    )
    return _members(request, page)


@router.get(
    "/{group}/approvals",
    response_model=Collection[MemberRead],
    openapi_extra=_parameters(APPROVALS),
)
async def list_organisation_approvals(
    group: str,
    request: Request,
    _caller: MemberManager,
    session: SessionDep,
    query: Annotated[ListQuery, Depends(list_query(APPROVALS))],
) -> Collection[MemberRead]:
    """Partner registrations awaiting approval, the longest waiting first."""
    page = await organisation_service.list_members(
        session=session,
        organisation_id=parse_uuid(group, OrganisationNotFound),
        query=query,
        status=MembershipStatus.PENDING,
    )
    return _members(request, page)


@router.post(
    "/{group}/approvals/{relationship}/approve",
    response_model=Envelope[MemberRead],
    responses=_NOT_PENDING,
)
async def approve_organisation_registration(
    group: str, relationship: str, request: Request, caller: MemberManager, session: SessionDep
) -> Envelope[MemberRead]:
    """pending → active; queues the approval email. A partner account still awaiting
    approval on the portal is activated with it."""
    member = await approval_service.approve(
        session=session,
        caller=caller,
        organisation_id=parse_uuid(group, OrganisationNotFound),
        membership_id=parse_uuid(relationship, MembershipNotFound),
        clock=request.app.state.clock,
        base_url=_base_url(request),
    )
    return _member(member)


@router.post(
    "/{group}/approvals/{relationship}/reject",
    response_model=Envelope[RejectedMember],
    responses=problems(
        NotAwaitingApproval,
        AccountKept,
        detail="The relationship is not a registration awaiting approval, or "
        "`delete_account` asked to delete an account that must stay (active on the portal, "
        "or in another organisation); nothing changed.",
    ),
)
async def reject_organisation_registration(
    group: str,
    relationship: str,
    body: ApprovalReject,
    request: Request,
    caller: MemberManager,
    session: SessionDep,
) -> Envelope[RejectedMember]:
    """pending → rejected; the reason is required, kept and sent in the rejection email.
    ``delete_account: true`` also deletes the applicant's account (opt-in)."""
    rejected = await approval_service.reject(
        session=session,
        caller=caller,
        organisation_id=parse_uuid(group, OrganisationNotFound),
        membership_id=parse_uuid(relationship, MembershipNotFound),
        reason=body.reason,
        delete_account=body.delete_account,
        clock=request.app.state.clock,
    )
    return Envelope[RejectedMember](data=rejected)
