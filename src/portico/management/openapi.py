"""The management service's OpenAPI document (``/api/openapi.json``): FastAPI's, plus the
failures every route really answers with, derived from how the route is built
(``core/openapi.py`` has the mechanism, shared with the marketplace admin API):

- 401 (and the bearer security scheme) on every route that authenticates its caller: its
  dependencies include ``access.authenticate`` (``CallerDep``, ``require``,
  ``member_of_org``) or another dependency marked ``@raises(Unauthorized)``;
- 403 on every route behind ``require(...)`` (marked ``@raises(PermissionDenied, ...)``);
- 404 on every route with a path parameter (an id that is not a UUID, or of another
  organisation, names nothing either), and where a dependency raises it;
- 400 on every route with a body or query parameters (malformed values, unknown query
  parameters of a list: ``ListSpec``), naming each parameter or body field at fault;
- 413 and 415 on every route with a body (too large, not JSON).

Lists parse their query string themselves (``ListSpec``), so FastAPI does not see their
page, size and sort: they are described here from the route's spec (its filters, whose
values each list reads in its own way, are not).

No route documents FastAPI's 422: validation failures are 400 problems. What only the route
knows (a 409 from its service, a 304, a 429) it declares with
``responses=problems(Conflict, detail="...")`` (``core/openapi.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fastapi import FastAPI
from fastapi.routing import APIRoute, iter_route_contexts

from portico.core import openapi
from portico.core.openapi import FailureRules, Route
from portico.core.pagination import ListQueryDependency

SECURITY_SCHEME = "bearer"

BAD_REQUEST = (
    "The request is not valid (a malformed body or value, a query parameter the route does "
    "not read); `errors` names each parameter or body field at fault."
)
UNAUTHENTICATED = (
    "No valid access token: send `Authorization: Bearer <token>` (POST /api/auth/login)."
)
FORBIDDEN = "The caller lacks a permission this endpoint needs; `permission` names it."
NOT_FOUND = (
    "Nothing has this id (an id that is not a UUID, or of an organisation the caller is not "
    "a member of, names nothing either)."
)
TOO_LARGE = "The body is larger than the server accepts (PORTICO_MAX_BODY_BYTES)."
NOT_JSON = "The body is not JSON: send `Content-Type: application/json`."


def _failures(route: Route) -> Iterator[tuple[int, str]]:
    if route.has_body or route.query_params:
        yield 400, BAD_REQUEST
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
            "description": "An access token from POST /api/auth/login; on /api/dataplane/v1, "
            "a data-plane token of the environment also does.",
        },
    ),
)


def install(app: FastAPI) -> None:
    """Make ``app.openapi()`` (and so ``GET /api/openapi.json``) describe the failures and
    the lists' parameters."""
    generate = app.openapi

    def with_lists() -> dict[str, Any]:
        return describe_lists(app, generate())  # cached by what core installs around it

    app.openapi = with_lists  # type: ignore[method-assign]
    openapi.install(app, RULES)


def describe_lists(app: FastAPI, document: dict[str, Any]) -> dict[str, Any]:
    """Page, size and sort of every list whose operation declares no query parameter."""
    for route in iter_route_contexts(app.routes):
        if not isinstance(route.original_route, APIRoute) or not route.include_in_schema:
            continue
        specs = [
            d.call.spec
            for d in openapi.dependants(route.dependant)
            if isinstance(d.call, ListQueryDependency)
        ]
        if not specs:
            continue
        for method in route.methods or ():
            operation = document["paths"][route.path_format][method.lower()]
            parameters: list[dict[str, Any]] = operation.setdefault("parameters", [])
            if not any(p.get("in") == "query" for p in parameters):
                parameters += specs[0].openapi_parameters(with_filters=False)
    return document
