"""Content and moderation: listing nodes, the editorial workflow, publishing pages.

APIs and products move only through their workflow (``node/moderation.py``): each transition
needs its own permission, and ``published`` follows the state (a node is on the portal
exactly while it is ``published``). Pages have no workflow: they are published and
unpublished, which needs ``edit any page content`` (publishing is an edit of the page). What
changes is audited as ``content.<verb>`` with the node's bundle, in the request's transaction.

:func:`apply_transition` checks everything before it writes anything, so that the bulk
endpoint (``/publishing/transitions``) can report a refused item and go on with the others.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.errors import Conflict, NotFound, PermissionDenied
from portico.core.filter_values import FilterValues
from portico.core.pagination import ListQuery, Page
from portico.marketplace.access import SiteCaller
from portico.marketplace.content.repository import ContentFilters, ContentRepository
from portico.marketplace.content.schemas import PageCreate, PageUpdate
from portico.marketplace.node import filters as node_filters
from portico.marketplace.node import hooks
from portico.marketplace.node.models import (
    MODERATED,
    Bundle,
    CatalogueNode,
    ModerationState,
    SourceType,
)
from portico.marketplace.node.moderation import (
    AWAITING_DECISION,
    BY_ID,
    TRANSITIONS,
    Transition,
    available,
)
from portico.marketplace.node.repository import NodeRepository
from portico.marketplace.node.schemas import NodeSummary

MODULE = "content"
ENTITY = "node"
#: what the moderated list's ``filter[bundle]`` takes (pages are never awaiting a decision)
MODERATED_BUNDLES = tuple(b.value for b in Bundle if b in MODERATED)


class BundleNotFound(NotFound):
    default_detail = "no such content bundle"


class ContentNotFound(NotFound):
    default_detail = "no node of this bundle has this id"


class TransitionNotFound(NotFound):
    default_detail = "no such editorial transition"


class UnderModeration(Conflict):
    default_detail = (
        "the node is under editorial moderation: apply its transitions instead "
        "(POST /content/{bundle}/{node}/transitions/{transition})"
    )


class NotModerated(Conflict):
    default_detail = "pages are not under editorial moderation: publish or unpublish them"


class TransitionNotAllowed(Conflict):
    default_detail = "the transition is not allowed from the node's current state"


def bundle_of(raw: str) -> Bundle:
    try:
        return Bundle(raw)
    except ValueError:
        known = ", ".join(b.value for b in Bundle)
        raise BundleNotFound(f"no content bundle '{raw[:64]}'; the bundles are {known}") from None


def transition_of(raw: str) -> Transition:
    found = BY_ID.get(raw)
    if found is None:
        known = ", ".join(t.id for t in TRANSITIONS)
        raise TransitionNotFound(
            f"no editorial transition '{raw[:64]}'; the transitions are {known}"
        )
    return found


def available_to(caller: SiteCaller, node: CatalogueNode) -> list[Transition]:
    """What the caller may apply to the node now: none for a node without a workflow."""
    if node.moderation_state is None:
        return []
    return available(node.moderation_state, caller.permissions)


# ------------------------------------------------------------------------------ reading


async def list_bundle(*, session: AsyncSession, bundle: Bundle, query: ListQuery) -> Page[Any]:
    filters = _filters(query.filters, bundles=(bundle,))
    repository = ContentRepository(session)
    return await repository.page(repository.matching(filters), query)


async def list_moderated(*, session: AsyncSession, query: ListQuery) -> Page[Any]:
    """Nodes of every moderated bundle awaiting an editorial decision (``in_review``)."""
    filters = _filters(query.filters, bundles=None, states=AWAITING_DECISION)
    repository = ContentRepository(session)
    return await repository.page(repository.matching(filters), query)


async def get(*, session: AsyncSession, bundle: Bundle, node_id: uuid.UUID) -> CatalogueNode:
    node = await NodeRepository(session).in_bundle(bundle, node_id)
    if node is None:
        raise ContentNotFound(f"no {bundle.value} node has the id {node_id}")
    return node


async def _locked(session: AsyncSession, bundle: Bundle, node_id: uuid.UUID) -> CatalogueNode:
    node = await NodeRepository(session).in_bundle_for_update(bundle, node_id)
    if node is None:
        raise ContentNotFound(f"no {bundle.value} node has the id {node_id}")
    return node


# ------------------------------------------------------------------------ the workflow


async def apply(
    *,
    session: AsyncSession,
    caller: SiteCaller,
    bundle: Bundle,
    node_id: uuid.UUID,
    transition_id: str,
    now: datetime,
) -> CatalogueNode:
    node = await _locked(session, bundle, node_id)
    await apply_transition(
        session=session, caller=caller, node=node, transition=transition_of(transition_id), now=now
    )
    return node


async def apply_transition(
    *,
    session: AsyncSession,
    caller: SiteCaller,
    node: CatalogueNode,
    transition: Transition,
    now: datetime,
) -> None:
    """Move ``node`` (locked by the caller) along ``transition``: 403 without its permission,
    409 for a node without a workflow or in a state the transition does not leave. Nothing
    is written unless every check passed."""
    if transition.permission not in caller.permissions:
        raise PermissionDenied(transition.permission)
    state = node.moderation_state
    if state is None:
        raise NotModerated(
            f"{node.bundle.value} {node.id} is not under editorial moderation and has no "
            f"transitions: publish or unpublish it (POST /content/{node.bundle.value}/"
            f"{node.id}/publish)"
        )
    if state not in transition.sources:
        sources = ", ".join(sorted(s.value for s in transition.sources))
        raise TransitionNotAllowed(
            f"{node.bundle.value} {node.id} is {state.value}: the transition "
            f"'{transition.id}' applies only from {sources}"
        )
    before = snapshot(node)
    node.moderation_state = transition.target
    node.published = transition.target is ModerationState.PUBLISHED
    node.updated_at = now
    await session.flush()
    if node.published:  # governance lints what is published (node/hooks.py)
        await hooks.after_published(session, node, caller.user.id)
    await caller.audit(
        session,
        "content.transition",
        entity_type=ENTITY,
        entity_id=node.id,
        module=MODULE,
        bundle=node.bundle.value,
        summary=f"{transition.id}: {node.bundle.value} '{node.title}' "
        f"{state.value} → {transition.target.value}",
        before=before,
        after=snapshot(node),
    )


async def set_published(
    *,
    session: AsyncSession,
    caller: SiteCaller,
    bundle: Bundle,
    node_id: uuid.UUID,
    published: bool,
    now: datetime,
) -> CatalogueNode:
    """Publish or unpublish a node that has no workflow (a page); idempotent. A moderated
    node is refused with the transitions that would do it."""
    node = await _locked(session, bundle, node_id)
    if bundle in MODERATED:
        raise UnderModeration(_use_transitions(node, published=published))
    needed = f"edit any {bundle.value} content"
    if needed not in caller.permissions:
        raise PermissionDenied(needed)
    if node.published == published:
        return node
    before = snapshot(node)
    node.published = published
    node.updated_at = now
    await session.flush()
    verb = "publish" if published else "unpublish"
    await caller.audit(
        session,
        f"content.{verb}",
        entity_type=ENTITY,
        entity_id=node.id,
        module=MODULE,
        bundle=bundle.value,
        summary=f"{verb}ed {bundle.value} '{node.title}'",
        before=before,
        after=snapshot(node),
    )
    return node


def _use_transitions(node: CatalogueNode, *, published: bool) -> str:
    """Which transitions publish (or take off the portal) instead, and from which state."""
    if published:
        useful = [t for t in TRANSITIONS if t.target is ModerationState.PUBLISHED]
    else:
        useful = [
            t
            for t in TRANSITIONS
            if ModerationState.PUBLISHED in t.sources and t.target is not ModerationState.PUBLISHED
        ]
    ways = " or ".join(
        f"'{t.id}' (from {', '.join(sorted(s.value for s in t.sources))})" for t in useful
    )
    state = node.moderation_state.value if node.moderation_state else "without a state"
    verb = "publish" if published else "unpublish"
    return (
        f"{node.bundle.value} {node.id} is under editorial moderation (it is {state}): "
        f"{verb} it with the transition {ways}, "
        f"POST /content/{node.bundle.value}/{node.id}/transitions/{{transition}}"
    )


# ------------------------------------------------------------------------------- pages


async def create_page(
    *, session: AsyncSession, caller: SiteCaller, data: PageCreate, now: datetime
) -> CatalogueNode:
    """A page starts unpublished."""
    page = CatalogueNode(
        id=uuid.uuid4(),
        bundle=Bundle.PAGE,
        title=data.title,
        description=data.body,
        moderation_state=None,
        published=False,
        source_type=SourceType.CUSTOM,
        created_by=caller.user.id,
        created_at=now,
        updated_at=now,
    )
    await NodeRepository(session).add(page)
    await caller.audit(
        session,
        "content.create",
        entity_type=ENTITY,
        entity_id=page.id,
        module=MODULE,
        bundle=Bundle.PAGE.value,
        summary=f"created page '{page.title}'",
        after=snapshot(page),
    )
    return page


async def update_page(
    *,
    session: AsyncSession,
    caller: SiteCaller,
    node_id: uuid.UUID,
    data: PageUpdate,
    now: datetime,
) -> CatalogueNode:
    page = await _locked(session, Bundle.PAGE, node_id)
    before = snapshot(page)
    if data.title is not None:
        page.title = data.title
    if data.body is not None:
        page.description = data.body
    after = snapshot(page)
    if after == before:
        return page
    page.updated_at = now
    await session.flush()
    await caller.audit(
        session,
        "content.update",
        entity_type=ENTITY,
        entity_id=page.id,
        module=MODULE,
        bundle=Bundle.PAGE.value,
        summary=f"updated page '{page.title}'",
        before=before,
        after=snapshot(page),
    )
    return page


async def delete_page(*, session: AsyncSession, caller: SiteCaller, node_id: uuid.UUID) -> None:
    page = await _locked(session, Bundle.PAGE, node_id)
    before = snapshot(page)
    await hooks.before_delete(session, page, "the page was deleted")
    await NodeRepository(session).delete(page)
    await caller.audit(
        session,
        "content.delete",
        entity_type=ENTITY,
        entity_id=node_id,
        module=MODULE,
        bundle=Bundle.PAGE.value,
        summary=f"deleted page '{before['title']}'",
        before=before,
    )


def snapshot(node: CatalogueNode) -> dict[str, Any]:
    """A node as the audit log keeps it: its summary, and a page's body."""
    out = NodeSummary.of(node).model_dump(mode="json")
    if node.bundle is Bundle.PAGE:
        out["body"] = node.description
    return out


# ----------------------------------------------------------------------------- filters


def _filters(
    raw: Mapping[str, str],
    *,
    bundles: tuple[Bundle, ...] | None,
    states: frozenset[ModerationState] | None = None,
) -> ContentFilters:
    """The list filters of a query, each value checked (a 400 names the parameter).
    ``bundles`` None: those ``filter[bundle]`` names, else every moderated one."""
    values = FilterValues(raw)
    if bundles is None:
        chosen = values.one_of("bundle", MODERATED_BUNDLES)
        bundles = (Bundle(chosen),) if chosen is not None else tuple(MODERATED)
    state = values.choice("moderation_state", ModerationState)
    if state is not None:
        # a state outside those the list shows shows nothing
        states = frozenset({state}) & states if states is not None else frozenset({state})
    source_type, connection_id = node_filters.source(values)
    found = ContentFilters(
        bundles=bundles,
        moderation_states=states,
        published=values.boolean("published"),
        source_type=source_type,
        connection_id=connection_id,
        organisation_id=values.identifier("organisation"),
    )
    values.check()
    return found
