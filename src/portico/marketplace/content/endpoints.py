"""``/content``: nodes of each bundle and their editorial workflow (the baseline permission;
applying a transition also needs ``use editorial transition <id>``), and pages (Portico's
addition: ``POST /content/page``, ``PATCH`` and ``DELETE /content/page/{node}``, each with a
permission of its own).

Lists take ``page``, ``limit``, ``sort`` (title, created_at, updated_at; ``-`` for
descending) and ``filter[<field>]``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request, Response

from portico.core.db.session import SessionDep
from portico.core.envelope import Collection, Envelope, collection, created
from portico.core.openapi import problems
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.marketplace.access import SiteCaller, parse_uuid, require
from portico.marketplace.content import service as content_service
from portico.marketplace.content.schemas import (
    ContentNode,
    PageCreate,
    PageUpdate,
    TransitionRead,
)
from portico.marketplace.content.service import (
    MODERATED_BUNDLES,
    ContentNotFound,
    NotModerated,
    TransitionNotAllowed,
    UnderModeration,
)
from portico.marketplace.node.models import Bundle, CatalogueNode, ModerationState
from portico.marketplace.node.moderation import TRANSITIONS
from portico.marketplace.node.schemas import NodeSummary

router = APIRouter(prefix="/content", tags=["content and moderation"])

_SORTABLE = frozenset({"title", "created_at", "updated_at"})


def _spec(default_sort: str, filterable: frozenset[str]) -> ListSpec:
    return ListSpec(
        sortable=_SORTABLE,
        default_sort=default_sort,
        filterable=filterable,
        filter_style="bracket",
        size_param="limit",
        default_size=50,
        max_size=500,
    )


LIST = _spec("title", frozenset({"moderation_state", "published", "source", "organisation"}))
# awaiting a decision: the longest waiting first
MODERATED = _spec("updated_at", frozenset({"bundle", "source", "organisation"}))
FILTER_PARAMETERS: dict[str, dict[str, Any]] = {
    "moderation_state": {
        "description": "Nodes in this editorial state (pages have none: they never match).",
        "schema": {"type": "string", "enum": [s.value for s in ModerationState]},
    },
    "published": {
        "description": "Nodes the portal shows (true) or not (false).",
        "schema": {"type": "string", "enum": ["true", "false"]},
    },
    "source": {
        "description": "custom (written in the portal), imported, or a gateway connection's "
        "id (imported from it).",
        "schema": {
            "anyOf": [
                {"type": "string", "enum": ["custom", "imported"]},
                {"type": "string", "format": "uuid"},
            ]
        },
    },
    "organisation": {
        "description": "Nodes owned by this portal organisation (its id).",
        "schema": {"type": "string", "format": "uuid"},
    },
    "bundle": {
        "description": "Nodes of this moderated bundle.",
        "schema": {"type": "string", "enum": list(MODERATED_BUNDLES)},
    },
}

BundleParam = Annotated[
    str,
    Path(
        description="apis, api_products or page.",
        json_schema_extra={"enum": [b.value for b in Bundle]},
    ),
]
TransitionParam = Annotated[
    str,
    Path(
        description="An editorial transition's id.",
        json_schema_extra={"enum": [t.id for t in TRANSITIONS]},
    ),
]
Reader = Annotated[SiteCaller, Depends(require())]
PageCreator = Annotated[SiteCaller, Depends(require("create page content"))]
PageEditor = Annotated[SiteCaller, Depends(require("edit any page content"))]
PageDeleter = Annotated[SiteCaller, Depends(require("delete any page content"))]

MODERATED_REFUSED = problems(
    UnderModeration,
    detail="The node is under editorial moderation (an API or a product): the problem names "
    "the transitions that would do it.",
)
TRANSITION_REFUSED = problems(
    NotModerated,
    TransitionNotAllowed,
    detail="The node has no workflow (a page), or the transition does not leave its current "
    "state; the problem names both.",
)


def _read(caller: SiteCaller, node: CatalogueNode) -> Envelope[ContentNode]:
    return Envelope[ContentNode](
        data=ContentNode.of_node(node, content_service.available_to(caller, node))
    )


@router.get(
    "/moderated",
    response_model=Collection[NodeSummary],
    openapi_extra={"parameters": MODERATED.openapi_parameters(FILTER_PARAMETERS)},
)
async def list_moderated(
    request: Request,
    _caller: Reader,
    session: SessionDep,
    query: Annotated[ListQuery, Depends(list_query(MODERATED))],
) -> Collection[NodeSummary]:
    """APIs and products awaiting an editorial decision (``in_review``), the longest waiting
    first. Filters: ``filter[bundle]``, ``filter[source]``, ``filter[organisation]``."""
    page = await content_service.list_moderated(session=session, query=query)
    return collection(request, page, [NodeSummary.of(n) for n in page.items])


@router.post(
    "/page",
    response_model=Envelope[ContentNode],
    status_code=201,
    responses={201: {"headers": {"Location": {"schema": {"type": "string"}}}}},
)
async def create_page(
    body: PageCreate, request: Request, caller: PageCreator, session: SessionDep
) -> Response:
    """A documentation page (Portico's addition), unpublished until published."""
    page = await content_service.create_page(
        session=session, caller=caller, data=body, now=request.app.state.clock.now()
    )
    location = f"{request.scope.get('root_path', '')}/content/page/{page.id}"
    return created(ContentNode.of_node(page, ()), location)


@router.patch("/page/{node}", response_model=Envelope[ContentNode])
async def update_page(
    node: str, body: PageUpdate, request: Request, caller: PageEditor, session: SessionDep
) -> Envelope[ContentNode]:
    """Change a page's title or body (Portico's addition)."""
    page = await content_service.update_page(
        session=session,
        caller=caller,
        node_id=parse_uuid(node, ContentNotFound),
        data=body,
        now=request.app.state.clock.now(),
    )
    return _read(caller, page)


@router.delete("/page/{node}", status_code=204, response_class=Response)
async def delete_page(node: str, caller: PageDeleter, session: SessionDep) -> Response:
    """Delete a page (Portico's addition)."""
    await content_service.delete_page(
        session=session, caller=caller, node_id=parse_uuid(node, ContentNotFound)
    )
    return Response(status_code=204)


@router.get(
    "/{bundle}",
    response_model=Collection[NodeSummary],
    openapi_extra={"parameters": LIST.openapi_parameters(FILTER_PARAMETERS)},
)
async def list_bundle(
    bundle: BundleParam,
    request: Request,
    _caller: Reader,
    session: SessionDep,
    query: Annotated[ListQuery, Depends(list_query(LIST))],
) -> Collection[NodeSummary]:
    """Nodes of one bundle, published or not, by title. Filters: ``filter[moderation_state]``,
    ``filter[published]``, ``filter[source]``, ``filter[organisation]``."""
    page = await content_service.list_bundle(
        session=session, bundle=content_service.bundle_of(bundle), query=query
    )
    return collection(request, page, [NodeSummary.of(n) for n in page.items])


@router.get("/{bundle}/{node}", response_model=Envelope[ContentNode])
async def get_content(
    bundle: BundleParam, node: str, caller: Reader, session: SessionDep
) -> Envelope[ContentNode]:
    """One node, with the transitions the caller may apply to it now."""
    found = await content_service.get(
        session=session,
        bundle=content_service.bundle_of(bundle),
        node_id=parse_uuid(node, ContentNotFound),
    )
    return _read(caller, found)


@router.post(
    "/{bundle}/{node}/publish", response_model=Envelope[ContentNode], responses=MODERATED_REFUSED
)
async def publish_content(
    bundle: BundleParam, node: str, request: Request, caller: Reader, session: SessionDep
) -> Envelope[ContentNode]:
    """Publish a node that is not under editorial moderation (a page; needs ``edit any page
    content``). Publishing a published page changes nothing."""
    return await _set_published(bundle, node, request, caller, session, published=True)


@router.post(
    "/{bundle}/{node}/unpublish",
    response_model=Envelope[ContentNode],
    responses=MODERATED_REFUSED,
)
async def unpublish_content(
    bundle: BundleParam, node: str, request: Request, caller: Reader, session: SessionDep
) -> Envelope[ContentNode]:
    """Take a node that is not under editorial moderation off the portal (a page; needs
    ``edit any page content``). Unpublishing an unpublished page changes nothing."""
    return await _set_published(bundle, node, request, caller, session, published=False)


async def _set_published(
    bundle: str,
    node: str,
    request: Request,
    caller: SiteCaller,
    session: SessionDep,
    *,
    published: bool,
) -> Envelope[ContentNode]:
    changed = await content_service.set_published(
        session=session,
        caller=caller,
        bundle=content_service.bundle_of(bundle),
        node_id=parse_uuid(node, ContentNotFound),
        published=published,
        now=request.app.state.clock.now(),
    )
    return _read(caller, changed)


@router.get("/{bundle}/{node}/transitions", response_model=Envelope[list[TransitionRead]])
async def list_transitions(
    bundle: BundleParam, node: str, caller: Reader, session: SessionDep
) -> Envelope[list[TransitionRead]]:
    """The transitions the caller may apply to the node now: those leaving its state whose
    permission the caller holds (an empty list for a page)."""
    found = await content_service.get(
        session=session,
        bundle=content_service.bundle_of(bundle),
        node_id=parse_uuid(node, ContentNotFound),
    )
    transitions = content_service.available_to(caller, found)
    return Envelope[list[TransitionRead]](data=[TransitionRead.of(t) for t in transitions])


@router.post(
    "/{bundle}/{node}/transitions/{transition}",
    response_model=Envelope[ContentNode],
    responses=TRANSITION_REFUSED,
)
async def apply_transition(
    bundle: BundleParam,
    node: str,
    transition: TransitionParam,
    request: Request,
    caller: Reader,
    session: SessionDep,
) -> Envelope[ContentNode]:
    """Apply an editorial transition: 403 without ``use editorial transition <id>``, 409 from
    a state it does not leave. The node's ``published`` follows its new state."""
    moved = await content_service.apply(
        session=session,
        caller=caller,
        bundle=content_service.bundle_of(bundle),
        node_id=parse_uuid(node, ContentNotFound),
        transition_id=transition,
        now=request.app.state.clock.now(),
    )
    return _read(caller, moved)
