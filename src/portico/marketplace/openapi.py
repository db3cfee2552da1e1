"""The admin API's OpenAPI document: FastAPI's, plus the contract's failures.

FastAPI describes what a route returns when it succeeds, and a 422 that this API never sends
(validation failures are 400 problems, ``core/problems.py``). Every failure is an
``application/problem+json`` body, and which ones a route can answer follows from how it is
built, so they are declared here once rather than on each route:

- 401 and 403 on every route behind ``require(...)`` (the ID token, then the permissions),
  which also names the bearer ID token as its security scheme;
- 404 on every route with a path parameter (an id that is not a UUID names nothing either);
- 400 on every route: each refuses query parameters it does not read (``core/query.py``),
  and malformed values and bodies, naming them;
- 413 and 415 on every route with a body (too large, not JSON).

What only the route knows (409 for a transition, 429 for a rate limit...) it declares itself
with ``responses={status: {"description": ...}}``; each such failure gets the problem body
here too. A route's own description of a status wins over the generic one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute, RouteContext, iter_route_contexts

from portico.core.errors import PROBLEM_CONTENT_TYPE
from portico.marketplace.access import authenticate

PROBLEM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "title": "Problem",
    "description": "RFC 9457 problem details.",
    "required": ["type", "title", "status", "detail"],
    "properties": {
        "type": {"type": "string", "description": "Stable: /problems/<kind>."},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "detail": {"type": "string", "description": "What went wrong, for people."},
        "errors": {
            "type": "array",
            "description": "Each invalid query parameter or body field (JSON pointer).",
            "items": {
                "type": "object",
                "required": ["detail"],
                "properties": {
                    "parameter": {"type": "string"},
                    "pointer": {"type": "string"},
                    "detail": {"type": "string"},
                },
            },
        },
        "permission": {"type": "string", "description": "The missing permission (403)."},
    },
}
SECURITY_SCHEME = "id_token"
_PROBLEM_REF = {"$ref": "#/components/schemas/Problem"}
# what FastAPI adds for its 422, which this API never sends
_FASTAPI_VALIDATION = ("HTTPValidationError", "ValidationError")

BAD_REQUEST = (
    "The request is not valid (a query parameter the route does not read, a malformed value "
    "or body); `errors` names each parameter or body field at fault."
)
UNAUTHENTICATED = "No valid ID token: send `Authorization: Bearer <id_token>` (POST /auth/token)."
FORBIDDEN = "The account lacks a permission this endpoint needs; `permission` names it."
NOT_FOUND = "Nothing has this id (or the id is not a UUID)."
TOO_LARGE = "The body is larger than the server accepts (PORTICO_MAX_BODY_BYTES)."
NOT_JSON = "The body is not JSON: send `Content-Type: application/json`."


def install(app: FastAPI) -> None:
    """Make ``app.openapi()`` (and so ``GET /openapi.json``) describe the failures."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = describe_failures(app, generate())
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def describe_failures(app: FastAPI, document: dict[str, Any]) -> dict[str, Any]:
    # routers are included lazily: their routes are seen through their contexts
    for route in iter_route_contexts(app.routes):
        if not isinstance(route.original_route, APIRoute) or not route.include_in_schema:
            continue
        calls = [d.call for d in _dependants(route.dependant)]
        for method in route.methods or ():
            operation = document["paths"][route.path_format][method.lower()]
            if authenticate in calls:
                operation["security"] = [{SECURITY_SCHEME: []}]
            responses: dict[str, Any] = operation["responses"]
            responses.pop("422", None)
            for status, description in _failures(route, calls):
                responses.setdefault(status, {"description": description})
            for status, response in responses.items():
                if status[0] in "45" and "content" not in response:
                    response["content"] = {PROBLEM_CONTENT_TYPE: {"schema": _PROBLEM_REF}}
    components = document.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    for name in _FASTAPI_VALIDATION:
        schemas.pop(name, None)
    schemas["Problem"] = PROBLEM_SCHEMA
    components["securitySchemes"] = {
        SECURITY_SCHEME: {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "JWT",
            "description": "An ID token from POST /auth/token.",
        }
    }
    return document


def _failures(route: RouteContext, calls: list[Any]) -> Iterator[tuple[str, str]]:
    yield "400", BAD_REQUEST
    if authenticate in calls:
        yield "401", UNAUTHENTICATED
        yield "403", FORBIDDEN
    if route.dependant.path_params:
        yield "404", NOT_FOUND
    if route.body_field is not None:
        yield "413", TOO_LARGE
        yield "415", NOT_JSON


def _dependants(dependant: Dependant) -> Iterator[Dependant]:
    for sub in dependant.dependencies:
        yield sub
        yield from _dependants(sub)
