"""``GET /api/portal/v1/.well-known/jwks.json``: the public keys of the admin API's ID
tokens, so that anyone holding a token can verify it offline (``kid`` names the key).

Public and unauthenticated; retired keys stay listed until the tokens they signed expire.
The control-plane app includes ``router`` with the prefix ``/api/portal/v1``.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, Field

from portico.core.db.session import SessionDep
from portico.core.sealing import secret_box
from portico.core.settings import Settings
from portico.marketplace.public import KeySetPublisher, key_set_publisher

router = APIRouter(tags=["portal"])

#: clients may cache the set this long; a token with an unknown ``kid`` is their cue to refetch
MAX_AGE = 300


class JsonWebKeySet(BaseModel):
    keys: list[dict[str, Any]] = Field(description="Public JWKs (EC P-256, ES256), by `kid`.")


def _publisher(request: Request) -> KeySetPublisher:
    state = request.app.state
    existing: KeySetPublisher | None = getattr(state, "jwks_publisher", None)
    if existing is None:
        settings: Settings = state.settings
        existing = state.jwks_publisher = key_set_publisher(
            secret_box(tuple(settings.signing_keys())), state.clock
        )
    return existing


@router.get("/.well-known/jwks.json", response_model=JsonWebKeySet)
async def get_jwks(request: Request, response: Response, session: SessionDep) -> JsonWebKeySet:
    """The JSON Web Key Set verifying the admin API's ID tokens."""
    document = await _publisher(request).jwks(session)
    response.headers["Cache-Control"] = f"public, max-age={MAX_AGE}"
    return JsonWebKeySet(keys=document["keys"])
