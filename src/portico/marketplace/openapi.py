"""The admin API's OpenAPI document: FastAPI's, plus the contract's failures.

FastAPI describes what a route returns when it succeeds, and a 422 that this API never sends
(validation failures are 400 problems, ``core/problems.py``). Every failure is an
``application/problem+json`` body, and which ones a route can answer follows from how it is
built, so they are declared here once rather than on each route (the mechanism, shared with
the management service, is ``core/openapi.py``):

- 401 and 403 on every route behind ``require(...)`` (the ID token, then the permissions),
  which also names the bearer ID token as its security scheme;
- 404 on every route with a path parameter (an id that is not a UUID names nothing either);
- 400 on every route: each refuses query parameters it does not read (``core/query.py``),
  and malformed values and bodies, naming them;
- 413 and 415 on every route with a body (too large, not JSON).

What only the route knows (409 for a transition, 429 for a rate limit...) it declares itself
with ``responses=problems(Error)`` (``core/openapi.py``) or ``responses={status:
{"description": ...}}``; each such failure gets the problem body here too. A route's own
description of a status wins over the generic one.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastapi import FastAPI

from portico.core import openapi
from portico.core.openapi import FailureRules, Route
from portico.marketplace.access import authenticate

SECURITY_SCHEME = "id_token"

BAD_REQUEST = (
    "The request is not valid (a query parameter the route does not read, a malformed value "
    "or body); `errors` names each parameter or body field at fault."
)
UNAUTHENTICATED = "No valid ID token: send `Authorization: Bearer <id_token>` (POST /auth/token)."
FORBIDDEN = "The account lacks a permission this endpoint needs; `permission` names it."
NOT_FOUND = "Nothing has this id (or the id is not a UUID)."
TOO_LARGE = "The body is larger than the server accepts (PORTICO_MAX_BODY_BYTES)."
NOT_JSON = "The body is not JSON: send `Content-Type: application/json`."


def _failures(route: Route) -> Iterator[tuple[int, str]]:
    yield 400, BAD_REQUEST
    if authenticate in route.calls:
        yield 401, UNAUTHENTICATED
        yield 403, FORBIDDEN
    if route.path_params:
        yield 404, NOT_FOUND
    if route.has_body:
        yield 413, TOO_LARGE
        yield 415, NOT_JSON


RULES = FailureRules(
    failures=_failures,
    descriptions={400: BAD_REQUEST, 401: UNAUTHENTICATED, 403: FORBIDDEN, 404: NOT_FOUND},
    security_scheme=(
        SECURITY_SCHEME,
        {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "JWT",
            "description": "An ID token from POST /auth/token.",
        },
    ),
)


def install(app: FastAPI) -> None:
    """Make ``app.openapi()`` (and so ``GET /openapi.json``) describe the failures."""
    openapi.install(app, RULES)
