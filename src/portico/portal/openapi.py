"""The portal API's OpenAPI document: FastAPI's, plus its failures (problem+json), derived
from each route as on the admin API (``core/openapi.py``):

- 400 on every route: each refuses query parameters it does not read (``core/query.py``),
  and malformed values and bodies, naming them;
- 401 where the route reads the caller's ID token (required, or optional: a token sent and
  not valid is refused), which also names the bearer ID token as its security scheme (an
  optional one as an alternative to none);
- 404 on every route with a path parameter (an id that is not a UUID, or a node the caller
  may not see, names nothing);
- 413 and 415 on every route with a body.

What only the route knows (429 for a rate limit, 503 while token issuance is disabled...) it
declares itself with ``responses=``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fastapi import FastAPI

from portico.core import openapi
from portico.core.openapi import FailureRules, Route
from portico.portal.access import authenticate, authenticate_if_sent

SECURITY_SCHEME = "id_token"
#: the ``security`` of an operation open to anonymous callers that reads a token if sent
OPTIONAL_SECURITY: list[dict[str, list[Any]]] = [{}, {SECURITY_SCHEME: []}]

BAD_REQUEST = (
    "The request is not valid (a query parameter the route does not read, a malformed value "
    "or body); `errors` names each parameter or body field at fault."
)
UNAUTHENTICATED = (
    "No valid ID token (missing where required, or sent and malformed, expired, revoked, or "
    "of an account that can no longer sign in): sign in with POST /auth/token and send "
    "`Authorization: Bearer <id_token>`."
)
NOT_FOUND = "Nothing the caller may see has this id (or the id is not a UUID)."
TOO_LARGE = "The body is larger than the server accepts (PORTICO_MAX_BODY_BYTES)."
NOT_JSON = "The body is not JSON: send `Content-Type: application/json`."


def _failures(route: Route) -> Iterator[tuple[int, str]]:
    yield 400, BAD_REQUEST
    if authenticate in route.calls or authenticate_if_sent in route.calls:
        yield 401, UNAUTHENTICATED
    if route.path_params:
        yield 404, NOT_FOUND
    if route.has_body:
        yield 413, TOO_LARGE
        yield 415, NOT_JSON


RULES = FailureRules(
    failures=_failures,
    descriptions={400: BAD_REQUEST, 401: UNAUTHENTICATED, 404: NOT_FOUND},
    security_scheme=(
        SECURITY_SCHEME,
        {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "JWT",
            "description": "An ID token from POST /auth/token (the admin API's tokens are "
            "the same).",
        },
    ),
)


def install(app: FastAPI) -> None:
    """Make ``app.openapi()`` (and so ``GET /openapi.json``) describe the failures."""
    openapi.install(app, RULES)
