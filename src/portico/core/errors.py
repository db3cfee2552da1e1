"""The error hierarchy, rendered as ``application/problem+json`` by one handler.

    PorticoError                      500 internal
    ├── BadRequest                    400 bad-request
    │   └── ValidationFailed          400 validation   (+ errors[{pointer|parameter, detail}])
    ├── Unauthorized                  401 unauthorized
    │   └── TokenExpired              401 unauthorized, detail "token expired"
    ├── Forbidden                     403 permission-denied
    │   └── PermissionDenied          403 names the missing permission
    ├── NotFound                      404 not-found
    ├── MethodNotAllowed              405 method-not-allowed
    ├── Conflict                      409 conflict
    ├── PayloadTooLarge               413 payload-too-large
    ├── UnsupportedMediaType          415 unsupported-media-type
    ├── TooManyRequests               429 too-many-requests (+ Retry-After)
    └── ServiceUnavailable            503 unavailable

Domain errors subclass these (``EnvironmentNotFound(NotFound)``) and carry their message.
A class that introduces a ``kind`` also says, in ``description``, when it happens and what to
do: ``GET /problems/<kind>`` (``core/problem_pages.py``) serves it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

PROBLEM_CONTENT_TYPE = "application/problem+json"


class PorticoError(Exception):
    status: ClassVar[int] = 500
    kind: ClassVar[str] = "internal"
    title: ClassVar[str] = "Internal Server Error"
    default_detail: ClassVar[str] = "An unexpected error occurred."
    #: when this kind of problem happens and what to do about it (the problem's page)
    description: ClassVar[str] = (
        "The server failed in a way it did not foresee; nothing the request asked for was "
        "kept. Retry later; if it persists, report the response's X-Request-Id to the "
        "operator, whose logs hold the cause."
    )
    #: keep the transaction's work even though the request fails (see core.db.session)
    commit: ClassVar[bool] = False

    def __init__(
        self,
        detail: str | None = None,
        *,
        errors: Sequence[Mapping[str, str]] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.detail = detail or self.default_detail
        self.errors = list(errors or [])
        self.headers = dict(headers or {})
        super().__init__(self.detail)

    @property
    def type_uri(self) -> str:
        return f"/problems/{self.kind}"

    def to_problem(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "type": self.type_uri,
            "title": self.title,
            "status": self.status,
            "detail": self.detail,
        }
        if self.errors:
            body["errors"] = self.errors
        return body


class BadRequest(PorticoError):
    status = 400
    kind = "bad-request"
    title = "Bad Request"
    default_detail = "The request is not valid."
    description = (
        "The request cannot be understood or a value in it cannot be stored. `detail` says "
        "what; correct the request before sending it again."
    )


class ValidationFailed(BadRequest):
    kind = "validation"
    title = "Validation Failed"
    description = (
        "A query parameter or a body field is unknown, missing or malformed. `errors` lists "
        "each one: `parameter` names a query parameter, `pointer` a body field (JSON "
        "pointer), `detail` what is wrong. Correct those and send the request again."
    )

    def __init__(self, errors: Sequence[Mapping[str, str]], detail: str | None = None) -> None:
        first = errors[0]["detail"] if errors else "The request is not valid."
        super().__init__(detail or first, errors=errors)

    @classmethod
    def at(cls, pointer: str, detail: str) -> ValidationFailed:
        return cls([{"pointer": pointer, "detail": detail}])


class Unauthorized(PorticoError):
    status = 401
    kind = "unauthorized"
    title = "Unauthorized"
    default_detail = "authentication required"
    description = (
        "No valid credentials: the token is missing, malformed, expired or revoked, or its "
        "account can no longer sign in. Obtain a new token (sign in, or refresh) and send "
        "it as `Authorization: Bearer <token>`."
    )

    def __init__(self, detail: str | None = None) -> None:
        super().__init__(detail, headers={"WWW-Authenticate": "Bearer"})


class TokenExpired(Unauthorized):
    default_detail = "token expired"


class Forbidden(PorticoError):
    status = 403
    kind = "permission-denied"
    title = "Forbidden"
    default_detail = "You are not allowed to do this."
    description = (
        "The caller is authenticated but lacks a permission the endpoint needs; `permission` "
        "names it when there is one. Ask an administrator for a role that grants it."
    )


class PermissionDenied(Forbidden):
    def __init__(self, permission: str) -> None:
        self.permission = permission
        super().__init__(f"missing permission '{permission}'")

    def to_problem(self) -> dict[str, Any]:
        return {**super().to_problem(), "permission": self.permission}


class NotFound(PorticoError):
    status = 404
    kind = "not-found"
    title = "Not Found"
    default_detail = "The resource does not exist."
    description = (
        "Nothing answers to this path: no endpoint, or no resource with this id (an id that "
        "is malformed, or belongs to another organisation, names nothing either). Check the "
        "path and the id."
    )


class MethodNotAllowed(PorticoError):
    status = 405
    kind = "method-not-allowed"
    title = "Method Not Allowed"
    default_detail = "The method is not allowed on this resource."
    description = (
        "The path exists but does not answer to this HTTP method; the `Allow` header lists "
        "the methods it does answer to."
    )


class Conflict(PorticoError):
    status = 409
    kind = "conflict"
    title = "Conflict"
    default_detail = "The request conflicts with the current state."
    description = (
        "The request is valid but the resource's current state does not allow it (a "
        "transition from the wrong status, a name already taken, a concurrent change). "
        "`detail` says why; read the resource again before deciding to retry."
    )


class PayloadTooLarge(PorticoError):
    status = 413
    kind = "payload-too-large"
    title = "Payload Too Large"
    default_detail = "The request body is too large."
    description = (
        "The body is larger than the server accepts (`PORTICO_MAX_BODY_BYTES`). Send less: "
        "split the request, or ask the operator to raise the limit."
    )


class UnsupportedMediaType(PorticoError):
    status = 415
    kind = "unsupported-media-type"
    title = "Unsupported Media Type"
    default_detail = "Content-Type must be application/json."
    description = (
        "The body is not in a format the endpoint reads. Send JSON with "
        "`Content-Type: application/json`."
    )


class TooManyRequests(PorticoError):
    status = 429
    kind = "too-many-requests"
    title = "Too Many Requests"
    default_detail = "Too many requests; try again later."
    description = (
        "The client address used up its budget for this endpoint (sign-in attempts, "
        "refreshes, registrations). Wait the number of seconds the `Retry-After` header "
        "gives before trying again."
    )

    def __init__(self, retry_after: int, detail: str | None = None) -> None:
        super().__init__(detail, headers={"Retry-After": str(max(1, retry_after))})


class ServiceUnavailable(PorticoError):
    status = 503
    kind = "unavailable"
    title = "Service Unavailable"
    default_detail = "The service is unavailable."
    description = (
        "The server cannot serve this request for now (a dependency is down, or a feature "
        "is not configured). Retry later; `detail` says what is missing when an operator "
        "must act."
    )


STATUS_ERRORS: dict[int, type[PorticoError]] = {
    cls.status: cls
    for cls in (
        BadRequest,
        Unauthorized,
        Forbidden,
        NotFound,
        MethodNotAllowed,
        Conflict,
        PayloadTooLarge,
        UnsupportedMediaType,
        ServiceUnavailable,
    )
}
