"""OpenAPI documents that state the failures: what both REST surfaces share.

FastAPI describes what a route returns when it succeeds, plus a 422 that Portico never sends
(validation failures are 400 problems, ``core/problems.py``). Every failure is an
``application/problem+json`` body, and most of them follow from how a route is built, so
each surface declares them once for all its routes (:func:`describe_failures`, with the
surface's :class:`FailureRules`) rather than on each route:

- what the route's dependencies raise: a dependency marked with :func:`raises` (the
  authentication and permission checks, the strict query check, the list parser) adds its
  statuses to every route that depends on it, however deep;
- what the surface derives from the route's shape (its rules: a path parameter names
  something that may not exist, a body may be malformed...).

What only the route itself knows (a 409 from its service, a 304, a 429) it declares with
``responses=problems(Conflict, detail="...")`` (or ``responses={304: {...}}``); a router can
declare them for all its routes the same way (``APIRouter(responses=...)``). A route's own
description of a status wins over the derived one, and every 4xx/5xx without a body schema
gets the problem schema.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from fastapi import FastAPI, params
from fastapi.dependencies.models import Dependant
from fastapi.dependencies.utils import get_flat_params
from fastapi.routing import APIRoute, RouteContext, iter_route_contexts

from portico.core.errors import PROBLEM_CONTENT_TYPE, PorticoError

C = TypeVar("C")

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
        "feature": {
            "type": "string",
            "description": "The feature switched off (403 feature-disabled).",
        },
    },
}
PROBLEM_REF: dict[str, Any] = {"$ref": "#/components/schemas/Problem"}
# what FastAPI adds for its 422, which Portico never sends
_FASTAPI_VALIDATION = ("HTTPValidationError", "ValidationError")
_RAISES = "__portico_raises__"


def raises(*errors: type[PorticoError]) -> Callable[[C], C]:
    """Mark a dependency (a function, or a class whose instances are dependencies): every
    route that depends on it documents the statuses of ``errors``."""

    def mark(call: C) -> C:
        setattr(call, _RAISES, (*getattr(call, _RAISES, ()), *errors))
        return call

    return mark


def raised_by(call: Any) -> tuple[type[PorticoError], ...]:
    """What the dependency ``call`` is marked as raising (see :func:`raises`)."""
    found: tuple[type[PorticoError], ...] = getattr(call, _RAISES, ())
    return found


def problems(
    *errors: type[PorticoError], detail: str | None = None
) -> dict[int | str, dict[str, Any]]:
    """A route's ``responses=`` for the failures its own code raises, described by the error
    classes (their ``default_detail``) unless ``detail`` says more precisely when:
    ``responses=problems(Conflict, detail="An environment already has this name.")``.
    Combine several with ``{**problems(A), **problems(B)}``."""
    described: dict[int, list[str]] = {}
    for error in errors:
        text = detail or error.default_detail
        if text not in (seen := described.setdefault(error.status, [])):
            seen.append(text)
    return {
        status: {"description": " ".join(texts), "content": problem_content()}
        for status, texts in described.items()
    }


def problem_content() -> dict[str, Any]:
    """A response's ``content``: the problem schema."""
    return {PROBLEM_CONTENT_TYPE: {"schema": dict(PROBLEM_REF)}}


@dataclass(frozen=True)
class Route:
    """What the rules of a surface look at: one route and its dependencies."""

    context: RouteContext
    #: every dependency's callable, depth first
    calls: tuple[Any, ...]

    @property
    def has_body(self) -> bool:
        """A body, read by FastAPI or by the route itself (``openapi_extra``)."""
        extra: Mapping[str, Any] = self.context.openapi_extra or {}
        return self.context.body_field is not None or "requestBody" in extra

    @property
    def path_params(self) -> bool:
        """Path parameters, read by the endpoint or by a dependency (``require``'s orgId)."""
        return self._reads(params.Path)

    @property
    def query_params(self) -> bool:
        """Query parameters FastAPI reads (the endpoint's, its dependencies') or that the
        route declares itself (``openapi_extra``)."""
        extra: Mapping[str, Any] = self.context.openapi_extra or {}
        declared = [p for p in extra.get("parameters", ()) if p.get("in") == "query"]
        return self._reads(params.Query) or bool(declared)

    def _reads(self, kind: type[params.Param]) -> bool:
        fields = get_flat_params(self.context.dependant)
        return any(isinstance(f.field_info, kind) for f in fields)

    def raised(self) -> Iterator[type[PorticoError]]:
        for call in self.calls:
            yield from raised_by(call)


@dataclass(frozen=True)
class FailureRules:
    """How one surface derives its routes' failures."""

    #: (status, description) pairs the route's shape implies
    failures: Callable[[Route], Iterable[tuple[int, str]]]
    #: the description of each status its dependencies may raise (a status not listed here
    #: is described by the error class)
    descriptions: Mapping[int, str]
    #: the security scheme of the routes whose dependencies raise a 401: name and definition
    security_scheme: tuple[str, dict[str, Any]] | None = None


def install(app: FastAPI, rules: FailureRules) -> None:
    """Make ``app.openapi()`` (and so the served document) describe the failures."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = describe_failures(app, generate(), rules)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def describe_failures(
    app: FastAPI, document: dict[str, Any], rules: FailureRules
) -> dict[str, Any]:
    # routers are included lazily: their routes are seen through their contexts
    for context in iter_route_contexts(app.routes):
        if not isinstance(context.original_route, APIRoute) or not context.include_in_schema:
            continue
        route = Route(context, tuple(d.call for d in dependants(context.dependant)))
        derived = _derived(route, rules)
        for method in context.methods or ():
            operation = document["paths"][context.path_format][method.lower()]
            if rules.security_scheme is not None and "401" in derived:
                operation.setdefault("security", [{rules.security_scheme[0]: []}])
            responses: dict[str, Any] = operation["responses"]
            responses.pop("422", None)
            for status, description in derived.items():
                responses.setdefault(status, {"description": description})
            for status, response in responses.items():
                if status[0] in "45" and "content" not in response:
                    response["content"] = problem_content()
            operation["responses"] = dict(sorted(responses.items()))
    components = document.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    for name in _FASTAPI_VALIDATION:
        schemas.pop(name, None)
    schemas["Problem"] = PROBLEM_SCHEMA
    if rules.security_scheme is not None:
        name, scheme = rules.security_scheme
        components.setdefault("securitySchemes", {})[name] = scheme
    return document


def _derived(route: Route, rules: FailureRules) -> dict[str, str]:
    derived: dict[str, str] = {}
    for error in route.raised():
        description = rules.descriptions.get(error.status, error.default_detail)
        derived.setdefault(str(error.status), description)
    for status, description in rules.failures(route):
        derived.setdefault(str(status), description)
    return derived


def dependants(dependant: Dependant) -> Iterator[Dependant]:
    """Every dependency of ``dependant``, depth first."""
    for sub in dependant.dependencies:
        yield sub
        yield from dependants(sub)
