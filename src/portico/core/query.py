"""Unknown query parameters are refused on every route of an application, not only on lists.

A client that misspells a parameter (``?filtre[status]=x``) or sends one a route does not
read (``/users/{id}?page=2``) must be told, not answered as if it had not: 400, a problem
naming each such parameter. What a route reads is known from the route itself, so no
endpoint lists it twice:

- the query parameters FastAPI sees in its signature and dependencies (``Query(...)``);
- the parameters its OpenAPI description declares (``openapi_extra={"parameters": ...}``),
  for routes that read the raw query string;
- what a :class:`~portico.core.pagination.ListSpec` reads, for routes whose query is parsed
  by ``list_query(spec)``.

The declared names only pass the gate: the value is still checked by whatever reads it.

The check runs as an application-wide dependency (``strict_query``), first. A route that
authenticates its caller should rather be checked after that, so that an anonymous caller
always gets its 401 (and an audited authentication is audited whatever the query): its
authorising dependency is marked with :func:`checkpoint` and calls :func:`refuse_unknown`
itself once the caller is known; ``strict_query`` then leaves such routes alone.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from fastapi import params
from fastapi.dependencies.models import Dependant
from fastapi.dependencies.utils import get_flat_params
from starlette.requests import Request
from starlette.routing import BaseRoute

from portico.core.errors import ValidationFailed
from portico.core.openapi import raises
from portico.core.pagination import ListQueryDependency, ListSpec

C = TypeVar("C", bound=Callable[..., Any])

_CHECKPOINTS: weakref.WeakSet[Callable[..., Any]] = weakref.WeakSet()


def checkpoint(call: C) -> C:
    """Mark the dependency ``call`` as the one that calls :func:`refuse_unknown` for the
    routes that depend on it."""
    _CHECKPOINTS.add(call)
    return call


@dataclass(frozen=True)
class DeclaredQuery:
    """The query parameters one route reads."""

    names: frozenset[str]
    specs: tuple[ListSpec, ...]
    #: checked by a :func:`checkpoint` dependency of the route, not by ``strict_query``
    deferred: bool

    def accepts(self, key: str) -> bool:
        return key in self.names or any(spec.accepts(key) for spec in self.specs)


def declared(route: BaseRoute) -> DeclaredQuery:
    dependant: Dependant | None = getattr(route, "dependant", None)
    names = {
        field.alias
        for field in (get_flat_params(dependant) if dependant is not None else ())
        if isinstance(field.field_info, params.Query)
    }
    extra: dict[str, Any] = getattr(route, "openapi_extra", None) or {}
    names |= {p["name"] for p in extra.get("parameters", ()) if p.get("in") == "query"}
    calls = [d.call for d in _dependants(dependant)] if dependant is not None else []
    return DeclaredQuery(
        names=frozenset(names),
        specs=tuple(c.spec for c in calls if isinstance(c, ListQueryDependency)),
        deferred=any(_is_checkpoint(c) for c in calls),
    )


def _dependants(dependant: Dependant) -> Iterator[Dependant]:
    for sub in dependant.dependencies:
        yield sub
        yield from _dependants(sub)


def _is_checkpoint(call: Any) -> bool:
    try:
        return call in _CHECKPOINTS
    except TypeError:  # not weakly referenceable: never marked
        return False


def _declared_for(request: Request) -> DeclaredQuery | None:
    route: BaseRoute | None = request.scope.get("route")
    if route is None:
        return None
    # computed once per route; routes live as long as their application
    cache: dict[int, tuple[BaseRoute, DeclaredQuery]] = _cache(request)
    entry = cache.get(id(route))
    if entry is None or entry[0] is not route:
        entry = cache[id(route)] = (route, declared(route))
    return entry[1]


def _cache(request: Request) -> dict[int, tuple[BaseRoute, DeclaredQuery]]:
    state = request.app.state
    existing: dict[int, tuple[BaseRoute, DeclaredQuery]] | None = getattr(
        state, "declared_query", None
    )
    if existing is None:
        existing = state.declared_query = {}
    return existing


def unknown_parameters(request: Request, query: DeclaredQuery) -> list[dict[str, str]]:
    errors = []
    for key in dict.fromkeys(request.query_params.keys()):
        if not query.accepts(key):
            what = "filter" if key.startswith("filter[") else "query parameter"
            errors.append({"parameter": key, "detail": f"{key}: unknown {what}"})
    return errors


def refuse_unknown(request: Request) -> None:
    """400 naming each query parameter the matched route does not read."""
    query = _declared_for(request)
    if query is None or not request.query_params:
        return
    if errors := unknown_parameters(request, query):
        raise ValidationFailed(errors)


@raises(ValidationFailed)
async def strict_query(request: Request) -> None:
    """The application-wide dependency (``FastAPI(dependencies=[Depends(strict_query)])``)."""
    query = _declared_for(request)
    if query is not None and not query.deferred:
        refuse_unknown(request)
