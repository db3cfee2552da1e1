"""Structural validation of a revision's ``serviceSpec`` and ``routeSpec``.

Structure only — field names, types, string lengths, the shape of a URI — as the seed says
the control plane does on create and update. Plugin configurations are NOT checked here: a
plugin config is any JSON object, and a plugin name any non-empty string (case-sensitive, at
most 64 characters); the seed product's names of plugins Portico names otherwise
(``helix-auth``, ``api-product-enforcer``: ``registry.ALIASES``) are stored under Portico's.
"Plugin-level validation runs only when the gateway runtime processes a deploy", so an
unknown plugin or a bad config is found by deploy and dry-run, not here.

The product's validator checks each spec object on its own, so in an error's ``detail`` the
``$`` is that object (``$.script: must be at least 10 characters long``), while its
``pointer`` names the field in the request body (``/routeSpec/0/script``). The generic
translation of a whole body would say ``$.routeSpec[0].script``, which clients of the
product do not expect. A ``desc`` over 256 characters reads ``desc: must be at most 256
characters long`` wherever it is (service, route, API), as the seed quotes it.

What is stored: the spec as sent, after validation, with the defaults of the fields that
have one filled in — a route's ``priority`` (0) and ``status`` (1), as APISIX stores them.
Optional fields without a default (``name``, ``methods``, ``hosts``, ``script``,
``service_id``, ``desc``; a service's ``plugins``) are stored only when given; ``null`` is
not a value of any field. A revision read back and sent again validates to the same spec.

Plugin configs being the only free-form JSON of a spec, they are where JSON that no store
could hold is refused: NaN, ±Infinity, lone surrogates, nesting deeper than 32 levels.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal, get_args

from pydantic import AfterValidator, ConfigDict, Field, TypeAdapter, ValidationError
from typing_extensions import Required, TypedDict  # noqa: UP035 - pydantic needs it on 3.11

from portico.core.errors import ValidationFailed
from portico.core.validation import translate
from portico.gateway.plugins.registry import canonical_plugins
from portico.management.api.schemas import DESC_MAX_LENGTH, DESC_TOO_LONG

__all__ = [
    "DESC_MAX_LENGTH",
    "DESC_TOO_LONG",
    "MAX_ROUTES",
    "METHODS",
    "RouteObject",
    "ServiceSpec",
    "check_stored_specs",
    "parse_route_spec",
    "parse_service_spec",
]

MAX_ROUTES = 10_000
MAX_ERRORS = 100  # a route spec of 10 000 broken routes does not need 10 000 messages
MAX_HOSTS = 50
MAX_DEPTH = 32  # of a plugin config; real ones are a few levels deep
ROUTE_DEFAULTS: Mapping[str, int] = {"priority": 0, "status": 1}

# --- hosts --------------------------------------------------------------------------------

_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOST = re.compile(rf"(\*\.)?{_LABEL}(\.{_LABEL})*")


def _check_hosts(hosts: list[str]) -> list[str]:
    seen: set[str] = set()
    for host in hosts:
        if len(host) > 253 or not _HOST.fullmatch(host):
            raise ValueError(f"{host!r} is not a hostname (a leading '*.' wildcard is allowed)")
        if host.lower() in seen:  # host names are case-insensitive
            raise ValueError(f"{host!r} is listed more than once")
        seen.add(host.lower())
    return hosts


Hosts = Annotated[
    list[str], Field(min_length=1, max_length=MAX_HOSTS), AfterValidator(_check_hosts)
]

# --- plugins ------------------------------------------------------------------------------


def _unstorable(value: Any, depth: int = 0) -> str | None:
    """Why a plugin config (free-form JSON) cannot be stored and served back, if it cannot.
    Python's JSON parser accepts NaN, ±Infinity and lone UTF-16 surrogates (``"\\ud800"``);
    PostgreSQL's jsonb refuses all three and no JSON response can carry them."""
    if depth > MAX_DEPTH:
        return f"is nested more than {MAX_DEPTH} levels deep"
    if isinstance(value, float) and not math.isfinite(value):
        return "holds a number that is not finite"
    if isinstance(value, str) and not _encodable(value):
        return "holds text that is not valid Unicode (a lone surrogate)"
    if isinstance(value, dict):
        for key, item in value.items():
            if not _encodable(key):
                return "holds a key that is not valid Unicode (a lone surrogate)"
            reason = _unstorable(item, depth + 1)
            if reason is not None:
                return reason
    if isinstance(value, list):
        for item in value:
            reason = _unstorable(item, depth + 1)
            if reason is not None:
                return reason
    return None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check_plugins(plugins: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The map checked, with the seed product's plugin names (``helix-auth``...) under
    Portico's (``registry.ALIASES``): stored as Portico names them."""
    for name, config in plugins.items():
        if not 1 <= len(name) <= 64:
            raise ValueError("plugin names must be 1 to 64 characters long")
        if not _encodable(name):
            raise ValueError("plugin names must be valid Unicode (no lone surrogates)")
        reason = _unstorable(config)
        if reason is not None:
            raise ValueError(f"the config of plugin {name!r} {reason}")
    canonical, conflicts = canonical_plugins(plugins)
    if conflicts:
        raise ValueError(conflicts[0])
    return canonical


Plugins = Annotated[dict[str, dict[str, Any]], AfterValidator(_check_plugins)]

# --- uri ----------------------------------------------------------------------------------

_PCHAR = re.compile(r"(?:[A-Za-z0-9\-._~!$&'()+,;=:@]|%[0-9A-Fa-f]{2})+")
_PARAMETER = re.compile(r":[A-Za-z_][A-Za-z0-9_]*")


def _check_uri(uri: str) -> str:
    """A path of RFC 3986 segments; ``:name`` segments are parameters; a final ``*`` makes
    the route a prefix match. Paths the gateway could never see once it normalised the
    request (``//``, ``.``/``..`` segments) are refused rather than stored as dead routes."""
    if not uri.startswith("/"):
        raise ValueError("must start with '/'")
    path = uri.removesuffix("*")
    if "*" in path:
        raise ValueError("'*' is allowed only as the last character")
    segments = path.split("/")[1:]
    parameters: set[str] = set()
    for index, segment in enumerate(segments):
        if segment == "":
            if index != len(segments) - 1:
                raise ValueError("must not contain empty segments ('//')")
        elif segment in (".", ".."):
            raise ValueError("must not contain '.' or '..' segments")
        elif segment.startswith(":"):
            if not _PARAMETER.fullmatch(segment):
                raise ValueError(
                    f"{segment!r} is not a path parameter: write ':name' (letters, digits, '_')"
                )
            if segment in parameters:
                raise ValueError(f"path parameter {segment!r} appears more than once")
            parameters.add(segment)
        elif not _PCHAR.fullmatch(segment):
            if "{" in segment or "}" in segment:
                raise ValueError("write path parameters as ':name' segments, not '{name}'")
            raise ValueError(f"segment {segment!r} holds a character not allowed in a path")
    return uri


# --- the spec objects ---------------------------------------------------------------------


def _unique_methods(methods: list[str]) -> list[str]:
    if len(set(methods)) != len(methods):
        raise ValueError("must have only unique items")
    return methods


def _zero_or_one(value: int) -> int:
    if value not in (0, 1):
        raise ValueError("must be 0 (disabled) or 1 (enabled)")
    return value


Name = Annotated[str, Field(min_length=1, max_length=100)]
Desc = Annotated[str, Field(max_length=DESC_MAX_LENGTH)]
Method = Literal[
    "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "CONNECT", "TRACE", "PURGE"
]
METHODS: tuple[str, ...] = get_args(Method)
_STRICT = ConfigDict(extra="forbid", strict=True)


class ServiceSpec(TypedDict, total=False):
    """``serviceSpec``: what applies to every route of the API."""

    __pydantic_config__ = _STRICT  # type: ignore[misc]

    name: Name
    desc: Desc
    plugins: Plugins
    hosts: Hosts


class RouteObject(TypedDict, total=False):
    """One entry of ``routeSpec``. Field order is the order errors are reported in."""

    __pydantic_config__ = _STRICT  # type: ignore[misc]

    name: Name
    uri: Required[Annotated[str, Field(max_length=4096), AfterValidator(_check_uri)]]
    methods: Annotated[list[Method], Field(min_length=1), AfterValidator(_unique_methods)]
    plugins: Required[Plugins]
    script: Annotated[str, Field(min_length=10, max_length=65_536)]
    service_id: Annotated[str, Field(min_length=1, max_length=64)]
    hosts: Hosts
    priority: Annotated[int, Field(ge=-(2**31), le=2**31 - 1)]
    status: Annotated[int, AfterValidator(_zero_or_one)]
    desc: Desc


_SERVICE_SPEC = TypeAdapter(ServiceSpec)
_ROUTE = TypeAdapter(RouteObject)


def _errors(error: ValidationError, at: str) -> list[dict[str, str]]:
    """An object's errors, ``$`` being the object, pointers prefixed with where it is."""
    out = []
    for item in translate(error.errors()):
        detail = item["detail"]
        if item["pointer"] == "/desc" and detail.endswith(
            f"must be at most {DESC_MAX_LENGTH} characters long"
        ):
            detail = DESC_TOO_LONG
        out.append({"pointer": at + item["pointer"], "detail": detail})
    return out


def parse_service_spec(value: Any, *, at: str = "/serviceSpec") -> dict[str, Any]:
    """``value`` validated as a ``serviceSpec``; :class:`ValidationFailed` with every error
    (pointers under ``at``) otherwise."""
    try:
        return dict(_SERVICE_SPEC.validate_python(value))
    except ValidationError as error:
        raise ValidationFailed(_errors(error, at)[:MAX_ERRORS]) from None


def parse_route_spec(value: Any, *, at: str = "/routeSpec") -> list[dict[str, Any]]:
    """``value`` validated as a ``routeSpec`` (each route with its defaults filled in);
    :class:`ValidationFailed` listing the errors of every route otherwise."""
    if not isinstance(value, list):
        raise ValidationFailed.at(at, "routeSpec: array expected")
    if len(value) > MAX_ROUTES:
        raise ValidationFailed.at(at, f"routeSpec: must have at most {MAX_ROUTES} items")
    routes: list[dict[str, Any]] = []
    errors: list[dict[str, str]] = []
    for index, raw in enumerate(value):
        try:
            route = _ROUTE.validate_python(raw)
        except ValidationError as error:
            errors.extend(_errors(error, f"{at}/{index}"))
            if len(errors) >= MAX_ERRORS:
                break
            continue
        routes.append({**route, **{k: v for k, v in ROUTE_DEFAULTS.items() if k not in route}})
    if errors:
        raise ValidationFailed(errors[:MAX_ERRORS])
    return routes


def check_stored_specs(service_spec: Any, route_spec: Any) -> None:
    """Deploy's first check: the stored specs are structurally valid. They were when stored;
    this still holds a revision written before a rule existed to the current rules. Errors
    of both specs are reported together."""
    errors: list[dict[str, str]] = []
    for parse, value in ((parse_service_spec, service_spec), (parse_route_spec, route_spec)):
        try:
            parse(value)
        except ValidationFailed as failure:
            errors.extend(dict(e) for e in failure.errors)
    if errors:
        raise ValidationFailed(errors[:MAX_ERRORS])
