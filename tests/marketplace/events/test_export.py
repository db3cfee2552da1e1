"""GET /events/export: NDJSON and CSV downloads streamed chunk by chunk (keyset, one short
session per chunk), with spreadsheet formulas neutralised."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import httpx
import pytest

from portico.marketplace.event import export
from portico.marketplace.event.repository import EventRepository
from portico.marketplace.event.schemas import EventRead
from tests.marketplace.conftest import SiteAccount, url
from tests.marketplace.events.conftest import EventWriter, at


def rows_of(response: httpx.Response) -> list[list[str]]:
    return list(csv.reader(io.StringIO(response.text, newline="")))


async def test_ndjson_is_the_listing_one_event_per_line(
    client: httpx.AsyncClient, site_admin: SiteAccount, write: EventWriter
) -> None:
    for index in range(3):
        await write(
            "user.approve",
            occurred_at=at(f"2025-03-0{index + 1}T12:00:00Z"),
            before={"status": "pending"},
            after={"status": "active", "n": index},
        )
    await write("user.block", occurred_at=at("2025-02-01T12:00:00Z"))  # no before/after
    response = await client.get(url("/events/export"), headers=site_admin.headers)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/x-ndjson"
    disposition = response.headers["content-disposition"]
    assert disposition.startswith('attachment; filename="events-')
    assert disposition.endswith('.ndjson"')
    assert response.headers["cache-control"] == "no-store"
    assert response.text.endswith("\n")
    lines = [json.loads(line) for line in response.text.splitlines()]
    listed = (await client.get(url("/events"), headers=site_admin.headers)).json()["data"]
    assert lines == listed  # same shape, same order (newest first)
    assert all(list(line) == list(EventRead.model_fields) for line in lines)
    assert [e["after"]["n"] for e in lines[:3]] == [2, 1, 0]
    assert lines[3]["before"] is None and lines[3]["after"] is None


async def test_csv_has_a_header_and_round_trips_awkward_text(
    client: httpx.AsyncClient, site_admin: SiteAccount, write: EventWriter
) -> None:
    awkward = 'Renamed "Acme, Inc."\nto\r\nAcme; said "hi"'
    await write(
        "node.update",
        entity_type="node",
        bundle="apis",
        summary=awkward,
        before={"title": 'Old, "quoted"'},
        after={"title": "=cmd|' /C calc'!A0"},
        occurred_at=at("2025-03-02T00:00:00Z"),
    )
    await write(
        "user.block", summary='=HYPERLINK("http://evil")', occurred_at=at("2025-03-01T00:00:00Z")
    )
    response = await client.get(url("/events/export?format=csv"), headers=site_admin.headers)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "text/csv; charset=utf-8"
    assert response.headers["content-disposition"].endswith('.csv"')
    header, first, second = rows_of(response)
    assert tuple(header) == export.CSV_COLUMNS
    record = dict(zip(header, first, strict=True))
    assert record["summary"] == awkward
    assert record["bundle"] == "apis" and record["operation"] == "node.update"
    assert json.loads(record["before"]) == {"title": 'Old, "quoted"'}
    # JSON text that begins with '{' is left alone; the formula is inside it, harmless
    assert json.loads(record["after"]) == {"title": "=cmd|' /C calc'!A0"}
    assert record["actor_email"] == "Ops@Example.com"
    blocked = dict(zip(header, second, strict=True))
    assert blocked["summary"] == '\'=HYPERLINK("http://evil")'
    assert blocked["before"] == blocked["after"] == blocked["bundle"] == ""


@pytest.mark.parametrize("lead", ["=", "+", "-", "@", "\t", "\r"])
async def test_every_formula_lead_is_neutralised(
    client: httpx.AsyncClient, site_admin: SiteAccount, write: EventWriter, lead: str
) -> None:
    await write(f"{lead}op", summary=f"{lead}1+1", entity_type=f"{lead}type")
    response = await client.get(url("/events/export?format=csv"), headers=site_admin.headers)
    record = dict(zip(*rows_of(response), strict=True))
    assert record["summary"] == f"'{lead}1+1"
    assert record["operation"] == f"'{lead}op"
    assert record["entity_type"] == f"'{lead}type"


async def test_an_unknown_format_is_refused_before_anything_streams(
    client: httpx.AsyncClient, site_admin: SiteAccount
) -> None:
    response = await client.get(url("/events/export?format=xlsx"), headers=site_admin.headers)
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"parameter": "format", "detail": "format: must be one of csv, ndjson"}
    ]
    assert "content-disposition" not in response.headers


async def test_empty_exports(client: httpx.AsyncClient, site_admin: SiteAccount) -> None:
    ndjson = await client.get(url("/events/export?format=ndjson"), headers=site_admin.headers)
    assert ndjson.status_code == 200 and ndjson.content == b""
    table = await client.get(url("/events/export?format=csv"), headers=site_admin.headers)
    assert rows_of(table) == [list(export.CSV_COLUMNS)]


async def test_a_large_export_spans_chunks_in_order_without_duplicates(
    client: httpx.AsyncClient,
    site_admin: SiteAccount,
    write: EventWriter,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 5,000 events over 700 distinct instants: runs of equal timestamps straddle chunk
    # boundaries, so the keyset must continue by id within one instant
    start = at("2025-01-01T00:00:00Z")
    await write.bulk(
        {
            "occurred_at": start + timedelta(seconds=n % 700),
            "action": "user.block" if n % 3 else "user.approve",
            "summary": str(n),
        }
        for n in range(5000)
    )
    await write("environment.create", surface="management")
    chunk = EventRepository.chunk
    calls: list[int] = []

    async def counted(self: EventRepository, *args: Any, **kwargs: Any) -> Sequence[Any]:
        rows = await chunk(self, *args, **kwargs)
        calls.append(len(rows))
        return rows

    monkeypatch.setattr(export, "CHUNK_SIZE", 97)
    monkeypatch.setattr(EventRepository, "chunk", counted)
    response = await client.get(url("/events/export"), headers=site_admin.headers)
    assert response.status_code == 200
    events = [json.loads(line) for line in response.text.splitlines()]
    assert len(events) == 5000
    assert len({e["id"] for e in events}) == 5000
    keys = [(e["occurred_at"], e["id"]) for e in events]
    assert keys == sorted(keys, reverse=True)
    assert calls == [97] * 51 + [53]  # 5,000 = 51 × 97 + 53: the short chunk ends it

    calls.clear()
    filtered = await client.get(
        url("/events/export?format=csv&filter[operation]=user.approve"), headers=site_admin.headers
    )
    records = rows_of(filtered)[1:]
    assert len(records) == len({r[0] for r in records}) == 1667
    assert {r[2] for r in records} == {"user.approve"}


async def test_an_exact_multiple_of_the_chunk_size_ends_with_an_empty_read(
    client: httpx.AsyncClient,
    site_admin: SiteAccount,
    write: EventWriter,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    same = at("2025-01-01T00:00:00Z")
    await write.bulk({"occurred_at": same} for _ in range(20))
    monkeypatch.setattr(export, "CHUNK_SIZE", 5)
    response = await client.get(url("/events/export"), headers=site_admin.headers)
    assert len({json.loads(line)["id"] for line in response.text.splitlines()}) == 20


async def test_export_filters_apply(
    client: httpx.AsyncClient, site_admin: SiteAccount, write: EventWriter
) -> None:
    kept = await write("user.approve", occurred_at=at("2025-03-02T00:00:00Z"))
    await write("user.approve", occurred_at=at("2025-03-01T00:00:00Z"))
    await write("user.block", occurred_at=at("2025-03-03T00:00:00Z"))
    response = await client.get(
        url("/events/export?filter[operation]=user.approve&filter[from]=2025-03-02T00:00:00Z"),
        headers=site_admin.headers,
    )
    assert [json.loads(line)["id"] for line in response.text.splitlines()] == [str(kept)]


@pytest.mark.parametrize(
    ("query", "parameter"),
    [
        ("format=xlsx", "format"),
        ("format=", "format"),
        ("format=csv&format=ndjson", "format"),
        ("page=2", "page"),
        ("limit=10", "limit"),
        ("sort=occurred_at", "sort"),
        ("filter[from]=soon", "filter[from]"),
        ("filter[colour]=red", "filter[colour]"),
        ("fields=id", "fields"),
    ],
)
async def test_bad_export_queries_are_400(
    client: httpx.AsyncClient, site_admin: SiteAccount, query: str, parameter: str
) -> None:
    response = await client.get(url(f"/events/export?{query}"), headers=site_admin.headers)
    assert response.status_code == 400, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert parameter in [e["parameter"] for e in response.json()["errors"]]
