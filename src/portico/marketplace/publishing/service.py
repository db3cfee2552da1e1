"""Publishing many nodes at once: an editorial transition, a visibility, a syndication.

Every bulk answer reports each node given, in the order given, and lists in ``meta.failed``
the ones refused (no such node 404, not an API or a product 409, a missing permission 403, a
state the transition does not leave 409). An item is checked whole before anything of it is
written, so a refused item changes nothing, and it never undoes the others: they are all in
the request's one transaction. What a body itself gets wrong (an organisation or a team that
does not exist) refuses the whole request (400), before any item.

Syndication is the super-administrator's alone (the ``administrator`` site role), whoever
else holds ``syndicate apis to portals``. A product syndicated to a portal publishes its
APIs there too: that publication is derived (``ProductApi`` × ``Syndication``), never stored,
so removing an API's own syndication leaves it, and the report says which products keep it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.envelope import BulkFailure, BulkMeta, BulkResult
from portico.core.errors import (
    Conflict,
    Forbidden,
    NotFound,
    PermissionDenied,
    PorticoError,
    ValidationFailed,
)
from portico.core.pagination import ListQuery, Page
from portico.marketplace.access import SiteCaller
from portico.marketplace.content import service as content_service
from portico.marketplace.node.models import MODERATED, Bundle, CatalogueNode, Visibility
from portico.marketplace.node.moderation import BY_ID
from portico.marketplace.permissions import ADMINISTRATOR
from portico.marketplace.publishing.repository import (
    Audience,
    AudienceRepository,
    BulkNodeRepository,
    PortalRepository,
    SyndicationRepository,
    TeamRepository,
)
from portico.marketplace.publishing.schemas import (
    AudienceRead,
    Outcome,
    Publication,
    SyndicationChange,
    SyndicationReport,
    TransitionBulk,
    TransitionReport,
    VisibilityChange,
    VisibilityReport,
)

MODULE = content_service.MODULE
ENTITY = content_service.ENTITY
#: what one item may be refused with; anything else fails the request
ITEM_REFUSALS = (NotFound, Forbidden, Conflict)
#: the end of the 400 details about ids that name nothing (the document cannot say it)
NO_ORGANISATION = "names no portal organisation"
NO_TEAM = "names no team of the listed organisations"
R = TypeVar("R", TransitionReport, VisibilityReport, SyndicationReport)


class NodeNotFound(NotFound):
    default_detail = "no node has this id"


class NotAnApiOrProduct(Conflict):
    default_detail = "only APIs and API products are moderated and syndicated"


class SuperAdministratorsOnly(Forbidden):
    default_detail = (
        "only a super-administrator (the administrator site role) may change "
        "cross-organisation syndication, whatever other role holds 'syndicate apis to portals'"
    )


@dataclass
class _Failures:
    items: list[BulkFailure]

    def add(self, node_id: uuid.UUID, refused: PorticoError) -> None:
        self.items.append(
            BulkFailure(id=str(node_id), status=refused.status, detail=refused.detail)
        )


def _found(nodes: dict[uuid.UUID, CatalogueNode], node_id: uuid.UUID) -> CatalogueNode:
    node = nodes.get(node_id)
    if node is None:
        raise NodeNotFound(f"no node has the id {node_id}")
    return node


def _moderated(node: CatalogueNode) -> None:
    if node.bundle not in MODERATED:
        raise NotAnApiOrProduct(
            f"{node.id} is a {node.bundle.value}: only APIs and API products are moderated "
            "and syndicated"
        )


# ------------------------------------------------------------------------------ portals


async def list_portals(*, session: AsyncSession, query: ListQuery) -> Page[Any]:
    repository = PortalRepository(session)
    return await repository.page(repository.matching(query.filters.get("name")), query)


# -------------------------------------------------------------------------- transitions


async def apply_transitions(
    *, session: AsyncSession, caller: SiteCaller, data: TransitionBulk, now: datetime
) -> BulkResult[TransitionReport]:
    transition = BY_ID[data.transition]
    nodes = await BulkNodeRepository(session).locked(data.nodes)
    reports: list[TransitionReport] = []
    failures = _Failures([])
    for node_id in data.nodes:
        node = nodes.get(node_id)
        try:
            node = _found(nodes, node_id)
            _moderated(node)
            await content_service.apply_transition(
                session=session, caller=caller, node=node, transition=transition, now=now
            )
            outcome: Outcome = "applied"
        except ITEM_REFUSALS as refused:
            failures.add(node_id, refused)
            outcome = "failed"
        reports.append(
            TransitionReport(
                id=str(node_id),
                outcome=outcome,
                bundle=node.bundle if node else None,
                moderation_state=node.moderation_state if node else None,
                published=node.published if node else None,
            )
        )
    return _bulk(reports, failures)


# --------------------------------------------------------------------------- visibility


async def set_visibility(
    *, session: AsyncSession, caller: SiteCaller, data: VisibilityChange, now: datetime
) -> BulkResult[VisibilityReport]:
    """Public and internal nodes have no audience; an organisation-visible node's audience is
    replaced whole: each listed organisation, through the listed teams of it if any, else
    whole (a team restriction not asked for again is cleared)."""
    visibility = Visibility(data.visibility)
    target: set[Audience] = set()
    if visibility is Visibility.ORGANISATION:
        target = await _audience(session, data.organisation_ids, data.team_ids)
    nodes = await BulkNodeRepository(session).locked(data.nodes)
    audiences = AudienceRepository(session)
    current = await audiences.of_nodes(list(nodes))
    reports: list[VisibilityReport] = []
    failures = _Failures([])
    for node_id in data.nodes:
        node = nodes.get(node_id)
        try:
            node = _found(nodes, node_id)
            needed = f"edit any {node.bundle.value} content"
            if needed not in caller.permissions:
                raise PermissionDenied(needed)
        except ITEM_REFUSALS as refused:
            failures.add(node_id, refused)
            reports.append(_visibility_report(node_id, "failed", node, current.get(node_id)))
            continue
        before = current[node.id]
        if node.visibility is visibility and before == target:
            reports.append(_visibility_report(node_id, "unchanged", node, before))
            continue
        snapshot_before = _visibility_snapshot(node, before)
        node.visibility = visibility
        node.updated_at = now
        await audiences.replace(node.id, target)
        await caller.audit(
            session,
            "content.visibility",
            entity_type=ENTITY,
            entity_id=node.id,
            module=MODULE,
            bundle=node.bundle.value,
            summary=f"{node.bundle.value} '{node.title}' made {visibility.value}",
            before=snapshot_before,
            after=_visibility_snapshot(node, target),
        )
        reports.append(_visibility_report(node_id, "applied", node, target))
    return _bulk(reports, failures)


async def _audience(
    session: AsyncSession, organisation_ids: Sequence[uuid.UUID], team_ids: Sequence[uuid.UUID]
) -> set[Audience]:
    await _check_organisations(session, organisation_ids)
    teams = await TeamRepository(session).many(team_ids)
    listed = set(organisation_ids)
    errors = [
        {"pointer": f"/teams/{index}", "detail": f"'{team_id}' {NO_TEAM}"}
        for index, team_id in enumerate(team_ids)
        if team_id not in teams or teams[team_id].organisation_id not in listed
    ]
    if errors:
        raise ValidationFailed(errors)
    restricted: dict[uuid.UUID, set[uuid.UUID]] = {}
    for team_id in team_ids:
        restricted.setdefault(teams[team_id].organisation_id, set()).add(team_id)
    audience: set[Audience] = set()
    for organisation_id in organisation_ids:
        through = restricted.get(organisation_id)
        if through:
            audience |= {Audience(organisation_id, team_id) for team_id in through}
        else:
            audience.add(Audience(organisation_id, None))
    return audience


def _audience_read(audience: set[Audience]) -> list[AudienceRead]:
    return [
        AudienceRead(organisation=a.organisation_id, team=a.team_id)
        for a in sorted(audience, key=Audience.sort_key)
    ]


def _visibility_report(
    node_id: uuid.UUID,
    outcome: Outcome,
    node: CatalogueNode | None,
    audience: set[Audience] | None,
) -> VisibilityReport:
    return VisibilityReport(
        id=str(node_id),
        outcome=outcome,
        bundle=node.bundle if node else None,
        visibility=node.visibility if node else None,
        audience=_audience_read(audience or set()) if node else None,
    )


def _visibility_snapshot(node: CatalogueNode, audience: set[Audience]) -> dict[str, Any]:
    return {
        "visibility": node.visibility.value,
        "audience": [a.model_dump(mode="json") for a in _audience_read(audience)],
    }


# -------------------------------------------------------------------------- syndication


def is_super_administrator(caller: SiteCaller) -> bool:
    return any(role.id == ADMINISTRATOR for role in caller.roles)


async def syndicate(
    *, session: AsyncSession, caller: SiteCaller, data: SyndicationChange, now: datetime
) -> BulkResult[SyndicationReport]:
    if not is_super_administrator(caller):
        raise SuperAdministratorsOnly()
    await _check_organisations(session, data.organisations)
    requested = set(data.organisations)
    nodes = await BulkNodeRepository(session).locked(data.nodes)
    syndications = SyndicationRepository(session)
    explicit = await syndications.explicit(list(nodes))
    failures = _Failures([])
    # per node given: (node, explicit portals before, after), or the failed node (if any)
    done: list[tuple[uuid.UUID, CatalogueNode | None, set[uuid.UUID], set[uuid.UUID]]] = []
    for node_id in data.nodes:
        node = nodes.get(node_id)
        try:
            node = _found(nodes, node_id)
            _moderated(node)
        except ITEM_REFUSALS as refused:
            failures.add(node_id, refused)
            done.append((node_id, None, set(), set()))
            continue
        before = explicit[node.id]
        after = _apply(data.operation, before, requested)
        if after != before:
            await syndications.withdraw(node.id, before - after)
            await syndications.publish(node.id, after - before)
            node.updated_at = now
        done.append((node_id, node, before, after))
    # what products imply, once every item's own syndication is as asked
    apis = [n.id for _, n, _, _ in done if n is not None and n.bundle is Bundle.APIS]
    implied = await syndications.implied(apis)
    reports: list[SyndicationReport] = []
    for node_id, node, before, after in done:
        if node is None:
            reports.append(
                SyndicationReport(
                    id=str(node_id),
                    outcome="failed",
                    bundle=nodes[node_id].bundle if node_id in nodes else None,
                    portals=None,
                    kept=[],
                )
            )
            continue
        portals = _publications(after, implied.get(node.id, {}))
        asked_absent = _asked_absent(data.operation, requested)
        kept = [p for p in portals if not p.explicit and asked_absent(p.organisation)]
        report = SyndicationReport(
            id=str(node_id),
            outcome="applied" if after != before else "unchanged",
            bundle=node.bundle,
            portals=portals,
            kept=kept,
        )
        reports.append(report)
        if after != before:
            await caller.audit(
                session,
                "content.syndicate",
                entity_type=ENTITY,
                entity_id=node.id,
                module=MODULE,
                bundle=node.bundle.value,
                summary=f"{data.operation} syndication of {node.bundle.value} '{node.title}'",
                before={"portals": sorted(str(o) for o in before)},
                after={
                    "portals": sorted(str(o) for o in after),
                    "kept": [p.model_dump(mode="json") for p in kept],
                },
            )
    return _bulk(reports, failures)


def _apply(operation: str, before: set[uuid.UUID], requested: set[uuid.UUID]) -> set[uuid.UUID]:
    if operation == "add":
        return before | requested
    if operation == "remove":
        return before - requested
    return set(requested)


def _asked_absent(operation: str, requested: set[uuid.UUID]) -> Callable[[uuid.UUID], bool]:
    """Whether the request asked a node not to be published to an organisation."""
    if operation == "remove":
        return lambda organisation: organisation in requested
    if operation == "set":
        return lambda organisation: organisation not in requested
    return lambda _organisation: False


def _publications(
    explicit: set[uuid.UUID], implied: dict[uuid.UUID, set[uuid.UUID]]
) -> list[Publication]:
    return [
        Publication(
            organisation=organisation,
            explicit=organisation in explicit,
            implied_by=sorted(implied.get(organisation, ()), key=str),
        )
        for organisation in sorted(explicit | set(implied), key=str)
    ]


# ---------------------------------------------------------------------------- helpers


async def _check_organisations(session: AsyncSession, ids: Sequence[uuid.UUID]) -> None:
    existing = await PortalRepository(session).existing(ids)
    errors = [
        {"pointer": f"/organisations/{index}", "detail": f"'{org}' {NO_ORGANISATION}"}
        for index, org in enumerate(ids)
        if org not in existing
    ]
    if errors:
        raise ValidationFailed(errors)


def _bulk(reports: list[R], failures: _Failures) -> BulkResult[R]:
    return BulkResult[R](data=reports, meta=BulkMeta(count=len(reports), failed=failures.items))
