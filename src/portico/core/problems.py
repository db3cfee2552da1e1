"""The one place errors become HTTP responses (``application/problem+json``).

No stack trace, exception text of an unexpected error, or request body ever reaches a
client: unexpected errors are logged with the request id and answered with a bare 500.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.routing import iter_route_contexts
from sqlalchemy.exc import DataError, IntegrityError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse, Response
from starlette.routing import Match

from portico.core.errors import (
    PROBLEM_CONTENT_TYPE,
    STATUS_ERRORS,
    BadRequest,
    Conflict,
    PorticoError,
    UnsupportedMediaType,
    ValidationFailed,
)
from portico.core.validation import describe, json_pointer, translate

logger = logging.getLogger("portico.http")


def problem_response(error: PorticoError) -> Response:
    return JSONResponse(
        error.to_problem(),
        status_code=error.status,
        headers=error.headers,
        media_type=PROBLEM_CONTENT_TYPE,
    )


def install_problem_handlers(app: FastAPI) -> None:
    app.add_exception_handler(PorticoError, _portico_error)  # type: ignore[arg-type]
    app.add_exception_handler(RequestValidationError, _request_validation)  # type: ignore[arg-type]
    app.add_exception_handler(StarletteHTTPException, _http_exception)  # type: ignore[arg-type]
    app.add_exception_handler(IntegrityError, _integrity_error)  # type: ignore[arg-type]
    app.add_exception_handler(DataError, _data_error)  # type: ignore[arg-type]
    app.add_exception_handler(Exception, _unexpected)


async def _portico_error(_request: Request, error: PorticoError) -> Response:
    return problem_response(error)


async def _request_validation(request: Request, error: RequestValidationError) -> Response:
    return problem_response(request_validation_error(request, error.errors()))


def request_validation_error(request: Request, errors: Any) -> PorticoError:
    """FastAPI's validation errors: body errors get JSON pointers, query errors the parameter.
    A body that is not sent as JSON is a 415 whatever the route reads (a model or a plain
    object: FastAPI hands either the raw bytes, which fail differently)."""
    if not _json_content(request) and any(tuple(e.get("loc", ()))[:1] == ("body",) for e in errors):
        return _media_type_error(request)
    items: list[dict[str, str]] = []
    for error in errors:
        loc = tuple(error.get("loc", ()))
        source = loc[0] if loc else "body"
        if source == "body":
            if error.get("type") == "model_attributes_type" and len(loc) == 1:
                # a body that is not JSON at all reaches here as raw bytes
                return _media_type_error(request)
            if error.get("type") == "missing" and len(loc) == 1:
                items.append({"pointer": "", "detail": "request body is required"})
                continue
            if error.get("type") == "json_invalid":
                items.append({"pointer": "", "detail": describe(error, ())})
                continue
            items.extend(translate([error], strip=1))
        else:
            name = str(loc[1]) if len(loc) > 1 else str(source)
            if error.get("type") == "missing":
                detail = describe(error, loc[1:])
            else:  # "$" is the parameter itself; deeper parts (a list item) follow it
                detail = describe(error, loc[2:]).replace("$", name, 1)
            items.append({"parameter": name, "detail": detail})
    return ValidationFailed(items)


def _json_content(request: Request) -> bool:
    """No content type (FastAPI reads the body as JSON), ``application/json`` or ``+json``."""
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    return media_type in ("application/json", "") or media_type.endswith("+json")


def _media_type_error(request: Request) -> PorticoError:
    if _json_content(request):
        return ValidationFailed([{"pointer": "", "detail": "request body must be a JSON object"}])
    content_type = request.headers.get("content-type", "")
    return UnsupportedMediaType(
        f"Content-Type {content_type!r} is not supported; use application/json"
    )


async def _http_exception(request: Request, error: StarletteHTTPException) -> Response:
    detail = error.detail if isinstance(error.detail, str) else None
    if error.status_code == 404 and detail == "Not Found":
        detail = "no such endpoint"
    headers = error.headers
    if error.status_code == 405 and (allowed := _allowed_methods(request)):
        headers = {**(headers or {}), "Allow": allowed}
    cls = STATUS_ERRORS.get(error.status_code)
    if cls is None:
        body = {
            "type": "about:blank",
            "title": detail or "Error",
            "status": error.status_code,
            "detail": detail or "",
        }
        return JSONResponse(
            body,
            status_code=error.status_code,
            headers=headers,
            media_type=PROBLEM_CONTENT_TYPE,
        )
    problem = cls.__new__(cls)
    PorticoError.__init__(problem, detail, headers=headers)
    return problem_response(problem)


def _allowed_methods(request: Request) -> str:
    """Every method the path answers to. The router answers 405 from the first route whose
    path matches (``GET /jobs/{job}``), but the path may have others (``DELETE /jobs/{job}``),
    and the Allow header must list them all (RFC 9110 §15.5.6). A path with a literal
    segment is its own resource, not one of the parameter's (``/apis/from-spec`` is not an
    ``/apis/{apiId}``, though the router would take it as one for a method it lacks): only
    the methods of the most specific paths that match count."""
    matching: dict[str, set[str]] = {}
    for route in iter_route_contexts(request.app.routes):
        allowed = getattr(route, "methods", None)
        path = route.path_format
        if allowed and path and route.matches(request.scope)[0] is not Match.NONE:
            matching.setdefault(path, set()).update(allowed)
    if not matching:
        return ""
    fewest = min(path.count("{") for path in matching)
    methods: set[str] = set()
    for path_format, allowed_there in matching.items():
        if path_format.count("{") == fewest:
            methods |= allowed_there
    return ", ".join(sorted(methods))


async def _integrity_error(_request: Request, error: IntegrityError) -> Response:
    # Services check uniqueness first and answer with a precise message; reaching here means
    # a concurrent request won the race. The transaction is rolled back by the session owner.
    logger.info("integrity error answered as 409", extra={"error": type(error.orig).__name__})
    return problem_response(Conflict("the change conflicts with another one; retry"))


async def _data_error(_request: Request, error: DataError) -> Response:
    # A value the store cannot hold that validation let through: a 400, and a log line so
    # that the validation gap gets closed.
    logger.warning("data error answered as 400", extra={"error": type(error.orig).__name__})
    return problem_response(BadRequest("a value in the request cannot be stored"))


async def _unexpected(request: Request, error: Exception) -> Response:
    logger.error(
        "unhandled error",
        exc_info=error,
        extra={"request_id": getattr(request.state, "request_id", None), "path": request.url.path},
    )
    return problem_response(PorticoError())


__all__ = ["install_problem_handlers", "json_pointer", "problem_response"]
