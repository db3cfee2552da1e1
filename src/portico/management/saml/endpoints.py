"""SAML 2.0 sign-in: public endpoints (no bearer token) per configuration, the list of
active configurations the sign-in page offers, and the exchange of a sign-in's one-time
code for the console's tokens.

Tokens never travel in a URL: the assertion consumer sends the browser back to the console
with a one-time code in the URL's fragment (never sent to a server, so never in an access
log), which the console exchanges at ``POST /api/auth/saml/token`` within a minute.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import RedirectResponse

from portico.core.audit import Actor
from portico.core.db.session import SessionDep
from portico.core.errors import PorticoError, Unauthorized, UnsupportedMediaType
from portico.core.openapi import problems
from portico.core.settings import Settings
from portico.management.auth.schemas import TokenResponse
from portico.management.saml import pages
from portico.management.saml import service as saml_service
from portico.management.saml.schemas import (
    Client,
    SamlCodeExchange,
    SignInOption,
    SignInOptions,
)
from portico.management.saml.service import (
    ConfigurationInactive,
    ConfigurationNotFound,
    NotProvisioned,
    SamlNotAvailable,
    SignInRefused,
)

router = APIRouter(tags=["SAML sign-in"])
SAML = "/api/orgs/{orgId}/identity-providers/{idpId}/saml"
#: where the console picks up the code (its sign-in page reads the fragment)
CONSOLE_LANDING = "/console/"
_NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


def _base_url(request: Request) -> str:
    settings: Settings = request.app.state.settings
    return settings.public_url or f"http://{settings.listen}"


def _ids(org_id: str, idp_id: str) -> tuple[uuid.UUID, uuid.UUID]:
    try:
        return uuid.UUID(org_id), uuid.UUID(idp_id)
    except ValueError:
        raise ConfigurationNotFound(idp_id) from None


@router.get("/api/auth/identity-providers", response_model=SignInOptions)
async def list_sign_in_options(request: Request, session: SessionDep) -> SignInOptions:
    """Every active identity-provider configuration of the installation (public: the sign-in
    page shows 'Sign in with <name>' for each, before anyone is signed in)."""
    configured = await saml_service.active_configurations(session=session)
    return SignInOptions(
        items=[
            SignInOption(
                id=c.idp.id,
                org_id=c.org.id,
                org_name=c.org.name,
                name=c.idp.name,
                login_url=f"/api/orgs/{c.org.id}/identity-providers/{c.idp.id}/saml/login",
            )
            for c in configured
        ]
    )


@router.get(
    f"{SAML}/metadata",
    response_class=Response,
    responses={
        200: {
            "description": "The service provider's metadata (SAML 2.0).",
            "content": {"application/samlmetadata+xml": {"schema": {"type": "string"}}},
        },
        **problems(SamlNotAvailable, detail="xmlsec1 is not installed on the server."),
    },
)
async def get_saml_metadata(
    orgId: str, idpId: str, request: Request, session: SessionDep
) -> Response:
    """Portico's service-provider metadata for this configuration: its entity id (this URL),
    its assertion consumer service (HTTP-POST), and that it wants signed assertions."""
    org_id, idp_id = _ids(orgId, idpId)
    xml = await saml_service.metadata(
        session=session, base_url=_base_url(request), org_id=org_id, idp_id=idp_id, raw_id=idpId
    )
    return Response(xml, media_type="application/samlmetadata+xml")


@router.get(
    f"{SAML}/login",
    status_code=303,
    response_class=RedirectResponse,
    responses={
        303: {"description": "To the identity provider, with a SAMLRequest and RelayState."},
        **problems(ConfigurationInactive, detail="The configuration has no mappings."),
        **problems(SamlNotAvailable, detail="xmlsec1 is not installed on the server."),
    },
)
async def start_saml_sign_in(
    orgId: str,
    idpId: str,
    request: Request,
    session: SessionDep,
    client: Annotated[
        Client,
        Query(description="Whose tokens the sign-in ends with: the console's or the admin API's."),
    ] = "console",
    challenge: Annotated[
        str | None,
        Query(
            min_length=43,
            max_length=43,
            pattern=r"^[A-Za-z0-9_-]{43}$",
            description="base64url SHA-256 of a secret the client keeps (PKCE S256); the "
            "code this sign-in ends with is exchanged only with that secret.",
        ),
    ] = None,
) -> RedirectResponse:
    """Start a sign-in: a redirect to the configuration's single sign-on URL carrying an
    AuthnRequest (HTTP-Redirect binding)."""
    org_id, idp_id = _ids(orgId, idpId)
    location = await saml_service.start(
        session=session,
        clock=request.app.state.clock,
        base_url=_base_url(request),
        org_id=org_id,
        idp_id=idp_id,
        raw_id=idpId,
        target=client,
        challenge=challenge,
    )
    return RedirectResponse(location, status_code=303, headers=_NO_STORE)


_ACS_FORM = {
    "requestBody": {
        "required": True,
        "content": {
            "application/x-www-form-urlencoded": {
                "schema": {
                    "type": "object",
                    "required": ["SAMLResponse"],
                    "properties": {
                        "SAMLResponse": {"type": "string"},
                        "RelayState": {"type": "string"},
                    },
                }
            }
        },
    }
}


@router.post(
    f"{SAML}/acs",
    status_code=303,
    response_class=RedirectResponse,
    openapi_extra=_ACS_FORM,
    responses={
        200: {
            "description": "A sign-in for the admin API: a page with its one-time code.",
            "content": {"text/html": {"schema": {"type": "string"}}},
        },
        303: {"description": "Signed in: to the console, the one-time code in the fragment."},
        **problems(
            SignInRefused,
            NotProvisioned,
            detail="The Response is refused (`detail` says why), or its email is not "
            "provisioned in the organisation. A browser gets a page saying the same.",
        ),
        **problems(ConfigurationInactive, detail="The configuration has no mappings."),
        **problems(SamlNotAvailable, detail="xmlsec1 is not installed on the server."),
    },
)
async def consume_saml_response(
    orgId: str, idpId: str, request: Request, session: SessionDep
) -> Any:
    """The assertion consumer (HTTP-POST binding): verify the identity provider's Response,
    sign its user in, and hand the browser a one-time code."""
    org_id, idp_id = _ids(orgId, idpId)
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != "application/x-www-form-urlencoded":
        raise UnsupportedMediaType(
            "the assertion consumer reads an HTML form (application/x-www-form-urlencoded: "
            "SAMLResponse, RelayState), as the HTTP-POST binding sends it"
        )
    try:
        form = await request.form(max_files=0, max_fields=4)
        saml_response, relay_state = form.get("SAMLResponse"), form.get("RelayState")
        signed_in = await saml_service.consume(
            session=session,
            clock=request.app.state.clock,
            base_url=_base_url(request),
            org_id=org_id,
            idp_id=idp_id,
            raw_id=idpId,
            saml_response=saml_response if isinstance(saml_response, str) else None,
            relay_state=relay_state if isinstance(relay_state, str) else None,
            actor=Actor.anonymous(request),
        )
    except PorticoError as error:
        if not _wants_html(request):
            raise
        if not error.commit:
            # answered with a page, not raised: drop what an error would have rolled back
            await session.rollback()
        return pages.refusal(error.title, error.detail, error.status, error.type_uri)
    if signed_in.target == "admin-api":
        return pages.admin_api_code(signed_in.code, signed_in.user.email)
    return RedirectResponse(
        f"{CONSOLE_LANDING}#samlCode={signed_in.code}", status_code=303, headers=_NO_STORE
    )


def _wants_html(request: Request) -> bool:
    accept = request.headers.get("accept", "")
    return "text/html" in accept


@router.post(
    "/api/auth/saml/token",
    response_model=TokenResponse,
    responses=problems(
        Unauthorized,
        detail="The code is unknown, expired, used, for another client, or its verifier "
        "does not match.",
    ),
)
async def exchange_saml_code(
    body: SamlCodeExchange, request: Request, response: Response, session: SessionDep
) -> TokenResponse:
    """The console's tokens (the same as a password sign-in's) for a SAML sign-in's
    one-time code."""
    state = request.app.state
    tokens = await saml_service.exchange(
        session=session,
        clock=state.clock,
        tokens=state.access_tokens,
        refresh=state.refresh_tokens,
        code=body.code,
        verifier=body.code_verifier,
    )
    response.headers.update(_NO_STORE)
    return tokens
