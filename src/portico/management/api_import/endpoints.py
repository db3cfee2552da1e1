"""Import an API from an OpenAPI 3.x document: the API and its revision 1, one route per
operation. ``/apis/from-spec`` and ``/apis/import-openapi`` are the same operation."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import Field
from starlette.datastructures import UploadFile

from portico.core.db.session import SessionDep
from portico.core.errors import Conflict, PayloadTooLarge, UnsupportedMediaType, ValidationFailed
from portico.core.openapi import problems
from portico.core.schema import ReadSchema
from portico.management.access import OrgCaller, require
from portico.management.api import service as api_service
from portico.management.api.models import Api
from portico.management.api.openapi_import import MAX_DOCUMENT_BYTES, convert, parse_document
from portico.management.api.schemas import ApiCreate, ApiRead
from portico.management.revision import service as revision_service
from portico.management.revision.schemas import RevisionCreate, RevisionRead

router = APIRouter(prefix="/api/orgs/{orgId}/apis", tags=["apis"])
Creator = Annotated[OrgCaller, Depends(require("api.create"))]

UNSUPPORTED = (
    "send the document as multipart/form-data (part 'file') or as JSON "
    '{"spec": <document object or JSON/YAML text>}'
)


class PluginRenamed(ReadSchema):
    pointer: str = Field(description="Where the document names the plugin.")
    from_: str = Field(alias="from", description="The name the document uses (the seed's).")
    to: str = Field(description="Portico's name, under which it is stored.")


class ImportResult(ReadSchema):
    api: ApiRead
    revision: RevisionRead = Field(description="Revision 1: one route per operation.")
    renamed_plugins: list[PluginRenamed] = Field(
        default_factory=list,
        description="Plugins the document names as the seed product does (x-helix-gateway: "
        "helix-auth, api-product-enforcer), stored under Portico's names.",
    )
    dropped_keys: list[str] = Field(
        default_factory=list,
        description="Pointers of the keys starting with '_' (_meta, comments) left out of "
        "x-helix-gateway plugin blocks.",
    )


_DOC = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "required": ["spec"],
                    "properties": {"spec": {"type": ["object", "string"]}},
                    "additionalProperties": False,
                }
            },
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "properties": {"file": {"type": "string", "format": "binary"}},
                }
            },
        },
    }
}


@router.post(
    "/from-spec",
    response_model=ImportResult,
    status_code=201,
    openapi_extra=_DOC,
    responses=problems(Conflict, detail="A name already taken (or a concurrent change)."),
)
@router.post(
    "/import-openapi",
    response_model=ImportResult,
    status_code=201,
    openapi_extra=_DOC,
    responses=problems(Conflict, detail="A name already taken (or a concurrent change)."),
)
async def import_openapi(request: Request, caller: Creator, session: SessionDep) -> ImportResult:
    """Create an API and its first revision from an OpenAPI 3.x document (JSON or YAML).

    Plugins come from ``x-portico.plugins`` at the document root (service scope) and on each
    operation (route scope); their configurations are checked at deploy, like any revision's.
    ``x-helix-gateway`` (the seed product's extension) is read the same way: the answer lists
    the plugins stored under Portico's names and the ``_``-keys left out.
    """
    raw, pointer = await _document_of(request)
    try:
        # parsing a large YAML document takes seconds of CPU: not on the event loop
        document = await asyncio.to_thread(parse_document, raw)
        imported = convert(document)
    except ValidationFailed as error:
        raise _prefixed(error, pointer) from None
    api_view = await api_service.create(
        session=session, caller=caller, data=ApiCreate(name=imported.name, desc=imported.desc)
    )
    api: Api = api_view.api
    api.spec_document = imported.document
    revision = await revision_service.create(
        session=session,
        caller=caller,
        api_id=api.id,
        data=RevisionCreate.model_validate(
            {"serviceSpec": imported.service_spec, "routeSpec": imported.route_spec}
        ),
    )
    await session.flush()
    return ImportResult(
        api=ApiRead.of(api, 1, api_view.deployments),
        revision=RevisionRead.of(*revision),
        renamed_plugins=[PluginRenamed.model_validate(item) for item in imported.renamed],
        dropped_keys=imported.dropped,
    )


async def _document_of(request: Request) -> tuple[Any, str]:
    """The document, and the pointer its errors are reported under."""
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type == "multipart/form-data":
        form = await request.form(max_files=1, max_fields=10)
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise ValidationFailed.at("/file", "required part 'file' not found")
        data = await upload.read(MAX_DOCUMENT_BYTES + 1)
        if len(data) > MAX_DOCUMENT_BYTES:
            raise PayloadTooLarge(f"the document is larger than {MAX_DOCUMENT_BYTES} bytes")
        return data, ""
    if content_type == "application/json" or content_type.endswith("+json"):
        try:
            body = json.loads(await request.body())
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise ValidationFailed.at("", f"malformed JSON: {error}") from None
        if not isinstance(body, dict) or "spec" not in body:
            raise ValidationFailed.at("/spec", "required property 'spec' not found")
        extra = sorted(set(body) - {"spec"})
        if extra:
            raise ValidationFailed.at(f"/{extra[0]}", f"property '{extra[0]}' is not allowed")
        if not isinstance(body["spec"], dict | str):
            raise ValidationFailed.at("/spec", "$.spec: object or string expected")
        return body["spec"], "/spec"
    raise UnsupportedMediaType(
        f"Content-Type {content_type or 'none'!r} is not supported: {UNSUPPORTED}"
    )


def _prefixed(error: ValidationFailed, pointer: str) -> ValidationFailed:
    if not pointer:
        return error
    items = [{**e, "pointer": pointer + e.get("pointer", "")} for e in error.errors]
    return ValidationFailed(items, detail=error.detail)
