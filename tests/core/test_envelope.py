"""The admin API's response helpers: created (201 + Location), accepted (202 {job_id} +
Location /jobs/{id} under the API's own base), bulk (200 with meta.failed)."""

from __future__ import annotations

import json
import uuid

import httpx
from fastapi import FastAPI, Request
from pydantic import BaseModel
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Mount

from portico.core.envelope import BulkFailure, BulkMeta, BulkResult, accepted, created
from portico.core.errors import Conflict, NotFound


class Item(BaseModel):
    id: uuid.UUID
    name: str


ITEM = Item(id=uuid.UUID(int=7), name="café")


def test_created_is_201_with_the_data_and_its_location() -> None:
    response = created(ITEM, f"/api/admin/v1/items/{ITEM.id}")
    assert response.status_code == 201
    assert response.headers["location"] == f"/api/admin/v1/items/{ITEM.id}"
    assert response.headers["content-type"] == "application/json"
    assert json.loads(response.body) == {"data": {"id": str(ITEM.id), "name": "café"}}


async def test_accepted_is_202_with_the_job_id_and_its_location_under_the_mount() -> None:
    api = FastAPI()

    @api.post("/imports")
    async def start(request: Request) -> Response:
        return accepted(request, "job-123")

    root = Starlette(routes=[Mount("/api/admin/v1", app=api)])
    transport = httpx.ASGITransport(app=root)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        response = await http.post("/api/admin/v1/imports")
        assert response.status_code == 202
        assert response.json() == {"job_id": "job-123"}  # unwrapped: the job is the answer
        assert response.headers["location"] == "/api/admin/v1/jobs/job-123"
        # the Location names the jobs endpoint of the same API
        direct = httpx.ASGITransport(app=api)
        async with httpx.AsyncClient(transport=direct, base_url="http://testserver") as bare:
            unmounted = await bare.post("/imports")
        assert unmounted.headers["location"] == "/jobs/job-123"


async def test_a_bulk_result_is_200_reporting_each_failure() -> None:
    missing, clash = uuid.UUID(int=1), uuid.UUID(int=2)
    api = FastAPI()

    @api.post("/items/archive", response_model=BulkResult[Item])
    async def archive() -> BulkResult[Item]:
        return BulkResult[Item](
            data=[ITEM],
            meta=BulkMeta(
                count=3,
                failed=[
                    BulkFailure(id=str(missing), status=NotFound.status, detail="item not found"),
                    BulkFailure(id=str(clash), status=Conflict.status, detail="already archived"),
                ],
            ),
        )

    transport = httpx.ASGITransport(app=api)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        response = await http.post("/items/archive")
    # some items failed, the request did not: 200, and the report says which and why
    assert response.status_code == 200
    assert response.json() == {
        "data": [{"id": str(ITEM.id), "name": "café"}],
        "meta": {
            "count": 3,
            "failed": [
                {"id": str(missing), "status": 404, "detail": "item not found"},
                {"id": str(clash), "status": 409, "detail": "already archived"},
            ],
        },
    }
    # the schema a route declares with it: every failure names its item, status and reason
    schema = BulkResult[Item].model_json_schema()
    failure = schema["$defs"]["BulkFailure"]
    assert failure["required"] == ["id", "status", "detail"]
    assert set(schema["required"]) == {"data", "meta"}
