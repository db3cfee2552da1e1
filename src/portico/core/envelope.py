"""The marketplace admin API's response contract, built once for every endpoint.

* one object: ``{"data": {...}}``;
* a collection: ``{"data": [...], "meta": {count, page, limit, pages}, "links": {self,
  first, prev, next, last}}`` (a link that does not apply is null);
* created: 201 with ``Location``; deleted: 204;
* bulk: 200 with a per-item report and ``meta.failed: [{id, status, detail}]``;
* asynchronous: 202 ``{"job_id"}`` with ``Location: <base>/jobs/{id}``.

Links keep the request's own query (filters, sort, limit) and change only ``page``, so a
client can follow ``next`` without rebuilding the query.
"""

from __future__ import annotations

import math
from typing import Any, Generic, TypeVar
from urllib.parse import urlencode

from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from portico.core.pagination import Page

T = TypeVar("T")


class Envelope(BaseModel, Generic[T]):
    data: T


class CollectionMeta(BaseModel):
    count: int
    page: int
    limit: int
    pages: int


class CollectionLinks(BaseModel):
    self: str
    first: str
    prev: str | None
    next: str | None
    last: str


class Collection(BaseModel, Generic[T]):
    data: list[T]
    meta: CollectionMeta
    links: CollectionLinks


class BulkFailure(BaseModel):
    id: str
    status: int
    detail: str


class BulkMeta(BaseModel):
    count: int
    failed: list[BulkFailure]


class BulkResult(BaseModel, Generic[T]):
    data: list[T]
    meta: BulkMeta


class JobAccepted(BaseModel):
    job_id: str


def _page_url(request: Request, page: int) -> str:
    params = [(k, v) for k, v in request.query_params.multi_items() if k != "page"]
    params.append(("page", str(page)))
    return f"{request.url.path}?{urlencode(params)}"


def collection(request: Request, page: Page[Any], data: list[T]) -> Collection[T]:
    pages = max(1, math.ceil(page.total / page.size)) if page.size else 1
    links = CollectionLinks(
        self=_page_url(request, page.page),
        first=_page_url(request, 1),
        prev=_page_url(request, page.page - 1) if 1 < page.page <= pages else None,
        next=_page_url(request, page.page + 1) if page.page < pages else None,
        last=_page_url(request, pages),
    )
    meta = CollectionMeta(count=page.total, page=page.page, limit=page.size, pages=pages)
    return Collection[T](data=data, meta=meta, links=links)


def created(data: BaseModel, location: str) -> Response:
    return JSONResponse(
        {"data": data.model_dump(mode="json")}, status_code=201, headers={"Location": location}
    )


def accepted(request: Request, job_id: str) -> Response:
    base = request.scope.get("root_path", "")
    return JSONResponse(
        {"job_id": job_id}, status_code=202, headers={"Location": f"{base}/jobs/{job_id}"}
    )
